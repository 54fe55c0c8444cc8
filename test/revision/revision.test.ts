// Revisions (DESIGN §4): what their data is, and that their hashes and names are stable
// across key order, defaulting, processes and machines, and always valid Kubernetes names.
import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isDns1123Subdomain, isLabelValue } from "../../src/api/names.ts";
import { defaultPodDecoration, type PodDecoration } from "../../src/api/poddecoration.ts";
import { canonicalJson } from "../../src/revision/canonical-json.ts";
import { buildControllerRevision, POD_DECORATION_NAME_LABEL, REVISION_HASH_LABEL } from "../../src/revision/controller-revision.ts";
import { HASH_LENGTH, hashRevisionData, SAFE_ALPHABET } from "../../src/revision/hash.ts";
import { boundedLabelValue, revisionName } from "../../src/revision/name.ts";
import { revisionData, specRevision } from "../../src/revision/revision-data.ts";

const decoration = (): PodDecoration => ({
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "PodDecoration",
  metadata: { name: "logging", namespace: "shop", uid: "0000-1111" },
  spec: {
    selector: { matchLabels: { app: "web" } },
    weight: 3,
    template: {
      metadata: [{ labels: { shipped: "true" } }],
      containers: [{ name: "shipper", image: "cr.fluentbit.io/fluent/fluent-bit:3.2.2", env: [{ name: "A", value: "1" }] }],
    },
  },
});

describe("canonicalJson", () => {
  it("sorts keys at every level and drops undefined properties", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[{"y":2,"z":1}]},"b":1}');
  });

  it("refuses what plain JSON cannot carry", () => {
    expect(() => canonicalJson({ at: new Date(0) })).toThrow(/only plain JSON.*Date/);
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(/no JSON representation/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/function/);
  });
});

describe("revisionData", () => {
  it("is the template and the resolved inject strategy, nothing else", () => {
    const data = revisionData(decoration());
    expect(Object.keys(data).sort()).toEqual(["injectStrategy", "template"]);
    expect(data.injectStrategy).toEqual({ group: "", weight: 3 });
    expect(data.template.containers?.[0]?.injectPolicy).toBe("BeforePrimaryContainer");
  });

  it("hashes a defaulted and an undefaulted manifest the same", () => {
    expect(specRevision(defaultPodDecoration(decoration()))).toEqual(specRevision(decoration()));
  });

  it("treats spec.weight and injectStrategy.weight alike", () => {
    const alias = decoration();
    const explicit = decoration();
    delete explicit.spec.weight;
    explicit.spec.injectStrategy = { weight: 3 };
    expect(specRevision(alias).hash).toBe(specRevision(explicit).hash);
  });

  it("ignores the selector, update strategy and history limit, but not the template", () => {
    const base = specRevision(decoration()).hash;
    const other = decoration();
    other.spec.selector = { matchLabels: { app: "api" } };
    other.spec.updateStrategy = { rollingUpdate: { partition: 2 } };
    other.spec.historyLimit = 4;
    expect(specRevision(other).hash).toBe(base);
    other.spec.template!.containers![0]!.image = "cr.fluentbit.io/fluent/fluent-bit:3.2.3";
    expect(specRevision(other).hash).not.toBe(base);
  });
});

describe("hashRevisionData", () => {
  it("uses only the safe alphabet, at a fixed length", () => {
    fc.assert(fc.property(fc.jsonValue(), (data) => {
      const hash = hashRevisionData(data);
      expect(hash).toHaveLength(HASH_LENGTH);
      expect([...hash].every((character) => SAFE_ALPHABET.includes(character))).toBe(true);
    }));
  });

  it("does not depend on key order", () => {
    expect(hashRevisionData({ a: 1, b: { c: 2, d: 3 } })).toBe(hashRevisionData({ b: { d: 3, c: 2 }, a: 1 }));
    expect(hashRevisionData({ a: [1, 2] })).not.toBe(hashRevisionData({ a: [2, 1] }));
  });

  it("changes with the collision count", () => {
    const data = revisionData(decoration());
    expect(hashRevisionData(data, 1)).not.toBe(hashRevisionData(data, 0));
    expect(hashRevisionData(data, 0)).toBe(hashRevisionData(data));
  });

  it("is the same in another process, whatever the key order, time zone or locale", () => {
    const data = revisionData(decoration());
    const reordered = JSON.stringify(reverseKeys(data));
    const script = `import { hashRevisionData } from "./src/revision/hash.ts"; process.stdout.write(hashRevisionData(JSON.parse(process.argv[1])));`;
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script, reordered], {
      cwd: new URL("../../", import.meta.url),
      encoding: "utf8",
      env: { ...process.env, TZ: "Pacific/Chatham", LANG: "tr_TR.UTF-8" },
    });
    expect(output).toBe(hashRevisionData(data));
  });
});

function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([key, child]) => [key, reverseKeys(child)]));
}

describe("names", () => {
  it("are <owner>-<hash>, at most 63 characters, valid as object names and label values", () => {
    expect(revisionName("logging", "bcdfghjklm")).toBe("logging-bcdfghjklm");
    fc.assert(fc.property(fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/).filter(isDns1123Subdomain), (owner) => {
      const name = revisionName(owner, hashRevisionData(owner));
      expect(name.length).toBeLessThanOrEqual(63);
      expect(isDns1123Subdomain(name), name).toBe(true);
      expect(isLabelValue(name), name).toBe(true);
    }), { numRuns: 500 });
  });

  it("bounds label values, keeping distinct long values distinct", () => {
    expect(boundedLabelValue("short")).toBe("short");
    const long = "n".repeat(100);
    expect(boundedLabelValue(long)).toHaveLength(63);
    expect(isLabelValue(boundedLabelValue(long))).toBe(true);
    expect(boundedLabelValue(`${long}a`)).not.toBe(boundedLabelValue(`${long}b`));
  });
});

describe("ControllerRevision", () => {
  it("is named, labelled and owned for the garbage collector", () => {
    const pd = decoration();
    const revision = specRevision(pd);
    const object = buildControllerRevision({
      owner: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", name: "logging", namespace: "shop", uid: "0000-1111" },
      ownerLabelKey: POD_DECORATION_NAME_LABEL,
      data: revision.data,
      hash: revision.hash,
      revision: 4,
    });
    expect(object).toEqual({
      apiVersion: "apps/v1",
      kind: "ControllerRevision",
      metadata: {
        name: revision.name,
        namespace: "shop",
        labels: { [POD_DECORATION_NAME_LABEL]: "logging", [REVISION_HASH_LABEL]: revision.hash },
        ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", name: "logging", uid: "0000-1111", controller: true, blockOwnerDeletion: true }],
      },
      data: revision.data,
      revision: 4,
    });
  });

  it("labels owners whose names are too long for a label value with a bounded value", () => {
    const name = `${"a".repeat(63)}.${"b".repeat(63)}`;
    const object = buildControllerRevision({ owner: { apiVersion: "v", kind: "K", name, namespace: "n", uid: "u" }, ownerLabelKey: POD_DECORATION_NAME_LABEL, data: {}, hash: "bcdfghjklm", revision: 1 });
    expect(isLabelValue(object.metadata?.labels?.[POD_DECORATION_NAME_LABEL] ?? "")).toBe(true);
    expect(object.metadata?.name?.length).toBeLessThanOrEqual(63);
  });
});
