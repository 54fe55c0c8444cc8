// kuperator's claim template hash, computed here as its Go code computes it. The expected values
// were printed by a Go program running kube-xset's PvcTmpHash steps (json.Marshal of a
// k8s.io/api v0.22.6 PersistentVolumeClaim, hash/fnv New32, rand.SafeEncodeString) on the same
// templates.
import { describe, expect, it } from "vitest";
import { canonicalQuantity } from "../../src/api/quantity-canonical.ts";
import { claimTemplateHash } from "../../src/revision/claim-template-hash.ts";
import { collaSetRevisionData, isPlaceholderClaimName, templateOf } from "../../src/revision/collaset-revision-data.ts";
import type { CollaSet } from "../../src/api/collaset.ts";

describe("claimTemplateHash", () => {
  it.each<[string, unknown, string]>([
    ["a template as kuperator's e2e suite writes it", { metadata: { name: "pvc-test" }, spec: { storageClassName: "standard", volumeMode: "Filesystem", accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "100m" } } } }, "66889457d7"],
    ["labels in any order and a quantity Go prints otherwise (1024Mi is 1Gi)", { metadata: { name: "data", labels: { b: "1", a: "2" } }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1024Mi" } } } }, "794f8bc95b"],
    [
      "a selector, a data source without apiGroup, an empty storage class, HTML in an annotation, a field v0.22 lacks",
      { metadata: { name: "www", annotations: { note: "a<b & c>d" }, labels: { app: "x" } }, spec: { selector: { matchLabels: { z: "1", a: "2" }, matchExpressions: [{ key: "k", operator: "In", values: ["v"] }] }, accessModes: ["ReadWriteOnce", "ReadOnlyMany"], storageClassName: "", resources: { limits: { storage: "2048Mi" }, requests: { storage: "0.5Gi" } }, dataSource: { kind: "VolumeSnapshot", name: "snap" }, volumeAttributesClassName: "ignored" } },
      "79bd9cbcd",
    ],
    ["kind and apiVersion, decimal and exponent quantities", { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "q" }, spec: { resources: { requests: { storage: "1500", cpu: "1e3", memory: "1025Ki" } } } }, "6755766587"],
  ])("matches Go for %s", (_what, template, hash) => {
    expect(claimTemplateHash(template)).toBe(hash);
  });

  it("changes with the template", () => {
    const template = (storage: string) => ({ metadata: { name: "data" }, spec: { resources: { requests: { storage } } } });
    expect(claimTemplateHash(template("1Gi"))).not.toBe(claimTemplateHash(template("2Gi")));
    expect(claimTemplateHash(template("1Gi"))).toBe(claimTemplateHash(template("1024Mi")));
  });
});

describe("canonicalQuantity", () => {
  it.each([["100m", "100m"], ["1024Mi", "1Gi"], ["1536Mi", "1536Mi"], ["0.5Gi", "512Mi"], ["1500", "1500"], ["1e3", "1e3"], ["5G", "5G"], ["1025Ki", "1025Ki"], ["0.1", "100m"], ["2000k", "2M"], ["0Gi", "0"], ["-1Gi", "-1Gi"]])("writes %s as %s", (text, canonical) => {
    expect(canonicalQuantity(text)).toBe(canonical);
  });

  it("is undefined for what is not a quantity", () => {
    expect(canonicalQuantity("lots")).toBeUndefined();
  });
});

describe("CollaSet revision data with claim templates", () => {
  const cls = (claims?: Record<string, unknown>[]): CollaSet => ({
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "CollaSet",
    metadata: { name: "web" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "x" }], volumes: [{ name: "data", emptyDir: {} }, { name: "cache", emptyDir: {} }] } },
      ...(claims === undefined ? {} : { volumeClaimTemplates: claims }),
    },
  });

  it("is what it was for a CollaSet without claim templates, so its revision names stay", () => {
    expect(collaSetRevisionData(cls())).toEqual({ template: cls().spec.template });
    expect(collaSetRevisionData(cls([]))).toEqual({ template: cls().spec.template });
  });

  it("renders each claim template as a volume in front, replacing a volume of its name, with a placeholder claim that names its hash", () => {
    const claim = { metadata: { name: "data" }, spec: { resources: { requests: { storage: "1Gi" } } } };
    const volumes = templateOf(collaSetRevisionData(cls([claim])))?.spec?.volumes ?? [];
    expect(volumes.map((volume) => volume.name)).toEqual(["data", "cache"]);
    const claimName = (volumes[0] as { persistentVolumeClaim?: { claimName?: string } }).persistentVolumeClaim?.claimName;
    expect(isPlaceholderClaimName(claimName)).toBe(true);
    expect(claimName).toContain(claimTemplateHash(claim));
    const changed = templateOf(collaSetRevisionData(cls([{ ...claim, spec: { resources: { requests: { storage: "2Gi" } } } }])))?.spec?.volumes ?? [];
    expect(changed[0]).not.toEqual(volumes[0]);
  });
});
