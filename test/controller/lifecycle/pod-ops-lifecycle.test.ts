// PodOpsLifecycle around CollaSet updates, through the reconciler over real caches (the harness
// plays a kubelet that keeps the pod not Ready while the readiness gate's condition is not True).
import { describe, expect, it } from "vitest";
import { AVAILABLE_CONDITIONS_ANNOTATION, lifecycleLabel, lifecycleStep, readyToOperate, SERVICE_AVAILABLE_LABEL, SERVICE_READY_GATE } from "../../../src/controller/lifecycle/pod-ops-lifecycle.ts";
import type { Pod } from "../../../src/kube/objects.ts";
import { apiError, collaSet, ReconcilerHarness } from "../collaset/reconciler-harness.ts";

const DRAIN_MS = 5000;
const STUCK_MS = 60_000;

function gate(pod: Pod): string | undefined {
  return pod.status?.conditions?.find((condition) => condition.type === SERVICE_READY_GATE)?.status;
}

/** The labels of an operation (service-available is the pod's state, not an operation's). */
function lifecycleLabels(pod: Pod): string[] {
  return Object.keys(pod.metadata?.labels ?? {}).filter((key) => key.includes("podopslifecycle.kusionstack.io") && key !== SERVICE_AVAILABLE_LABEL).sort();
}

const replicaFailure = (harness: ReconcilerHarness) => harness.status("ns", "web")?.conditions?.find((condition) => condition.type === "ReplicaFailure");

/** `replicas` pods in service: gate condition True, Ready. */
async function inService(replicas: number, options: { policy?: "Recreate" } = {}): Promise<ReconcilerHarness> {
  const harness = new ReconcilerHarness({ lifecycle: { drainDelayMs: DRAIN_MS, stuckAfterMs: STUCK_MS } });
  harness.applyCollaSet(withPolicy(collaSet({ replicas }), options.policy));
  await harness.reconciler.reconcile("ns/web");
  harness.runPods();
  await harness.reconciler.reconcile("ns/web");
  harness.runPods();
  for (const pod of harness.pods.list("ns")) {
    expect(gate(pod)).toBe("True");
    expect(pod.status?.conditions?.find((condition) => condition.type === "Ready")?.status).toBe("True");
  }
  return harness;
}

function withPolicy(object: ReturnType<typeof collaSet>, policy: "Recreate" | undefined) {
  if (policy !== undefined) object.spec.updateStrategy = { ...object.spec.updateStrategy, podUpgradePolicy: policy };
  return object;
}

const images = (harness: ReconcilerHarness) => harness.pods.list("ns").map((pod) => pod.spec?.containers[0]?.image);

describe("PodOpsLifecycle on CollaSet pods", () => {
  it("creates pods with the gate and the control label; their condition goes True once their containers are ready", async () => {
    const harness = new ReconcilerHarness({ lifecycle: { drainDelayMs: DRAIN_MS, stuckAfterMs: STUCK_MS } });
    harness.applyCollaSet(collaSet({ replicas: 1 }));
    await harness.reconciler.reconcile("ns/web");
    const [created] = harness.pods.list("ns");
    expect(created!.spec?.readinessGates).toEqual([{ conditionType: SERVICE_READY_GATE }]);
    expect(created!.metadata?.labels?.["kusionstack.io/control"]).toBe("true");
    // Not ready while the kubelet has not run it: no condition written yet.
    await harness.reconciler.reconcile("ns/web");
    expect(gate(harness.pods.list("ns")[0]!)).toBeUndefined();
    harness.runPods();
    await harness.reconciler.reconcile("ns/web");
    expect(gate(harness.pods.list("ns")[0]!)).toBe("True");
  });

  it("takes a pod out of traffic, drains, updates it in place, and brings it back, one pod at a time", async () => {
    const harness = await inService(2);
    harness.applyCollaSet(collaSet({ replicas: 2, image: "nginx:1.28" }));

    await harness.reconciler.reconcile("ns/web");
    const [first, second] = harness.pods.list("ns").sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
    expect(lifecycleLabels(harness.pods.get("ns", first!.metadata!.name!)!)).toEqual([
      // No PodTransitionRule checks it: pre-checked at once (kuperator's pre-check gives way to pre-checked).
      lifecycleLabel("operating"), lifecycleLabel("operationPermission"), lifecycleLabel("operationType"), lifecycleLabel("preChecked"), lifecycleLabel("preparing"),
    ].sort());
    expect(harness.pods.get("ns", first!.metadata!.name!)!.metadata?.labels?.[lifecycleLabel("operationType")]).toBe("update");
    // The step that starts the operation takes the pod out of traffic too: no reconcile in between.
    expect(gate(harness.pods.get("ns", first!.metadata!.name!)!)).toBe("False");
    // maxUnavailable 1: the pod in the lifecycle counts; the other is left alone.
    expect(lifecycleLabels(harness.pods.get("ns", second!.metadata!.name!)!)).toEqual([]);

    await harness.reconciler.reconcile("ns/web");
    expect(gate(harness.pods.get("ns", first!.metadata!.name!)!)).toBe("False");
    harness.runPods();
    // Out of traffic; the drain delay runs: nothing is updated yet, and the reconcile comes back when it ends.
    const waiting = await harness.reconciler.reconcile("ns/web");
    expect(images(harness)).toEqual(["nginx:1.27", "nginx:1.27"]);
    expect(waiting?.requeueAfter).toBe(DRAIN_MS);

    await harness.clock.advance(DRAIN_MS);
    await harness.reconciler.reconcile("ns/web");
    const operated = harness.pods.get("ns", first!.metadata!.name!)!;
    expect(operated.spec?.containers[0]?.image).toBe("nginx:1.28");
    expect(lifecycleStep(operated).kind).toBe("operating");
    expect(harness.events.some((event) => event.reason === "UpdatedInPlace")).toBe(true);

    // The kubelet runs the new image: the pod is taken back into traffic and its labels go.
    harness.runPods();
    await harness.reconciler.reconcile("ns/web");
    const back = harness.pods.get("ns", first!.metadata!.name!)!;
    expect(gate(back)).toBe("True");
    expect(lifecycleLabels(back)).toEqual([]);
    harness.runPods();

    // Now the second pod's turn.
    await harness.reconciler.reconcile("ns/web");
    expect(lifecycleStep(harness.pods.get("ns", second!.metadata!.name!)!).kind).toBe("preparing");
  });

  it("waits for protection finalizers instead of the drain delay, and reports a wait past stuckAfter", async () => {
    const harness = await inService(1);
    const name = harness.pods.list("ns")[0]!.metadata!.name!;
    const held = harness.pods.get("ns", name)!;
    harness.pods.upsert({ ...held, metadata: { ...held.metadata, finalizers: ["prot.podopslifecycle.kusionstack.io/traffic"], resourceVersion: "held" } });
    harness.applyCollaSet(collaSet({ replicas: 1, image: "nginx:1.28" }));
    await harness.reconciler.reconcile("ns/web");
    await harness.reconciler.reconcile("ns/web");
    harness.runPods();
    await harness.clock.advance(STUCK_MS);
    await harness.reconciler.reconcile("ns/web");
    expect(images(harness)).toEqual(["nginx:1.27"]);
    expect(replicaFailure(harness)).toMatchObject({ status: "True", reason: "Blocked", message: expect.stringContaining("waiting for protection finalizers prot.podopslifecycle.kusionstack.io/traffic") as unknown });
    expect(harness.events.some((event) => event.type === "Warning" && event.reason === "LifecycleStuck")).toBe(true);

    // Released: updated at once (a traffic controller's finalizer replaces the drain delay).
    const pod = harness.pods.get("ns", name)!;
    harness.pods.upsert({ ...pod, metadata: { ...pod.metadata, finalizers: [], resourceVersion: "released" } });
    await harness.reconciler.reconcile("ns/web");
    expect(images(harness)).toEqual(["nginx:1.28"]);
  });

  it("takes the pod back into traffic without updating it when the update is withdrawn or undone", async () => {
    const harness = await inService(1);
    harness.applyCollaSet(collaSet({ replicas: 1, image: "nginx:1.28" }));
    await harness.reconciler.reconcile("ns/web");
    await harness.reconciler.reconcile("ns/web");
    harness.runPods();
    // Withdrawn: the spec goes back before the drain ends.
    harness.applyCollaSet(collaSet({ replicas: 1 }));
    await harness.reconciler.reconcile("ns/web");
    let pod = harness.pods.list("ns")[0]!;
    expect(lifecycleLabels(pod)).toEqual([]);
    expect(gate(pod)).toBe("True");
    expect(pod.spec?.containers[0]?.image).toBe("nginx:1.27");
    expect(harness.events.some((event) => event.reason === "OperationCompleted" && event.message.includes("no longer needs an update"))).toBe(true);

    // Undone by another party: the undo label ends the operation before it is carried out.
    harness.runPods();
    harness.applyCollaSet(collaSet({ replicas: 1, image: "nginx:1.28" }));
    await harness.reconciler.reconcile("ns/web");
    pod = harness.pods.list("ns")[0]!;
    harness.pods.upsert({ ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata?.labels, [lifecycleLabel("undoOperationType")]: "update" }, resourceVersion: "undo" } });
    await harness.reconciler.reconcile("ns/web");
    pod = harness.pods.list("ns")[0]!;
    expect(lifecycleLabels(pod)).toEqual([]);
    expect(pod.spec?.containers[0]?.image).toBe("nginx:1.27");
  });

  it("recreates through the Eviction API; a refusal by a disruption budget is reported and retried with backoff, never forced", async () => {
    const harness = await inService(1, { policy: "Recreate" });
    harness.applyCollaSet(withPolicy(collaSet({ replicas: 1, env: "green" }), "Recreate"));
    await harness.reconciler.reconcile("ns/web");
    await harness.reconciler.reconcile("ns/web");
    harness.runPods();
    await harness.clock.advance(DRAIN_MS);
    const budget = () => apiError(429, { reason: "TooManyRequests", message: "Cannot evict pod as it would violate the pod's disruption budget." });
    harness.failNext("pods.evict", budget());
    const refused = await harness.reconciler.reconcile("ns/web");
    expect(refused?.requeueAfter).toBe(1000);
    expect(replicaFailure(harness)).toMatchObject({ status: "True", message: expect.stringContaining("eviction refused: Cannot evict pod as it would violate the pod's disruption budget.") as unknown });
    expect(harness.events.some((event) => event.type === "Warning" && event.reason === "EvictionRefused")).toBe(true);
    expect(harness.pods.list("ns").map((pod) => pod.metadata?.deletionTimestamp)).toEqual([undefined]);
    expect(harness.writes.filter((write) => write.startsWith("pods.delete"))).toEqual([]);

    // Within the backoff: not asked again.
    const evictions = () => harness.writes.filter((write) => write.startsWith("pods.evict")).length;
    const before = evictions();
    await harness.reconciler.reconcile("ns/web");
    expect(evictions()).toBe(before);
    // Refused again after it: the wait doubles.
    await harness.clock.advance(1000);
    harness.failNext("pods.evict", budget());
    expect((await harness.reconciler.reconcile("ns/web"))?.requeueAfter).toBe(2000);
    // Allowed: evicted (held by the recreate finalizer until its replacement exists).
    await harness.clock.advance(2000);
    await harness.reconciler.reconcile("ns/web");
    expect(evictions()).toBe(before + 2);
    expect(harness.pods.list("ns").some((pod) => pod.metadata?.deletionTimestamp != null)).toBe(true);
  });
});

describe("PodOpsLifecycle as kube-api names it: expected finalizers, operationDelaySeconds, service-available", () => {
  const TRAFFIC = "prot.podopslifecycle.kusionstack.io/traffic";
  const only = (harness: ReconcilerHarness) => harness.pods.list("ns")[0]!;
  const edit = (harness: ReconcilerHarness, change: (pod: Pod) => Pod) => {
    const pod = only(harness);
    const changed = change(pod);
    harness.pods.upsert({ ...changed, metadata: { ...changed.metadata, resourceVersion: `${pod.metadata?.resourceVersion ?? ""}x` } });
  };
  const finalizers = (list: string[]) => (pod: Pod): Pod => ({ ...pod, metadata: { ...pod.metadata, finalizers: list } });

  it("keeps an operation until the finalizers the available-conditions annotation expects are back; a newer change starts it over", async () => {
    const harness = await inService(1);
    await harness.reconciler.reconcile("ns/web");
    expect(only(harness).metadata?.labels?.[SERVICE_AVAILABLE_LABEL]).toMatch(/^\d+$/);
    // A traffic controller holds the pod and says which finalizer means "in my rotation".
    edit(harness, (pod) => ({ ...pod, metadata: { ...pod.metadata, finalizers: [TRAFFIC], annotations: { ...pod.metadata?.annotations, [AVAILABLE_CONDITIONS_ANNOTATION]: JSON.stringify({ expectedFinalizers: { "Service/ns/web": TRAFFIC } }) } } }));

    harness.applyCollaSet(collaSet({ replicas: 1, image: "nginx:1.28" }));
    await harness.reconciler.reconcile("ns/web");
    expect(only(harness).metadata?.labels?.[SERVICE_AVAILABLE_LABEL]).toBeUndefined();
    expect(only(harness).metadata?.labels?.[lifecycleLabel("preparing")]).toMatch(/^\d+$/);
    harness.runPods();
    edit(harness, finalizers([])); // traffic lets it go
    await harness.reconciler.reconcile("ns/web");
    await harness.clock.advance(DRAIN_MS);
    await harness.reconciler.reconcile("ns/web");
    expect(only(harness).spec?.containers[0]?.image).toBe("nginx:1.28");
    expect(only(harness).metadata?.labels?.[lifecycleLabel("operated")]).toMatch(/^\d+$/);
    harness.runPods();

    // Running the new image and ready, but traffic has not taken it back: the operation stays.
    await harness.reconciler.reconcile("ns/web");
    expect(lifecycleStep(only(harness)).kind).toBe("operating");
    expect(gate(only(harness))).toBe("False");
    expect(harness.status("ns", "web")?.availableReplicas).toBe(0);

    // A newer template meanwhile: the operation starts over at once (the pod is out of traffic).
    const operatingBefore = only(harness).metadata?.labels?.[lifecycleLabel("operating")];
    await harness.clock.advance(1000);
    harness.applyCollaSet(collaSet({ replicas: 1, image: "nginx:1.29" }));
    await harness.reconciler.reconcile("ns/web");
    expect(lifecycleStep(only(harness)).kind).toBe("preparing");
    expect(only(harness).metadata?.labels?.[lifecycleLabel("operating")]).not.toBe(operatingBefore);
    expect(only(harness).metadata?.labels?.[lifecycleLabel("operated")]).toBeUndefined();
    await harness.clock.advance(DRAIN_MS);
    await harness.reconciler.reconcile("ns/web");
    expect(only(harness).spec?.containers[0]?.image).toBe("nginx:1.29");
    harness.runPods();
    await harness.reconciler.reconcile("ns/web");
    expect(lifecycleStep(only(harness)).kind).toBe("operating");

    // The finalizer is back: the operation ends, the pod returns to traffic and is service-available.
    edit(harness, finalizers([TRAFFIC]));
    await harness.reconciler.reconcile("ns/web");
    expect(lifecycleLabels(only(harness))).toEqual([]);
    expect(gate(only(harness))).toBe("True");
    harness.runPods();
    await harness.reconciler.reconcile("ns/web");
    expect(only(harness).metadata?.labels?.[SERVICE_AVAILABLE_LABEL]).toMatch(/^\d+$/);
    expect(harness.status("ns", "web")?.availableReplicas).toBe(1);
  });

  it("with updateStrategy.operationDelaySeconds, operates that long after the pod was allowed to be (the operate label)", async () => {
    const harness = await inService(1);
    const delayed = (image: string) => {
      const object = collaSet({ replicas: 1, image });
      return { ...object, spec: { ...object.spec, updateStrategy: { ...object.spec.updateStrategy, operationDelaySeconds: 10 } } };
    };
    harness.applyCollaSet(delayed("nginx:1.27"));
    await harness.reconciler.reconcile("ns/web");
    harness.applyCollaSet(delayed("nginx:1.28"));
    await harness.reconciler.reconcile("ns/web");
    await harness.reconciler.reconcile("ns/web");
    harness.runPods();
    await harness.clock.advance(DRAIN_MS);
    const permitted = await harness.reconciler.reconcile("ns/web");
    expect(lifecycleStep(only(harness))).toEqual({ kind: "permitted", sinceMs: harness.clock.now() });
    expect(only(harness).spec?.containers[0]?.image).toBe("nginx:1.27");
    expect(permitted?.requeueAfter).toBeLessThanOrEqual(10_000);

    await harness.clock.advance(9_999);
    await harness.reconciler.reconcile("ns/web");
    expect(only(harness).spec?.containers[0]?.image).toBe("nginx:1.27");
    await harness.clock.advance(1);
    await harness.reconciler.reconcile("ns/web");
    expect(only(harness).spec?.containers[0]?.image).toBe("nginx:1.28");
    expect(lifecycleStep(only(harness)).kind).toBe("operating");
  });
});

describe("PodOpsLifecycle before a deletion (kuperator's scale-in operation)", () => {
  it("takes a scaled-in pod out of traffic and drains it before deleting it; scaled back out before that, it returns to traffic", async () => {
    const harness = await inService(2);
    harness.applyCollaSet(collaSet({ replicas: 1 }));
    await harness.reconciler.reconcile("ns/web");
    const leaving = harness.pods.list("ns").find((pod) => pod.metadata?.labels?.[lifecycleLabel("operationType")] === "scale-in")!;
    expect(leaving.metadata?.labels).toMatchObject({ "podopslifecycle.kusionstack.io/preparing-to-delete": expect.stringMatching(/^\d+$/) as unknown, [lifecycleLabel("operationPermission", "collaset", "scale-in")]: expect.stringMatching(/^\d+$/) as unknown });
    expect(gate(leaving)).toBe("False");
    expect(harness.writes.filter((write) => write.startsWith("pods.delete"))).toEqual([]);

    // Replicas back to 2 before it is deleted: it stays, back in traffic, its operation's labels gone.
    harness.applyCollaSet(collaSet({ replicas: 2 }));
    await harness.reconciler.reconcile("ns/web");
    const kept = harness.pods.get("ns", leaving.metadata!.name!)!;
    expect(lifecycleLabels(kept)).toEqual([]);
    expect(gate(kept)).toBe("True");

    // Scaled in again: deleted once drained.
    harness.runPods();
    harness.applyCollaSet(collaSet({ replicas: 1 }));
    await harness.reconciler.reconcile("ns/web");
    harness.runPods();
    await harness.reconciler.reconcile("ns/web");
    expect(harness.pods.list("ns")).toHaveLength(2);
    await harness.clock.advance(DRAIN_MS);
    await harness.reconciler.reconcile("ns/web");
    expect(harness.pods.list("ns")).toHaveLength(1);
  });
});

describe("PodOpsLifecycle around a replace (to-replace)", () => {
  it("brings the surge pod into service, then takes the origin out of traffic and deletes it", async () => {
    const harness = await inService(1);
    const origin = harness.pods.list("ns")[0]!;
    harness.pods.upsert({ ...origin, metadata: { ...origin.metadata, labels: { ...origin.metadata?.labels, "collaset.kusionstack.io/to-replace": "true" }, resourceVersion: "replace" } });
    await harness.reconciler.reconcile("ns/web");
    const surge = harness.pods.list("ns").find((pod) => pod.metadata?.name !== origin.metadata?.name)!;
    expect(surge.spec?.readinessGates).toEqual([{ conditionType: SERVICE_READY_GATE }]);
    harness.runPods();
    await harness.reconciler.reconcile("ns/web");
    // The surge pod's gate goes True; the origin still serves.
    expect(gate(harness.pods.get("ns", surge.metadata!.name!)!)).toBe("True");
    expect(gate(harness.pods.get("ns", origin.metadata!.name!)!)).toBe("True");
    harness.runPods();
    await harness.reconciler.reconcile("ns/web");
    harness.runPods();
    await harness.reconciler.reconcile("ns/web");
    // The surge pod serves: the origin leaves traffic in a scale-in operation, then goes.
    expect(harness.pods.get("ns", origin.metadata!.name!)!.metadata?.labels?.[lifecycleLabel("operationType")]).toBe("scale-in");
    harness.runPods();
    await harness.clock.advance(DRAIN_MS);
    await harness.reconciler.reconcile("ns/web");
    await harness.reconciler.reconcile("ns/web");
    expect(harness.pods.list("ns").map((pod) => pod.metadata?.name)).toEqual([surge.metadata?.name]);
  });

  it("does not trust a service-available label written by hand on a surge pod that is not Ready: the origin keeps serving and the label is taken off", async () => {
    // Kuperator's "Exclude replace origin pod" / "Exclude replace new pod" write the label by hand.
    const harness = await inService(1);
    const origin = harness.pods.list("ns")[0]!;
    harness.pods.upsert({ ...origin, metadata: { ...origin.metadata, labels: { ...origin.metadata?.labels, "collaset.kusionstack.io/to-replace": "true" }, resourceVersion: "replace" } });
    await harness.reconciler.reconcile("ns/web");
    const surge = harness.pods.list("ns").find((pod) => pod.metadata?.name !== origin.metadata?.name)!;
    harness.pods.upsert({ ...surge, metadata: { ...surge.metadata, labels: { ...surge.metadata?.labels, [SERVICE_AVAILABLE_LABEL]: "true" }, resourceVersion: "by-hand" } });
    await harness.reconciler.reconcile("ns/web");
    await harness.clock.advance(DRAIN_MS);
    await harness.reconciler.reconcile("ns/web");
    expect(harness.pods.list("ns")).toHaveLength(2);
    const kept = harness.pods.get("ns", origin.metadata!.name!)!;
    expect(kept.metadata?.labels?.[lifecycleLabel("operating")]).toBeUndefined();
    expect(gate(kept)).toBe("True");
    expect(harness.pods.get("ns", surge.metadata!.name!)!.metadata?.labels?.[SERVICE_AVAILABLE_LABEL]).toBeUndefined();
  });
});

describe("readyToOperate", () => {
  const pod = (conditions: { type: string; status: string }[], finalizers: string[] = []): Pod => ({
    metadata: { name: "p", finalizers },
    spec: { containers: [], readinessGates: [{ conditionType: SERVICE_READY_GATE }] },
    status: { conditions },
  });
  it("waits for the gate False, then the kubelet's Ready False, then finalizers, then the drain delay", () => {
    expect(readyToOperate(pod([]), 0, 10_000, 1000)).toMatchObject({ ready: false, reason: expect.stringContaining("to be False") as unknown });
    expect(readyToOperate(pod([{ type: SERVICE_READY_GATE, status: "False" }, { type: "Ready", status: "True" }]), 0, 10_000, 1000)).toMatchObject({ ready: false, reason: "waiting for the kubelet to mark the pod not Ready" });
    const out = [{ type: SERVICE_READY_GATE, status: "False" }, { type: "Ready", status: "False" }];
    expect(readyToOperate(pod(out, ["prot.podopslifecycle.kusionstack.io/a", "other"]), 0, 10_000, 1000)).toMatchObject({ ready: false, reason: "waiting for protection finalizers prot.podopslifecycle.kusionstack.io/a to be removed" });
    expect(readyToOperate(pod(out), 9500, 10_000, 1000)).toEqual({ ready: false, reason: "draining for 1s more", retryInMs: 500 });
    expect(readyToOperate(pod(out), 9000, 10_000, 1000)).toEqual({ ready: true });
  });

  it("counts the drain delay from when the kubelet marked the pod not Ready, not from an earlier start", () => {
    // The operation began at 0; the kubelet was slow and marked the pod not Ready at 8 s (whole seconds: up to 8.999 s).
    const slow = [{ type: SERVICE_READY_GATE, status: "False" }, { type: "Ready", status: "False", lastTransitionTime: new Date(8_000).toISOString().replace(".000", "") }];
    expect(readyToOperate(pod(slow), 0, 9_000, 2000)).toEqual({ ready: false, reason: "draining for 2s more", retryInMs: 1999 });
    expect(readyToOperate(pod(slow), 0, 10_998, 2000)).toMatchObject({ ready: false, retryInMs: 1 });
    expect(readyToOperate(pod(slow), 0, 10_999, 2000)).toEqual({ ready: true });
    // A not-Ready time before the operation began does not shorten the delay.
    const early = [{ type: SERVICE_READY_GATE, status: "False" }, { type: "Ready", status: "False", lastTransitionTime: new Date(1_000).toISOString() }];
    expect(readyToOperate(pod(early), 5_000, 6_000, 2000)).toMatchObject({ ready: false, retryInMs: 1000 });
    // No delay asked for: the pod goes as soon as it is out of traffic, whatever the second it left in.
    expect(readyToOperate(pod(slow), 0, 8_100, 0)).toEqual({ ready: true });
    // Without the gate the kubelet's Ready says nothing of traffic: the delay runs from the start.
    const ungated: Pod = { ...pod(slow), spec: { containers: [] } };
    expect(readyToOperate(ungated, 0, 2_000, 2000)).toEqual({ ready: true });
  });
});
