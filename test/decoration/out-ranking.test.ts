// Which decorations a new or changed decoration would out-rank on the pods both can select, and
// how: excluding one from their group, or changing what one renders, by the engine's rules.
import { describe, expect, it } from "vitest";
import type { PodDecoration, PodDecorationSpec, PodDecorationTemplate } from "../../src/api/poddecoration.ts";
import { outRankedDecorations } from "../../src/decoration/out-ranking.ts";

const NAMESPACE = "team-a";
const PLATFORM = `${NAMESPACE}/platform`;
const EARLIER = "2026-01-01T00:00:00Z";
const LATER = "2026-02-01T00:00:00Z";

function decoration(name: string, spec: Partial<PodDecorationSpec>, metadata: Partial<PodDecoration["metadata"]> = {}): PodDecoration {
  return { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name, namespace: NAMESPACE, ...metadata }, spec: { selector: {}, ...spec } };
}

/** The platform's decoration, created before anything in these tests. */
function platform(spec: Partial<PodDecorationSpec>, metadata: Partial<PodDecoration["metadata"]> = {}): PodDecoration {
  return decoration("platform", spec, { creationTimestamp: EARLIER, ...metadata });
}

/** A decoration being created: no creation time yet, so the newest. */
function mine(spec: Partial<PodDecorationSpec>, metadata: Partial<PodDecoration["metadata"]> = {}): PodDecoration {
  return decoration("mine", spec, metadata);
}

function outRanked(candidate: PodDecoration, ...others: PodDecoration[]): [string, string[]][] {
  return outRankedDecorations(candidate, others).map(({ decoration: other, reasons }) => [other.metadata.name ?? "", reasons]);
}

/** Rendered before the platform's (ungrouped sorts first) or after it (a later group). */
const renderedEarlier = { injectStrategy: { group: "" } };
const renderedLater = { injectStrategy: { group: "zz-overrides" } };
const inMesh = (weight: number) => ({ injectStrategy: { group: "mesh", weight } });
const sidecar = (name: string, image = "proxy:1") => ({ name, image });
const template = (value: PodDecorationTemplate) => ({ template: value });

describe("outRankedDecorations: exclusive groups", () => {
  it.each<[string, PodDecoration, PodDecoration, [string, string[]][]]>([
    ["a heavier weight in the same group excludes", mine(inMesh(10)), platform(inMesh(5)), [["platform", [`would exclude ${PLATFORM} (same group "mesh", heavier weight 10 > 5)`]]]],
    ["a lighter weight excludes nothing, and its renders never meet the other's", mine({ ...inMesh(1), ...template({ containers: [sidecar("mesh-proxy")] }) }), platform({ ...inMesh(5), ...template({ containers: [sidecar("mesh-proxy")] }) }), []],
    ["an equal weight excludes nothing (ties all apply)", mine(inMesh(5)), platform(inMesh(5)), []],
    ["another group excludes nothing", mine({ injectStrategy: { group: "logging", weight: 10 } }), platform(inMesh(5)), []],
    ["no group excludes nothing", mine({ injectStrategy: { weight: 10 } }), platform({ injectStrategy: { weight: 5 } }), []],
    ["spec.weight (kuperator's field) counts when injectStrategy.weight is unset", mine({ injectStrategy: { group: "mesh" }, weight: 10 }), platform({ injectStrategy: { group: "mesh" }, weight: 5 }), [["platform", [`would exclude ${PLATFORM} (same group "mesh", heavier weight 10 > 5)`]]]],
    ["injectStrategy.weight wins over spec.weight", mine({ injectStrategy: { group: "mesh", weight: 1 }, weight: 10 }), platform(inMesh(5)), []],
    ["exclusion is the whole story: the other renders nothing where both match", mine({ ...inMesh(10), ...template({ containers: [sidecar("mesh-proxy")] }) }), platform({ ...inMesh(5), ...template({ containers: [sidecar("mesh-proxy")] }) }), [["platform", [`would exclude ${PLATFORM} (same group "mesh", heavier weight 10 > 5)`]]]],
  ])("%s", (_what, candidate, other, expected) => {
    expect(outRanked(candidate, other)).toEqual(expected);
  });

  it("orders equal weights by creation time, then name: a newer one renders later, an older one earlier", () => {
    const proxy = (weight: number) => ({ ...inMesh(weight), ...template({ containers: [sidecar("mesh-proxy")], initContainers: [sidecar("mesh-init")] }) });
    const replaces = [`would replace container "mesh-proxy" that ${PLATFORM} injects`];
    const keepsFirst = [`would replace init container "mesh-init" that ${PLATFORM} injects (a name already taken keeps the first container)`];
    expect(outRanked(mine(proxy(5)), platform(proxy(5)))).toEqual([["platform", replaces]]);
    expect(outRanked(mine(proxy(5), { creationTimestamp: LATER }), platform(proxy(5), { creationTimestamp: EARLIER }))).toEqual([["platform", replaces]]);
    // An older decoration edited into the group (an UPDATE) renders first.
    expect(outRanked(mine(proxy(5), { creationTimestamp: EARLIER }), platform(proxy(5), { creationTimestamp: LATER }))).toEqual([["platform", keepsFirst]]);
    // Created in the same second: "a-mine" sorts before "platform", "zz-mine" after.
    expect(outRanked(decoration("a-mine", proxy(5), { creationTimestamp: EARLIER }), platform(proxy(5)))).toEqual([["platform", keepsFirst]]);
    expect(outRanked(decoration("zz-mine", proxy(5), { creationTimestamp: EARLIER }), platform(proxy(5)))).toEqual([["platform", replaces]]);
  });
});

describe("outRankedDecorations: container and init container names", () => {
  const theirs = platform({ ...inMesh(5), ...template({ containers: [sidecar("mesh-proxy")], initContainers: [sidecar("mesh-init")], primaryContainers: [{ name: "app", env: [{ name: "MESH", value: "on" }] }] }) });

  it.each<[string, PodDecoration, string[]]>([
    ["a later sidecar of the same name replaces the other's", mine({ ...renderedLater, ...template({ containers: [sidecar("mesh-proxy", "evil:1")] }) }), [`would replace container "mesh-proxy" that ${PLATFORM} injects`]],
    ["an earlier sidecar of that name is replaced by the other's", mine({ ...renderedEarlier, ...template({ containers: [sidecar("mesh-proxy")] }) }), []],
    ["an earlier init container of the sidecar's name keeps the sidecar out", mine({ ...renderedEarlier, ...template({ initContainers: [sidecar("mesh-proxy")] }) }), [`would replace container "mesh-proxy" that ${PLATFORM} injects with an init container of that name`]],
    ["a later init container of the sidecar's name is the one skipped", mine({ ...renderedLater, ...template({ initContainers: [sidecar("mesh-proxy")] }) }), []],
    ["an earlier init container of the same name keeps the other's out", mine({ ...renderedEarlier, ...template({ initContainers: [sidecar("mesh-init")] }) }), [`would replace init container "mesh-init" that ${PLATFORM} injects (a name already taken keeps the first container)`]],
    ["an earlier sidecar of the init container's name keeps it out", mine({ ...renderedEarlier, ...template({ containers: [sidecar("mesh-init")] }) }), [`would replace init container "mesh-init" that ${PLATFORM} injects (a name already taken keeps the first container)`]],
    ["a later init container of the same name is the one skipped", mine({ ...renderedLater, ...template({ initContainers: [sidecar("mesh-init")] }) }), []],
    ["a later sidecar named like the primary container the other patches replaces it", mine({ ...renderedLater, ...template({ containers: [sidecar("app")] }) }), [`would replace primary container "app" that ${PLATFORM} patches`]],
    ["other names touch nothing of the other's", mine({ ...renderedLater, ...template({ containers: [sidecar("metrics")], initContainers: [sidecar("migrate")] }) }), []],
  ])("%s", (_what, candidate, expected) => {
    expect(outRanked(candidate, theirs)).toEqual(expected.length === 0 ? [] : [["platform", expected]]);
  });
});

describe("outRankedDecorations: the primary containers' image, env and mounts", () => {
  const patching = (patch: object, order = renderedLater) => mine({ ...order, ...template({ primaryContainers: [patch] }) });
  const theirs = platform({ ...inMesh(5), ...template({ primaryContainers: [{ targetPolicy: "ByName", name: "app", image: "app:hardened", env: [{ name: "MESH", value: "on" }], volumeMounts: [{ name: "certs", mountPath: "/etc/mesh" }] }] }) });
  const env = `would override env "MESH" that ${PLATFORM} sets on the same primary containers`;

  it.each<[string, PodDecoration, string[]]>([
    ["a later value of the same env name on the same container overrides", patching({ name: "app", env: [{ name: "MESH", value: "off" }] }), [env]],
    ["the same value changes nothing", patching({ name: "app", env: [{ name: "MESH", value: "on" }] }), []],
    ["an earlier value is overridden by the other's", patching({ name: "app", env: [{ name: "MESH", value: "off" }] }, renderedEarlier), []],
    ["another container by name is another target", patching({ name: "web", env: [{ name: "MESH", value: "off" }] }), []],
    ["All targets the other's container too", patching({ targetPolicy: "All", env: [{ name: "MESH", value: "off" }] }), [env]],
    ["no policy and no name means All", patching({ env: [{ name: "MESH", value: "off" }] }), [env]],
    ["First can be the container the other names", patching({ targetPolicy: "First", env: [{ name: "MESH", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }] }), [env]],
    ["another env name overrides nothing", patching({ name: "app", env: [{ name: "DEBUG", value: "1" }] }), []],
    ["a later image on the same container replaces the other's", patching({ name: "app", image: "app:old" }), [`would replace the image that ${PLATFORM} sets on the same primary containers`]],
    ["a later mount at the same path replaces the other's", patching({ name: "app", volumeMounts: [{ name: "mine", mountPath: "/etc/mesh" }] }), [`would replace the volume mount at "/etc/mesh" that ${PLATFORM} adds to the same primary containers`]],
  ])("%s", (_what, candidate, expected) => {
    expect(outRanked(candidate, theirs)).toEqual(expected.length === 0 ? [] : [["platform", expected]]);
  });

  it("finds First and Last overlapping (a pod with one container), as a conservative reading", () => {
    const last = platform({ ...inMesh(5), ...template({ primaryContainers: [{ targetPolicy: "Last", env: [{ name: "MESH", value: "on" }] }] }) });
    expect(outRanked(patching({ targetPolicy: "First", env: [{ name: "MESH", value: "off" }] }), last)).toEqual([["platform", [env]]]);
  });
});

describe("outRankedDecorations: labels and annotations", () => {
  const theirs = (patchPolicy: "Retain" | "Overwrite" | "MergePatchJson") =>
    platform({ ...inMesh(5), ...template({ metadata: [{ patchPolicy, ...(patchPolicy === "MergePatchJson" ? {} : { labels: { "mesh.io/inject": "true" } }), annotations: { "mesh.io/config": '{"mtls":"strict"}' } }] }) });
  const setting = (patchPolicy: "Retain" | "Overwrite" | "MergePatchJson", order: object, values: { labels?: Record<string, string>; annotations?: Record<string, string> }) =>
    mine({ ...order, ...template({ metadata: [{ patchPolicy, ...values }] }) });
  const off = { labels: { "mesh.io/inject": "false" } };
  const loose = { annotations: { "mesh.io/config": '{"mtls":"permissive"}' } };

  it.each<[string, PodDecoration, "Retain" | "Overwrite" | "MergePatchJson", string[]]>([
    ["a later Overwrite of the same label overrides", setting("Overwrite", renderedLater, off), "Retain", [`would override label "mesh.io/inject" that ${PLATFORM} sets`]],
    ["a later Retain of the same label finds it set", setting("Retain", renderedLater, off), "Overwrite", []],
    ["an earlier label wins over the other's Retain", setting("Retain", renderedEarlier, off), "Retain", [`would set label "mesh.io/inject" first, where ${PLATFORM} sets it only when absent (Retain)`]],
    ["an earlier label loses to the other's Overwrite", setting("Overwrite", renderedEarlier, off), "Overwrite", []],
    ["the same value changes nothing", setting("Overwrite", renderedLater, { labels: { "mesh.io/inject": "true" } }), "Retain", []],
    ["a later MergePatchJson of the same annotation overrides", setting("MergePatchJson", renderedLater, loose), "Overwrite", [`would override annotation "mesh.io/config" that ${PLATFORM} sets`]],
    ["an earlier annotation under the other's MergePatchJson keeps none of the other's keys", setting("Overwrite", renderedEarlier, loose), "MergePatchJson", []],
    ["a label and an annotation of one key are different things", setting("Overwrite", renderedLater, { annotations: { "mesh.io/inject": "false" } }), "Overwrite", []],
  ])("%s", (_what, candidate, policy, expected) => {
    expect(outRanked(candidate, theirs(policy))).toEqual(expected.length === 0 ? [] : [["platform", expected]]);
  });
});

describe("outRankedDecorations: volumes and scheduling", () => {
  const theirs = platform({
    ...inMesh(5),
    ...template({
      volumes: [{ name: "certs", secret: { secretName: "mesh-certs" } }],
      runtimeClassName: "gvisor",
      affinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "mesh", operator: "In", values: ["ready"] }] }], overrideAffinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } } },
      tolerations: [{ key: "mesh", operator: "Exists" }],
    }),
  });
  const later = (value: PodDecorationTemplate) => mine({ ...renderedLater, ...template(value) });

  it.each<[string, PodDecoration, string[]]>([
    ["a later volume of the same name replaces the other's", later({ volumes: [{ name: "certs", emptyDir: {} }] }), [`would replace volume "certs" that ${PLATFORM} adds`]],
    ["an identical volume changes nothing", later({ volumes: [{ name: "certs", secret: { secretName: "mesh-certs" } }] }), []],
    ["a later runtimeClassName replaces the other's", later({ runtimeClassName: "runc" }), [`would replace runtimeClassName "gvisor" that ${PLATFORM} sets`]],
    ["a later nodeAffinity drops the node selector terms the other ANDed in", later({ affinity: { overrideAffinity: { nodeAffinity: {} } } }), [`would replace the nodeAffinity that ${PLATFORM} sets`]],
    ["more node selector terms only narrow further", later({ affinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }] } }), []],
    ["a later podAntiAffinity replaces the other's", later({ affinity: { overrideAffinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [] } } } }), [`would replace the podAntiAffinity that ${PLATFORM} sets`]],
    ["tolerations only add up", later({ tolerations: [{ key: "mesh", operator: "Equal", value: "x" }] }), []],
  ])("%s", (_what, candidate, expected) => {
    expect(outRanked(candidate, theirs)).toEqual(expected.length === 0 ? [] : [["platform", expected]]);
  });

  it("finds nothing to override from an earlier decoration: the later one's are kept", () => {
    const earlier = mine({ ...renderedEarlier, ...template({ volumes: [{ name: "certs", emptyDir: {} }], runtimeClassName: "runc", affinity: { overrideAffinity: { nodeAffinity: {} } } }) });
    expect(outRanked(earlier, theirs)).toEqual([]);
  });
});

describe("outRankedDecorations: which decorations can meet on a pod", () => {
  const heavier = (selector: PodDecorationSpec["selector"]) => mine({ ...inMesh(10), selector });

  it("sees a {} decoration on every pod another selects, and non-overlapping selectors never meeting", () => {
    expect(outRanked(heavier({ matchLabels: { app: "a" } }), platform(inMesh(5)))).toHaveLength(1);
    expect(outRanked(heavier({}), platform({ ...inMesh(5), selector: { matchLabels: { app: "b" } } }))).toHaveLength(1);
    expect(outRanked(heavier({ matchLabels: { app: "a" } }), platform({ ...inMesh(5), selector: { matchLabels: { app: "b" } } }))).toEqual([]);
    expect(outRanked(heavier({ matchExpressions: [{ key: "app", operator: "NotIn", values: ["b"] }] }), platform({ ...inMesh(5), selector: { matchLabels: { app: "b" } } }))).toEqual([]);
  });

  it("leaves out itself (an update), other namespaces and decorations being deleted", () => {
    expect(outRanked(heavier({}), decoration("mine", inMesh(5), { creationTimestamp: EARLIER }))).toEqual([]);
    expect(outRanked(heavier({}), platform(inMesh(5), { namespace: "team-b" }))).toEqual([]);
    expect(outRanked(heavier({}), platform(inMesh(5), { deletionTimestamp: LATER }))).toEqual([]);
  });

  it("names every decoration out-ranked, each with all its reasons, in the order given", () => {
    const logging = decoration("logging", { ...template({ containers: [sidecar("log-shipper")], primaryContainers: [{ env: [{ name: "LOG_LEVEL", value: "info" }] }] }) }, { creationTimestamp: EARLIER });
    const candidate = mine({ ...renderedLater, ...template({ containers: [sidecar("log-shipper"), sidecar("mesh-proxy")], primaryContainers: [{ env: [{ name: "LOG_LEVEL", value: "debug" }] }] }) });
    const mesh = platform({ ...inMesh(5), ...template({ containers: [sidecar("mesh-proxy")] }) });
    expect(outRanked(candidate, logging, mesh)).toEqual([
      ["logging", [`would replace container "log-shipper" that ${NAMESPACE}/logging injects`, `would override env "LOG_LEVEL" that ${NAMESPACE}/logging sets on the same primary containers`]],
      ["platform", [`would replace container "mesh-proxy" that ${PLATFORM} injects`]],
    ]);
  });
});
