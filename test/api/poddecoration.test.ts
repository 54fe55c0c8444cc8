// Defaulting and the parts of PodDecoration validation the golden cases do not reach:
// purity, tolerance of arbitrary input, and the KusionStack weight alias.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatFieldError } from "../../src/api/field-errors.ts";
import { decorationGroup, decorationWeight, defaultPodDecoration, historyLimitOf, type PodDecoration, primaryTargetPolicy, validatePodDecoration } from "../../src/api/poddecoration.ts";

const minimal = (): PodDecoration => ({
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "PodDecoration",
  metadata: { name: "sidecar", namespace: "shop" },
  spec: {
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: [{ labels: { a: "b" } }],
      primaryContainers: [{ name: "app", image: "example.com/app:2" }],
      containers: [{ name: "log", image: "registry.k8s.io/pause:3.10" }],
    },
  },
});

describe("defaultPodDecoration", () => {
  it("fills the schema defaults", () => {
    const defaulted = defaultPodDecoration(minimal());
    expect(defaulted.spec.historyLimit).toBe(20);
    expect(defaulted.spec.template?.metadata?.[0]?.patchPolicy).toBe("Retain");
    expect(defaulted.spec.template?.primaryContainers?.[0]?.targetPolicy).toBe("ByName");
    expect(defaulted.spec.template?.containers?.[0]?.injectPolicy).toBe("BeforePrimaryContainer");
  });

  it("keeps values that are set, and is idempotent", () => {
    const pd = minimal();
    pd.spec.historyLimit = 3;
    pd.spec.template!.containers![0]!.injectPolicy = "AfterPrimaryContainer";
    const once = defaultPodDecoration(pd);
    expect(once.spec.historyLimit).toBe(3);
    expect(once.spec.template?.containers?.[0]?.injectPolicy).toBe("AfterPrimaryContainer");
    expect(defaultPodDecoration(once)).toEqual(once);
  });

  it("returns a new object and leaves its (frozen) input alone", () => {
    const pd = minimal();
    const before = structuredClone(pd);
    const frozen = deepFreeze(pd);
    const defaulted = defaultPodDecoration(frozen);
    expect(pd).toEqual(before);
    expect(defaulted).not.toBe(pd);
    defaulted.spec.selector!.matchLabels = {};
    expect(pd.spec.selector!.matchLabels).toEqual({ app: "web" });
  });

  it("does not materialise injectStrategy.weight, so KusionStack's spec.weight keeps counting", () => {
    const pd = minimal();
    pd.spec.weight = 7;
    const defaulted = defaultPodDecoration(pd);
    expect(defaulted.spec.injectStrategy).toBeUndefined();
    expect(decorationWeight(defaulted)).toBe(7);
    defaulted.spec.weight = 9;
    expect(decorationWeight(defaulted)).toBe(9);
  });

  it("never throws on arbitrary JSON", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      defaultPodDecoration(value as PodDecoration);
    }));
  });
});

describe("decorationWeight and decorationGroup", () => {
  it.each([
    [{}, 0],
    [{ weight: 4 }, 4],
    [{ injectStrategy: { weight: 2 } }, 2],
    [{ injectStrategy: { weight: 0 }, weight: 4 }, 0],
    [{ injectStrategy: { group: "g" }, weight: -3 }, -3],
  ] as const)("%j weighs %d", (spec, weight) => {
    expect(decorationWeight({ spec: { selector: {}, ...spec } })).toBe(weight);
  });

  it("puts decorations without a group in the empty group", () => {
    expect(decorationGroup({ spec: { selector: {} } })).toBe("");
    expect(decorationGroup({ spec: { selector: {}, injectStrategy: { group: "mesh" } } })).toBe("mesh");
  });
});

describe("validatePodDecoration", () => {
  it("accepts a minimal decoration, before and after defaulting", () => {
    expect(validatePodDecoration(minimal())).toEqual([]);
    expect(validatePodDecoration(defaultPodDecoration(minimal()))).toEqual([]);
  });

  it("accepts a generated name, as admission sees a create with generateName", () => {
    const pd = minimal();
    pd.metadata = { generateName: "sidecar-" };
    expect(validatePodDecoration(pd)).toEqual([]);
  });

  it("never throws on arbitrary JSON, and reports something for non-decorations", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      expect(validatePodDecoration(value).length).toBeGreaterThan(0);
    }));
  });

  it("never throws on a decoration whose fields are arbitrary JSON", () => {
    fc.assert(fc.property(fc.dictionary(fc.constantFrom("selector", "template", "updateStrategy", "injectStrategy", "weight", "historyLimit"), fc.jsonValue()), (spec) => {
      validatePodDecoration({ ...minimal(), spec });
    }));
  });

  it("refuses a template that writes pod-decorator's bookkeeping or the PodOpsLifecycle protocol, naming each key", () => {
    const pd = minimal();
    pd.spec.template!.metadata = [
      { patchPolicy: "Overwrite", labels: { "poddecoration.kusionstack.io/pd-other": "x", "collaset.kusionstack.io/instance-id": "0", team: "a", "example.com/poddecoration.kusionstack.io": "fine" } },
      { annotations: { "poddecoration.kusionstack.io/revisions": "[]", "prepare.podopslifecycle.kusionstack.io/1": "x", "kusionstack.io/control": "true", note: "fine" } },
      { labels: { "controller-revision-hash": "abc", "kusionstack.io/other": "fine" } },
    ];
    const reason = "Forbidden: reserved for pod-decorator's bookkeeping and the PodOpsLifecycle protocol; a decoration may not write it";
    expect(validatePodDecoration(pd).map((error) => formatFieldError("PodDecoration", pd.metadata.name, error))).toEqual([
      `PodDecoration/sidecar: spec.template.metadata[0].labels[poddecoration.kusionstack.io/pd-other]: ${reason}`,
      `PodDecoration/sidecar: spec.template.metadata[0].labels[collaset.kusionstack.io/instance-id]: ${reason}`,
      `PodDecoration/sidecar: spec.template.metadata[1].annotations[poddecoration.kusionstack.io/revisions]: ${reason}`,
      `PodDecoration/sidecar: spec.template.metadata[1].annotations[prepare.podopslifecycle.kusionstack.io/1]: ${reason}`,
      `PodDecoration/sidecar: spec.template.metadata[1].annotations[kusionstack.io/control]: ${reason}`,
      `PodDecoration/sidecar: spec.template.metadata[2].labels[controller-revision-hash]: ${reason}`,
    ]);
  });

  it("formats errors as Kind/name: field.path: reason", () => {
    const pd = minimal();
    pd.spec.historyLimit = -1;
    expect(validatePodDecoration(pd).map((error) => formatFieldError("PodDecoration", pd.metadata.name, error))).toEqual([
      "PodDecoration/sidecar: spec.historyLimit: Invalid value: -1: must be greater than or equal to 0",
    ]);
  });
});

// KusionStack's PodDecoration webhooks (kuperator pkg/webhook/server/generic/poddecoration/):
// what its manifests may leave out or combine, and what that means here (DESIGN §2).
describe("KusionStack's defaults and shapes", () => {
  it.each([
    [undefined, 20],
    [0, 20],
    [1, 1],
    [7, 7],
  ] as const)("historyLimit %s keeps %d revisions, and defaulting writes it", (historyLimit, kept) => {
    const pd = minimal();
    if (historyLimit !== undefined) pd.spec.historyLimit = historyLimit;
    expect(validatePodDecoration(pd)).toEqual([]);
    expect(historyLimitOf(pd)).toBe(kept);
    expect(defaultPodDecoration(pd).spec.historyLimit).toBe(kept);
  });

  it.each([
    [{ name: "app" }, "ByName"],
    [{}, "All"],
    [{ name: "" }, "All"],
    [{ name: "app", targetPolicy: "All" }, "All"],
    [{ targetPolicy: "Last" }, "Last"],
  ] as const)("a primaryContainers entry %j without a policy targets %s, and defaulting writes it", (patch, policy) => {
    expect(primaryTargetPolicy(patch)).toBe(policy);
    const pd = minimal();
    pd.spec.template!.primaryContainers = [{ ...patch, image: "example.com/app:3" }];
    expect(validatePodDecoration(pd)).toEqual([]);
    expect(defaultPodDecoration(pd).spec.template?.primaryContainers?.[0]?.targetPolicy).toBe(policy);
  });

  it("still requires a name with an explicit ByName", () => {
    const pd = minimal();
    pd.spec.template!.primaryContainers = [{ targetPolicy: "ByName", image: "example.com/app:3" }];
    expect(validatePodDecoration(pd)).toEqual([{ path: "spec.template.primaryContainers[0].name", reason: "Required value: required when targetPolicy is ByName" }]);
  });

  it("accepts a decoration without a selector (it selects no pod)", () => {
    const pd = minimal();
    delete pd.spec.selector;
    expect(validatePodDecoration(pd)).toEqual([]);
    expect(defaultPodDecoration(pd).spec.selector).toBeUndefined();
  });

  it("accepts partition together with a rolling-update selector", () => {
    const pd = minimal();
    pd.spec.updateStrategy = { rollingUpdate: { partition: 2, selector: { matchLabels: { canary: "true" } } } };
    expect(validatePodDecoration(pd)).toEqual([]);
  });
});

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
