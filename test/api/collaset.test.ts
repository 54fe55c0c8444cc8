// CollaSet defaulting and structural validation (DESIGN §6).
import { describe, expect, it } from "vitest";
import { type CollaSet, defaultCollaSet, validateCollaSet } from "../../src/api/collaset.ts";

function collaSet(change: (cls: CollaSet) => void = () => undefined): CollaSet {
  const cls: CollaSet = {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "CollaSet",
    metadata: { name: "demo", namespace: "shop" },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: "demo" } },
      template: {
        metadata: { labels: { app: "demo", tier: "web" } },
        spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] },
      },
    },
  };
  change(cls);
  return cls;
}

describe("defaultCollaSet", () => {
  it("fills the update strategy and history defaults, and leaves its input alone", () => {
    const input = collaSet();
    const before = structuredClone(input);
    const defaulted = defaultCollaSet(input);
    expect(input).toEqual(before);
    expect(defaulted.spec.updateStrategy).toEqual({ rollingUpdate: { maxUnavailable: 1 }, podUpgradePolicy: "InPlaceIfPossible" });
    expect(defaulted.spec.historyLimit).toBe(20);
    expect(defaulted.spec.replicas).toBe(3);
    expect(defaultCollaSet(defaulted)).toEqual(defaulted);
  });

  it("keeps what is set", () => {
    const defaulted = defaultCollaSet(collaSet((cls) => {
      cls.spec.updateStrategy = { podUpgradePolicy: "Recreate", rollingUpdate: { maxUnavailable: "25%", byPartition: { partition: 2 } } };
    }));
    expect(defaulted.spec.updateStrategy).toEqual({ podUpgradePolicy: "Recreate", rollingUpdate: { maxUnavailable: "25%", byPartition: { partition: 2 } } });
  });
});

describe("validateCollaSet", () => {
  it("accepts a valid CollaSet before and after defaulting", () => {
    expect(validateCollaSet(collaSet())).toEqual([]);
    expect(validateCollaSet(defaultCollaSet(collaSet()))).toEqual([]);
  });

  it("accepts KusionStack's fields unchanged", () => {
    expect(validateCollaSet(collaSet((cls) => {
      cls.spec.paused = false;
      cls.spec.scaleStrategy = { context: "pool", podToDelete: ["demo-abc"], persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete", whenScaled: "Retain" } };
      cls.spec.updateStrategy = { rollingUpdate: { byPartition: { partition: 0 }, byLabel: {} }, operationDelaySeconds: 5 };
      cls.spec.volumeClaimTemplates = [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"] } }];
    }))).toEqual([]);
  });

  it.each<[string, (cls: CollaSet) => void, string[]]>([
    ["negative replicas", (cls) => void (cls.spec.replicas = -1), ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]],
    ["a selector that misses the template", (cls) => void (cls.spec.selector = { matchLabels: { app: "other" } }), ["spec.template.metadata.labels: Invalid value: {\"app\":\"demo\",\"tier\":\"web\"}: `selector` does not match template `labels`"]],
    ["an empty selector", (cls) => void (cls.spec.selector = {}), ["spec.selector: Invalid value: {}: empty selector is invalid: it would select every pod in the namespace"]],
    ["an invalid selector", (cls) => void (cls.spec.selector = { matchExpressions: [{ key: "app", operator: "In" }] }), ["spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"]],
    ["a missing selector", (cls) => void delete (cls.spec as Partial<CollaSet["spec"]>).selector, ["spec.selector: Required value"]],
    ["a negative partition", (cls) => void (cls.spec.updateStrategy = { rollingUpdate: { byPartition: { partition: -2 } } }), ["spec.updateStrategy.rollingUpdate.byPartition.partition: Invalid value: -2: must be greater than or equal to 0"]],
    ["an unknown podUpgradePolicy", (cls) => void (cls.spec.updateStrategy = { podUpgradePolicy: "Rolling" as "Recreate" }), ["spec.updateStrategy.podUpgradePolicy: Unsupported value: \"Rolling\": supported values: \"Recreate\", \"InPlaceIfPossible\", \"InPlaceOnly\", \"ReCreate\", \"Replace\""]],
    ["maxUnavailable 0", (cls) => void (cls.spec.updateStrategy = { rollingUpdate: { maxUnavailable: 0 } }), ["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: must be greater than or equal to 1"]],
    ["maxUnavailable not a percentage", (cls) => void (cls.spec.updateStrategy = { rollingUpdate: { maxUnavailable: "half" } }), ["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"half\": a string must be a percentage like '25%'"]],
    ["maxUnavailable above 100%", (cls) => void (cls.spec.updateStrategy = { rollingUpdate: { maxUnavailable: "150%" } }), ["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": must be between 1% and 100%"]],
    ["maxUnavailable of another type", (cls) => void (cls.spec.updateStrategy = { rollingUpdate: { maxUnavailable: 1.5 } }), ["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 1.5: must be an integer or a string"]],
    ["a negative historyLimit", (cls) => void (cls.spec.historyLimit = -1), ["spec.historyLimit: Invalid value: -1: must be greater than or equal to 0"]],
    ["a claim template without a name", (cls) => void (cls.spec.volumeClaimTemplates = [{ spec: {} }]), ["spec.volumeClaimTemplates[0].metadata.name: Required value"]],
    ["a claim template name that is no DNS label", (cls) => void (cls.spec.volumeClaimTemplates = [{ metadata: { name: "Data_1" } }]), ["spec.volumeClaimTemplates[0].metadata.name: Invalid value: \"Data_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"]],
    ["two claim templates of one name", (cls) => void (cls.spec.volumeClaimTemplates = [{ metadata: { name: "data" } }, { metadata: { name: "data" } }]), ["spec.volumeClaimTemplates[1].metadata.name: Duplicate value: \"data\""]],
    ["a template without containers", (cls) => void (cls.spec.template.spec = { containers: [] }), ["spec.template.spec.containers: Required value: a pod needs at least one container"]],
    ["duplicate container names", (cls) => void cls.spec.template.spec?.containers.push({ name: "app", image: "x" }), ["spec.template.spec.containers[1].name: Duplicate value: \"app\""]],
    ["an invalid template label", (cls) => void (cls.spec.template.metadata = { labels: { app: "demo", "bad key!": "x" } }), [
      "spec.template.metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    ]],
    ["no name", (cls) => void (cls.metadata = {}), ["metadata.name: Required value: name or generateName is required"]],
    ["the wrong kind", (cls) => void (cls.kind = "Deployment"), ["kind: Unsupported value: \"Deployment\": supported values: \"CollaSet\""]],
  ])("rejects %s", (_what, change, expected) => {
    expect(validateCollaSet(collaSet(change)).map((error) => `${error.path}: ${error.reason}`)).toEqual(expected);
  });
});
