// Admission warnings: each KusionStack field whose meaning differs here is named when it is
// used (and only then), and each CollaSet field accepted but not acted on is named when set.
import { describe, expect, it } from "vitest";
import type { CollaSet } from "../../src/api/collaset.ts";
import { COLLASET_IGNORED_FIELDS, collaSetWarnings } from "../../src/api/collaset-warnings.ts";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { podDecorationDefaultingWarnings, podDecorationWarnings } from "../../src/api/poddecoration-warnings.ts";

function decoration(spec: Partial<PodDecoration["spec"]>): PodDecoration {
  return { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "pd", namespace: "shop" }, spec: { selector: { matchLabels: { app: "web" } }, ...spec } };
}

const fields = (warnings: readonly string[]) => warnings.map((warning) => warning.slice(0, warning.indexOf(":")));

describe("podDecorationWarnings", () => {
  it("says nothing about a decoration that means the same in KusionStack", () => {
    expect(podDecorationWarnings(decoration({ historyLimit: 20, template: { containers: [{ name: "log", image: "x:1" }], primaryContainers: [{ targetPolicy: "All", image: "x:2" }] } }))).toEqual([]);
  });

  it.each<[string, Partial<PodDecoration["spec"]>, string, RegExp]>([
    ["an unset selector", { selector: undefined }, "spec.selector", /selects no pod.*KusionStack counts every pod/],
    ["partition with a selector", { updateStrategy: { rollingUpdate: { partition: 2, selector: {} } } }, "spec.updateStrategy.rollingUpdate", /holds back 2 of them; KusionStack ignores the partition/],
    ["primary-container mounts", { template: { primaryContainers: [{ targetPolicy: "All", volumeMounts: [{ name: "v", mountPath: "/v" }] }], volumes: [{ name: "v", emptyDir: {} }] } }, "spec.template.primaryContainers[0].volumeMounts", /by mountPath.*KusionStack merges them by volume name/],
    ["a sidecar mount of a volume the pod must provide", { template: { containers: [{ name: "s", image: "x:1", volumeMounts: [{ name: "tls", mountPath: "/tls" }] }] } }, "spec.template.containers[0].volumeMounts[0].name", /volume "tls" is not declared.*each pod must provide it.*onDecorationError/],
    ["an init container's device of a volume the pod must provide", { template: { initContainers: [{ name: "i", image: "x:1", volumeDevices: [{ name: "disk", devicePath: "/dev/x" }] }] } }, "spec.template.initContainers[0].volumeDevices[0].name", /volume "disk" is not declared/],
    ["node selector terms", { template: { affinity: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["n"] }] }] } } }, "spec.template.affinity.nodeSelectorTerms", /ANDed.*KusionStack appends them/],
    ["an override affinity", { template: { affinity: { overrideAffinity: { podAffinity: {} } } } }, "spec.template.affinity.overrideAffinity", /KusionStack replaces the pod's whole affinity/],
    ["tolerations", { template: { tolerations: [{ key: "k", operator: "Exists" }] } }, "spec.template.tolerations", /never replacing one; KusionStack replaces/],
    ["a runtime class", { template: { runtimeClassName: "kata" } }, "spec.template.runtimeClassName", /does not apply it/],
    ["a volume source admission does not check", { template: { volumes: [{ name: "v", iscsi: { iqn: "iqn.2001-04.com.example:storage" } }] } }, "spec.template.volumes[0].iscsi", /not checked at admission; the controller's server-side dry run reports in TemplateValid/],
  ])("names %s", (_what, spec, field, message) => {
    const warnings = podDecorationWarnings(decoration(spec));
    expect(fields(warnings)).toEqual([field]);
    expect(warnings[0]).toMatch(message);
  });

  it("reads null fields as absent", () => {
    const pd = decoration({ template: { tolerations: null, runtimeClassName: null } as unknown as PodDecoration["spec"]["template"] });
    expect(podDecorationWarnings(pd)).toEqual([]);
  });
});

describe("podDecorationDefaultingWarnings", () => {
  it("names a primaryContainers entry whose unset targetPolicy becomes ByName (KusionStack: All)", () => {
    const pd = decoration({ template: { primaryContainers: [{ name: "app", image: "x:2" }, { image: "x:3" }, { name: "app", targetPolicy: "ByName" }] } });
    const warnings = podDecorationDefaultingWarnings(pd);
    expect(fields(warnings)).toEqual(["spec.template.primaryContainers[0].targetPolicy"]);
    expect(warnings[0]).toMatch(/name is "app", so only that container is patched \(ByName\); KusionStack defaults targetPolicy to All/);
  });
});

describe("collaSetWarnings", () => {
  const collaSet = (spec: Partial<CollaSet["spec"]> = {}): CollaSet => ({
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "CollaSet",
    metadata: { name: "web", namespace: "shop" },
    spec: { replicas: 1, selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "x:1" }] } }, ...spec },
  });

  it("says nothing when only fields it acts on are set", () => {
    expect(collaSetWarnings(collaSet({ updateStrategy: { podUpgradePolicy: "Recreate", rollingUpdate: { byPartition: { partition: 1 }, byLabel: {}, maxUnavailable: 2 }, operationDelaySeconds: 5 }, scaleStrategy: { podToDelete: ["web-a"], context: "pool", persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Delete" } }, volumeClaimTemplates: [{ metadata: { name: "data" } }] }))).toEqual([]);
  });

  it("names every field it accepts but does not act on, each with what happens instead", () => {
    const warnings = collaSetWarnings(collaSet({
      volumeClaimTemplates: [{ metadata: { name: "data" } }],
      namingStrategy: { podNamingSuffixPolicy: "Sequential" },
      updateStrategy: { rollingUpdate: { byLabel: {} }, operationDelaySeconds: 5 },
      scaleStrategy: { context: "shared", podToExclude: ["a"], podToInclude: ["b"], persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete" }, operationDelaySeconds: 3 },
    }));
    expect(fields(warnings)).toEqual(COLLASET_IGNORED_FIELDS);
    for (const warning of warnings) expect(warning).toMatch(/: accepted so KusionStack manifests apply, but not acted on: .+\.$/);
  });

  it("says nothing about empty lists", () => {
    expect(collaSetWarnings(collaSet({ volumeClaimTemplates: [], scaleStrategy: { podToExclude: [], podToInclude: [], context: "" } }))).toEqual([]);
  });
});
