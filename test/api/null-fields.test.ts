// `null` read the way the API server reads it: an optional field set to null is absent, for
// our own kinds (CRD pruning) and for pods (Go decoding, where a null map value is "").
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CollaSet, defaultCollaSet, validateCollaSet } from "../../src/api/collaset.ts";
import { cloneJson } from "../../src/api/json.ts";
import { podWithoutNullFields, withoutNullFields } from "../../src/api/null-fields.ts";
import { defaultPodDecoration, type PodDecoration, validatePodDecoration } from "../../src/api/poddecoration.ts";
import { specRevision } from "../../src/revision/revision-data.ts";

describe("withoutNullFields", () => {
  it("drops null properties at any depth and keeps null list items", () => {
    expect(withoutNullFields({ a: null, b: { c: null, d: 1 }, e: [null, { f: null, g: "x" }] })).toEqual({ b: { d: 1 }, e: [null, { g: "x" }] });
  });

  it("drops a null map entry, as the API server prunes one under additionalProperties", () => {
    expect(withoutNullFields({ matchLabels: { app: "web", track: null } })).toEqual({ matchLabels: { app: "web" } });
  });

  it("copies like cloneJson when there is no null, and leaves its input alone", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const before = structuredClone(value);
      const pruned = withoutNullFields(value);
      expect(value).toEqual(before);
      expect(JSON.stringify(pruned)).not.toMatch(/"[^"]*":null/);
      if (!JSON.stringify(value).includes("null")) expect(pruned).toEqual(cloneJson(value));
    }));
  });

  it("keeps a parsed \"__proto__\" key as data", () => {
    const pruned = withoutNullFields(JSON.parse('{"__proto__":{"polluted":true,"gone":null}}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(pruned)).toBe(Object.prototype);
    expect(Object.keys(pruned)).toEqual(["__proto__"]);
  });
});

describe("podWithoutNullFields", () => {
  it("is the pod itself when nothing in it is null, and shares every part without a null otherwise", () => {
    const pod = { metadata: { name: "p", creationTimestamp: null, labels: { app: "web" } }, spec: { containers: [{ name: "app" }] } };
    expect(podWithoutNullFields(pod.spec)).toBe(pod.spec);
    const read = podWithoutNullFields(pod);
    expect(read).toEqual({ metadata: { name: "p", labels: { app: "web" } }, spec: { containers: [{ name: "app" }] } });
    expect(read.spec).toBe(pod.spec);
    expect(read.metadata.labels).toBe(pod.metadata.labels);
    expect(pod.metadata.creationTimestamp).toBeNull();
  });

  it("reads like withoutNullFields would copy, and leaves its input alone", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      // Under status: no string maps there, whose null values a pod reads as "".
      const pod = { status: value };
      const before = structuredClone(pod);
      const read = podWithoutNullFields(pod);
      expect(pod).toEqual(before);
      expect(JSON.stringify(read)).toBe(JSON.stringify(withoutNullFields(pod)));
    }));
  });

  it("reads a null label, annotation or nodeSelector value as the empty string, as Go decodes it", () => {
    const pod = { metadata: { labels: { app: null }, annotations: { note: null } }, spec: { nodeSelector: { zone: null }, containers: [] } };
    expect(podWithoutNullFields(pod)).toEqual({ metadata: { labels: { app: "" }, annotations: { note: "" } }, spec: { nodeSelector: { zone: "" }, containers: [] } });
  });

  it("drops null fields elsewhere, label maps deeper in the pod included", () => {
    const pod = {
      metadata: { name: "p", labels: null, finalizers: null },
      spec: {
        containers: [{ name: "app", env: null, resources: null }],
        affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { a: null } }, topologyKey: "k" }] } },
        tolerations: null,
      },
    };
    expect(podWithoutNullFields(pod)).toEqual({
      metadata: { name: "p" },
      spec: {
        containers: [{ name: "app" }],
        affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: {} }, topologyKey: "k" }] } },
      },
    });
  });
});

const decorationWithNulls = (): Record<string, unknown> => ({
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "PodDecoration",
  metadata: { name: "sidecar", namespace: "shop", labels: null, annotations: null },
  spec: {
    selector: { matchLabels: { app: "web", gone: null }, matchExpressions: null },
    injectStrategy: null,
    weight: null,
    updateStrategy: { rollingUpdate: null },
    historyLimit: null,
    disablePodDetail: null,
    template: {
      metadata: [{ patchPolicy: null, labels: { team: "sre" }, annotations: null }],
      initContainers: null,
      primaryContainers: [{ targetPolicy: "All", name: null, image: null, env: [{ name: "A", value: "1", valueFrom: null }], volumeMounts: null }],
      containers: [{ name: "log", image: "registry.k8s.io/pause:3.10", injectPolicy: null, env: null, resources: null, securityContext: null }],
      volumes: null,
      affinity: { overrideAffinity: null, nodeSelectorTerms: null },
      tolerations: [{ key: "dedicated", operator: "Exists", value: null, effect: null, tolerationSeconds: null }],
      runtimeClassName: null,
    },
  },
});

const decorationWithoutNulls = (): PodDecoration => ({
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "PodDecoration",
  metadata: { name: "sidecar", namespace: "shop" },
  spec: {
    selector: { matchLabels: { app: "web" } },
    updateStrategy: {},
    template: {
      metadata: [{ labels: { team: "sre" } }],
      primaryContainers: [{ targetPolicy: "All", env: [{ name: "A", value: "1" }] }],
      containers: [{ name: "log", image: "registry.k8s.io/pause:3.10" }],
      affinity: {},
      tolerations: [{ key: "dedicated", operator: "Exists" }],
    },
  },
});

describe("a PodDecoration with null fields", () => {
  it("is valid: every null is an absent optional field", () => {
    expect(validatePodDecoration(decorationWithNulls())).toEqual([]);
  });

  it("defaults to the decoration written without them", () => {
    expect(defaultPodDecoration(decorationWithNulls() as PodDecoration)).toEqual(defaultPodDecoration(decorationWithoutNulls()));
  });

  it("is the same revision as the decoration written without them", () => {
    expect(specRevision(decorationWithNulls() as PodDecoration).name).toBe(specRevision(decorationWithoutNulls()).name);
  });

  it("still reports a required field given as null as missing", () => {
    const pd = decorationWithNulls();
    (pd.spec as Record<string, unknown>).template = { containers: [{ name: "log", image: null }] };
    expect(validatePodDecoration(pd)).toEqual([{ path: "spec.template.containers[0].image", reason: "Required value" }]);
  });
});

describe("a CollaSet with null fields", () => {
  const collaSet = (): Record<string, unknown> => ({
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "CollaSet",
    metadata: { name: "web", namespace: "shop", annotations: null },
    spec: {
      replicas: null,
      paused: null,
      selector: { matchLabels: { app: "web" }, matchExpressions: null },
      template: { metadata: { labels: { app: "web" }, annotations: null }, spec: { containers: [{ name: "app", image: "nginx:1.27", env: null }], volumes: null } },
      updateStrategy: { rollingUpdate: { byPartition: null, maxUnavailable: null }, podUpgradePolicy: null },
      scaleStrategy: { podToDelete: null },
      namingStrategy: null,
      historyLimit: null,
    },
  });

  it("is valid, and defaults as if the nulls were absent", () => {
    expect(validateCollaSet(collaSet())).toEqual([]);
    const defaulted = defaultCollaSet(collaSet() as CollaSet);
    expect(defaulted.spec.replicas).toBe(0);
    expect(defaulted.spec.historyLimit).toBe(20);
    expect(defaulted.spec.updateStrategy?.podUpgradePolicy).toBe("InPlaceIfPossible");
    expect(defaulted.spec.updateStrategy?.rollingUpdate?.maxUnavailable).toBe(1);
    expect(JSON.stringify(defaulted)).not.toContain("null");
  });
});
