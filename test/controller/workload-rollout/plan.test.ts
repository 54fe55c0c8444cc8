import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import type { Pod as EnginePod } from "../../../src/api/pod.ts";
import { recordedRevisions, REVISIONS_ANNOTATION } from "../../../src/decoration/recording.ts";
import { renderPod, type DecorationToApply } from "../../../src/decoration/render.ts";
import { SERVICE_READY_GATE } from "../../../src/controller/lifecycle/pod-ops-lifecycle.ts";
import { planWorkload, type WorkloadPlan, type WorkloadStep } from "../../../src/controller/workload-rollout/plan.ts";
import type { Pod } from "../../../src/kube/objects.ts";
import { admissionScope, outsideAdmissionScope } from "../../../src/decoration/admission-scope.ts";
import { podDecoration } from "../collaset/fixtures.ts";

const sidecar = (revision: string, image: string, extra: Record<string, unknown> = {}): DecorationToApply => ({
  name: "logging",
  namespace: "shop",
  revisionName: revision,
  template: { containers: [{ name: "shipper", image, ...extra }] },
  injectStrategy: { group: "", weight: 0 },
});

/** A Deployment's pod as the webhook made it: the decorations rendered into its template. */
function deploymentPod(name: string, decorations: DecorationToApply[], options: { ready?: boolean; gate?: boolean; labels?: Record<string, string> } = {}): Pod {
  const base: EnginePod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "shop",
      uid: `uid-${name}`,
      resourceVersion: "5",
      labels: { app: "web", "pod-template-hash": "5d8f", ...options.labels },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-5d8f", uid: "rs-uid", controller: true }],
    },
    spec: { containers: [{ name: "app", image: "app:1" }], ...(options.gate === true ? { readinessGates: [{ conditionType: SERVICE_READY_GATE }] } : {}) },
  };
  const rendered = renderPod(base, decorations).pod as unknown as Pod;
  const containers = rendered.spec?.containers ?? [];
  rendered.status = {
    phase: "Running",
    conditions: [{ type: "Ready", status: options.ready === false ? "False" : "True" }, ...(options.gate === true ? [{ type: SERVICE_READY_GATE, status: "True" }] : [])],
    containerStatuses: containers.map((container) => ({ name: container.name, image: container.image ?? "", imageID: "", ready: true, restartCount: 0 })),
  };
  return rendered;
}

/** The webhook's default scope, in a namespace it is called for. */
const defaultScope = (pod: Pod) => outsideAdmissionScope(admissionScope({ ownNamespace: "pod-decorator-system" }), { name: pod.metadata?.namespace ?? "shop" }, pod.metadata ?? {});

function plan(pods: Pod[], decorations: PodDecoration[], revisions: DecorationToApply[], updated: Record<string, string>, lifecycle = false): WorkloadPlan {
  return planWorkload({
    namespace: "shop",
    outsideWebhookScope: defaultScope,
    pods,
    otherPods: () => [],
    decorations,
    updatedRevision: (decoration) => updated[decoration.metadata.name ?? ""],
    revision: (name, revision) => revisions.find((candidate) => candidate.name === name && candidate.revisionName === revision),
    ...(lifecycle ? { lifecycle: { nowMs: 1_000_000, drainDelayMs: 0, stuckAfterMs: 60_000 } } : {}),
  });
}

const kinds = (steps: readonly WorkloadStep[]) => steps.map((step) => `${step.kind} ${step.pod.metadata?.name ?? ""}`);

function applied(pod: Pod, steps: readonly WorkloadStep[]): Pod {
  const step = steps.find((candidate) => candidate.kind === "in-place" && candidate.pod === pod);
  if (step?.kind !== "in-place") throw new Error(`no in-place step for ${pod.metadata?.name ?? ""}`);
  return jsonpatch.applyPatch(structuredClone(pod), step.operations, true, false).newDocument;
}

describe("planWorkload", () => {
  const r1 = sidecar("logging-r1", "shipper:1");
  const r2 = sidecar("logging-r2", "shipper:2");

  it("moves a sidecar image in place, honouring the partition and maxUnavailable of the workload", () => {
    const pods = ["web-a", "web-b", "web-c", "web-d"].map((name) => deploymentPod(name, [r1]));
    const decoration = podDecoration("logging", { updateStrategy: { rollingUpdate: { partition: 1, maxUnavailable: 2 } } });
    const result = plan(pods, [decoration], [r1, r2], { logging: "logging-r2" });
    // Three move (the last in update order is held), two at a time.
    expect([...result.reports.keys()].sort()).toEqual(["web-a", "web-b", "web-c"]);
    expect(kinds(result.steps)).toEqual(["in-place web-a", "in-place web-b"]);
    const moved = applied(pods[0]!, result.steps);
    expect(moved.spec?.containers.map((container) => `${container.name}=${container.image ?? ""}`)).toEqual(["shipper=shipper:2", "app=app:1"]);
    expect(recordedRevisions(moved)?.get("logging")).toBe("logging-r2");
    expect(moved.metadata?.labels?.["poddecoration.kusionstack.io/pd-logging"]).toBe("logging-r2");
    expect(moved.metadata?.uid).toBe(pods[0]!.metadata?.uid);
  });

  it("counts pods unavailable anyway against the budget, and updates them first", () => {
    const pods = [deploymentPod("web-a", [r1]), deploymentPod("web-b", [r1], { ready: false }), deploymentPod("web-c", [r1])];
    const result = plan(pods, [podDecoration("logging")], [r1, r2], { logging: "logging-r2" });
    // maxUnavailable 1 by default: the not-ready pod costs nothing more, and one available pod may go.
    expect(kinds(result.steps)).toEqual(["in-place web-b"]);
  });

  it("counts a pod on its way out against the budget until its replacement is available, and a finished pod not at all", () => {
    const leaving = deploymentPod("web-old", [r1]);
    const terminating: Pod = { ...leaving, metadata: { ...leaving.metadata, deletionTimestamp: "2026-11-02T00:00:00Z" } };
    const done = deploymentPod("job-done", [r1]);
    const finished: Pod = { ...done, status: { ...done.status, phase: "Succeeded", conditions: [{ type: "Ready", status: "False" }] } };
    const pods = [terminating, finished, deploymentPod("web-a", [r1]), deploymentPod("web-b", [r1])];
    expect(plan(pods, [podDecoration("logging")], [r1, r2], { logging: "logging-r2" }).steps).toEqual([]);
    expect(kinds(plan(pods.slice(1), [podDecoration("logging")], [r1, r2], { logging: "logging-r2" }).steps)).toEqual(["in-place web-a"]);
  });

  it("reports a change beyond images and metadata, and evicts only when the decoration asks", () => {
    const pods = ["web-a", "web-b"].map((name) => deploymentPod(name, [r1]));
    const withEnv = sidecar("logging-r2", "shipper:1", { env: [{ name: "LEVEL", value: "debug" }] });
    const reported = plan(pods, [podDecoration("logging")], [r1, withEnv], { logging: "logging-r2" });
    expect(reported.steps).toEqual([]);
    expect(reported.reports.get("web-a")?.blocked?.reason).toBe("NeedsRecreation");
    expect(reported.reports.get("web-a")?.blocked?.message).toMatch(/changes containers: more than images/);
    expect(reported.reports.get("web-a")?.blocked?.message).toMatch(/recreatePolicy of logging is not Evict/);

    const evicting = plan(pods, [podDecoration("logging", { updateStrategy: { recreatePolicy: "Evict" } })], [r1, withEnv], { logging: "logging-r2" });
    expect(kinds(evicting.steps)).toEqual(["evict web-a"]);
    expect(evicting.reports.get("web-b")?.blocked).toBeUndefined();
  });

  it("changes a primary container's image, not another decoration's sidecar, with targetPolicy All", () => {
    const proxy: DecorationToApply = { name: "proxy", namespace: "shop", revisionName: "proxy-r1", template: { containers: [{ name: "envoy", image: "envoy:1" }] }, injectStrategy: { group: "", weight: 0 } };
    const image = (revision: string, value: string): DecorationToApply => ({ name: "base", namespace: "shop", revisionName: revision, template: { primaryContainers: [{ targetPolicy: "All", image: value }] }, injectStrategy: { group: "", weight: 0 } });
    const pod = deploymentPod("web-a", [proxy, image("base-r1", "app:2")]);
    const result = plan([pod], [podDecoration("proxy"), podDecoration("base")], [proxy, image("base-r1", "app:2"), image("base-r2", "app:3")], { proxy: "proxy-r1", base: "base-r2" });
    const moved = applied(pod, result.steps);
    expect(moved.spec?.containers.map((container) => `${container.name}=${container.image ?? ""}`)).toEqual(["envoy=envoy:1", "app=app:3"]);
  });

  it("moves labels a revision set, keeps a pod's own value under Retain, and takes a metadata-only decoration out", () => {
    const labels = (revision: string, value: string): DecorationToApply => ({ name: "tier", namespace: "shop", revisionName: revision, template: { metadata: [{ labels: { tier: value, team: "sre" } }] }, injectStrategy: { group: "", weight: 0 } });
    const ours = deploymentPod("web-a", [labels("tier-r1", "gold")]);
    const theirs = deploymentPod("web-b", [labels("tier-r1", "gold")], { labels: { tier: "bronze" } });
    const revisions = [labels("tier-r1", "gold"), labels("tier-r2", "silver")];
    const result = plan([ours, theirs], [podDecoration("tier", { updateStrategy: { rollingUpdate: { maxUnavailable: 2 } } })], revisions, { tier: "tier-r2" });
    expect(applied(ours, result.steps).metadata?.labels).toMatchObject({ tier: "silver", team: "sre" });
    expect(applied(theirs, result.steps).metadata?.labels).toMatchObject({ tier: "bronze", team: "sre" });

    // Deleted: gone from the targets; its labels and records leave in place.
    const deleting = podDecoration("tier", {}, { deletionTimestamp: "2026-11-02T00:00:00Z" });
    const removal = plan([ours], [deleting], revisions, {});
    const cleaned = applied(ours, removal.steps);
    expect(cleaned.metadata?.labels?.tier).toBeUndefined();
    expect(cleaned.metadata?.labels?.["poddecoration.kusionstack.io/pd-tier"]).toBeUndefined();
    expect(recordedRevisions(cleaned)?.has("tier")).toBe(false);
  });

  it("needs recreation to take a sidecar out, and to add one to a pod created before its decoration", () => {
    const deleting = podDecoration("logging", {}, { deletionTimestamp: "2026-11-02T00:00:00Z" });
    const removal = plan([deploymentPod("web-a", [r1])], [deleting], [r1], {});
    expect(removal.reports.get("web-a")).toMatchObject({ moving: ["logging"], blocked: { reason: "NeedsRecreation" } });

    const before = plan([deploymentPod("web-a", [])], [podDecoration("logging")], [r1], { logging: "logging-r1" });
    expect(before.reports.get("web-a")?.blocked?.message).toMatch(/from no revision to logging-r1/);
  });

  it("evicts a pod whose replacement the webhook will decorate, whenever it was created, and never one the webhook is not called for", () => {
    const created = (pod: Pod, at: string, namespace = "shop", labels: Record<string, string> = {}): Pod => ({
      ...pod,
      metadata: { ...pod.metadata, creationTimestamp: at, namespace, labels: { ...pod.metadata?.labels, ...labels } },
    });
    const evicting = podDecoration("logging", { updateStrategy: { recreatePolicy: "Evict", rollingUpdate: { maxUnavailable: 4 } } }, { creationTimestamp: "2026-11-01T00:00:00Z" });
    const before = created(deploymentPod("web-a", []), "2026-10-01T00:00:00Z");
    // Admitted undecorated after the decoration (the webhook bypassed, or skipped for labels a pod
    // author set): the webhook is called for its replacement, which gets the decoration.
    const after = created(deploymentPod("web-b", []), "2026-11-02T00:00:00Z");
    const withOurLabels = created(deploymentPod("web-c", []), "2026-11-02T00:00:00Z", "shop", { "app.kubernetes.io/name": "pod-decorator", "app.kubernetes.io/instance": "pod-decorator" });
    const result = plan([before, after, withOurLabels], [evicting], [r1], { logging: "logging-r1" });
    expect(kinds(result.steps).sort()).toEqual(["evict web-a", "evict web-b", "evict web-c"]);

    const outOfScope = (namespace: string, scope: Parameters<typeof admissionScope>[0], labels: Record<string, string> = {}, known = true) => planWorkload({
      namespace,
      pods: [created(deploymentPod("dns-a", [r1]), "2026-11-02T00:00:00Z", namespace, labels)],
      otherPods: () => [],
      decorations: [{ ...evicting, metadata: { ...evicting.metadata, namespace } }],
      updatedRevision: () => "logging-r2",
      revision: (_name, revision) => [r1, sidecar("logging-r2", "shipper:1", { env: [{ name: "A", value: "b" }] })].find((candidate) => candidate.revisionName === revision),
      outsideWebhookScope: (pod) => outsideAdmissionScope(admissionScope(scope), known ? { name: namespace, labels: namespace === "opted-out" ? { "poddecoration.kusionstack.io/injection": "disabled" } : {} } : undefined, pod.metadata ?? {}),
    });
    const blocked = (result: WorkloadPlan) => {
      expect(result.steps).toEqual([]);
      return result.reports.get("dns-a")?.blocked?.message;
    };
    expect(blocked(outOfScope("kube-system", {}))).toMatch(/not called for pods in namespace kube-system .* so it is not evicted: its replacement would not be decorated either/);
    expect(blocked(outOfScope("pod-decorator-system", { ownNamespace: "pod-decorator-system" }))).toMatch(/namespace pod-decorator-system/);
    expect(blocked(outOfScope("opted-out", {}))).toMatch(/namespace opted-out/);
    expect(blocked(outOfScope("shop", { optIn: true }))).toMatch(/namespace shop/);
    expect(blocked(outOfScope("shop", { objectSelector: { matchExpressions: [{ key: "skip", operator: "DoesNotExist" }] } }, { skip: "yes" }))).toMatch(/its objectSelector/);
    expect(blocked(outOfScope("shop", {}, {}, false))).toMatch(/namespace is not known/);
  });

  it("judges a pod by what it runs: one that records the updated revision but runs the old sidecar gets the updated sidecar put back in place", () => {
    const pinned = deploymentPod("web-a", [r1]);
    // Its author rewrote the bookkeeping to claim r2 (the updated revision) while it runs r1's sidecar.
    const forged = { ...pinned, metadata: { ...pinned.metadata, labels: { ...pinned.metadata?.labels, "poddecoration.kusionstack.io/pd-logging": "logging-r2" }, annotations: { ...pinned.metadata?.annotations, [REVISIONS_ANNOTATION]: '[{"name":"logging","revision":"logging-r2"}]' } } };
    const evicting = podDecoration("logging", { updateStrategy: { recreatePolicy: "Evict" } });
    const result = plan([forged], [evicting], [r1, r2], { logging: "logging-r2" });
    expect(result.reports.get("web-a")?.moving).toEqual(["logging"]);
    expect(kinds(result.steps)).toEqual(["in-place web-a"]);
    const step = result.steps[0];
    expect(step?.kind === "in-place" ? step.operations : []).toContainEqual({ op: "replace", path: "/spec/containers/0/image", value: r2.template.containers![0]!.image });
    // The pod that runs what it records stays.
    expect(plan([deploymentPod("web-b", [r2])], [evicting], [r1, r2], { logging: "logging-r2" }).reports.size).toBe(0);
  });

  it("takes pods that carry the readiness gate through PodOpsLifecycle, and the others directly", () => {
    const gated = deploymentPod("web-a", [r1], { gate: true });
    const plain = deploymentPod("web-b", [r1]);
    const result = plan([gated, plain], [podDecoration("logging", { updateStrategy: { rollingUpdate: { maxUnavailable: 2 } } })], [r1, r2], { logging: "logging-r2" }, true);
    expect(kinds(result.steps).sort()).toEqual(["in-place web-b", "start-operation web-a"]);
    const direct = result.steps.find((step) => step.kind === "in-place");
    expect(direct?.kind === "in-place" && direct.operate).toBeFalsy();
  });

  it("waits for a target revision that is not stored yet, and leaves pods that are on their targets alone", () => {
    const waiting = plan([deploymentPod("web-a", [r1])], [podDecoration("logging")], [r1], { logging: "logging-r2" });
    expect(waiting.steps).toEqual([]);
    expect(waiting.waiting[0]).toMatch(/logging@logging-r2/);
    const settled = plan([deploymentPod("web-a", [r2])], [podDecoration("logging")], [r2], { logging: "logging-r2" });
    expect(settled.reports.size).toBe(0);
    expect(settled.steps).toEqual([]);
  });
});

describe("planWorkload: drift from the recorded revision (DESIGN §10, what pods run is what counts)", () => {
  const marked: DecorationToApply = { ...sidecar("logging-r1", "shipper:1"), template: { metadata: [{ patchPolicy: "Overwrite", labels: { logs: "shipped" } }], containers: [{ name: "shipper", image: "shipper:1" }] } };

  it("puts a label the decoration set back at once, outside the rollout's budget and lifecycle", () => {
    const rendered = deploymentPod("web-a", [marked], { gate: true });
    const { logs: _removed, ...labels } = rendered.metadata!.labels!;
    const drifted = { ...rendered, metadata: { ...rendered.metadata, labels } };
    const result = plan([drifted], [podDecoration("logging", { updateStrategy: { rollingUpdate: { maxUnavailable: 0 } } })], [marked], { logging: "logging-r1" }, true);
    // No operation begins: the pod stays in traffic.
    expect(kinds(result.steps)).toContain("in-place web-a");
    expect(kinds(result.steps)).not.toContain("start-operation web-a");
    expect(applied(drifted, result.steps).metadata?.labels?.logs).toBe("shipped");
  });

  it("puts an image the pod author set back in place, within the budget", () => {
    const rendered = deploymentPod("web-a", [marked]);
    const reverted = { ...rendered, spec: { ...rendered.spec!, containers: rendered.spec!.containers.map((container) => (container.name === "shipper" ? { ...container, image: "shipper:0" } : container)) } };
    const result = plan([reverted], [podDecoration("logging")], [marked], { logging: "logging-r1" });
    expect(kinds(result.steps)).toEqual(["in-place web-a"]);
    expect(applied(reverted, result.steps).spec?.containers.find((container) => container.name === "shipper")?.image).toBe("shipper:1");
  });

  it("reports a pod that does not have what its recorded revision injects, or evicts it under recreatePolicy Evict", () => {
    const withEnv: DecorationToApply = { ...sidecar("logging-r1", "shipper:1", { env: [{ name: "LEVEL", value: "info" }] }) };
    // Created with the revision's sidecar but another env (a record forged, or written while no webhook ran).
    const forged = deploymentPod("web-a", [sidecar("logging-r1", "shipper:1", { env: [{ name: "LEVEL", value: "off" }] })]);
    const reported = plan([forged], [podDecoration("logging")], [withEnv], { logging: "logging-r1" });
    expect(result(reported)).toEqual({ steps: [], blocked: "NeedsRecreation" });
    expect(reported.reports.get("web-a")?.blocked?.message).toContain('it does not run the revision of logging it records (the env of container "shipper" is not the revision\'s)');
    expect(kinds(plan([forged], [podDecoration("logging", { updateStrategy: { recreatePolicy: "Evict" } })], [withEnv], { logging: "logging-r1" }).steps)).toEqual(["evict web-a"]);
  });
});

function result(planned: WorkloadPlan) {
  return { steps: kinds(planned.steps), blocked: [...planned.reports.values()][0]?.blocked?.reason };
}
