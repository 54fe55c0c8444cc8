import { describe, expect, it } from "vitest";
import { apiError, collaSet, patchNotApplied, ReconcilerHarness, webhookUnreachable } from "./reconciler-harness.ts";

const replicaFailure = (harness: ReconcilerHarness) => harness.status("ns", "web")?.conditions?.find((condition) => condition.type === "ReplicaFailure");

/** A CollaSet with `replicas` running pods, synced. */
async function running(replicas: number, options: { maxUnavailable?: number } = {}): Promise<ReconcilerHarness> {
  const harness = new ReconcilerHarness();
  harness.applyCollaSet(collaSet({ replicas, ...options }));
  await harness.reconciler.reconcile("ns/web");
  harness.runPods();
  await harness.reconciler.reconcile("ns/web");
  expect(harness.pods.list("ns")).toHaveLength(replicas);
  return harness;
}

describe("CollaSet reconciler: writes that fail", () => {
  it("reports a write that will be retried in ReplicaFailure, with what it was doing", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(collaSet({ replicas: 1 }));
    harness.failNext("pods.create", webhookUnreachable());
    await expect(harness.reconciler.reconcile("ns/web")).rejects.toThrow(/creating instance 0: Internal error occurred: failed calling webhook/);
    expect(replicaFailure(harness)).toMatchObject({ status: "True", reason: "WriteFailed", message: expect.stringMatching(/^creating instance 0: Internal error occurred: failed calling webhook/) as unknown });

    // The next attempt succeeds: the condition clears.
    await harness.reconciler.reconcile("ns/web");
    expect(harness.pods.list("ns")).toHaveLength(1);
    expect(replicaFailure(harness)).toMatchObject({ status: "False", reason: "None" });
  });

  it("lets an in-place update that lost a race to another writer go quietly: no event, no failure, no slow retry", async () => {
    const harness = await running(1);
    harness.applyCollaSet(collaSet({ replicas: 1, image: "nginx:1.28" }));
    harness.failNext("pods.jsonPatch", patchNotApplied());
    expect(await harness.reconciler.reconcile("ns/web")).toBeUndefined();
    expect(harness.events.filter((event) => event.type === "Warning")).toEqual([]);
    expect(replicaFailure(harness)).toMatchObject({ status: "False" });

    // The change that won requeues the CollaSet; this time the update goes through.
    await harness.reconciler.reconcile("ns/web");
    expect(harness.pods.list("ns").map((pod) => pod.spec?.containers[0]?.image)).toEqual(["nginx:1.28"]);
  });

  it("lets a recreation whose finalizer patch lost a race go quietly, having deleted nothing", async () => {
    const harness = await running(1);
    harness.applyCollaSet(collaSet({ replicas: 1, env: "green" }));
    harness.failNext("pods.jsonPatch", patchNotApplied());
    expect(await harness.reconciler.reconcile("ns/web")).toBeUndefined();
    expect(harness.writes.filter((write) => write.startsWith("pods.delete"))).toEqual([]);
    expect(replicaFailure(harness)).toMatchObject({ status: "False" });

    await harness.reconciler.reconcile("ns/web");
    expect(harness.pods.list("ns").map((pod) => pod.metadata?.deletionTimestamp != null)).toEqual([true]);
  });

  it("still reports a refused in-place update as the API server's verdict", async () => {
    const harness = await running(1);
    harness.applyCollaSet(collaSet({ replicas: 1, image: "nginx:1.28" }));
    harness.failNext("pods.jsonPatch", apiError(422, {
      reason: "Invalid", message: 'Pod "web-2" is invalid: spec: Forbidden: pod updates may not change fields other than ...',
      details: { name: "web-2", kind: "Pod", causes: [{ reason: "FieldValueForbidden", field: "spec" }] },
    }));
    expect(await harness.reconciler.reconcile("ns/web")).toEqual({ requeueAfter: 30_000 });
    expect(harness.events.filter((event) => event.type === "Warning").map((event) => event.reason)).toEqual(["FailedUpdate"]);
    expect(replicaFailure(harness)).toMatchObject({ status: "True", reason: "WriteFailed", message: expect.stringMatching(/^updating pod web-\d+ in place: Pod "web-2" is invalid/) as unknown });
  });
});

describe("CollaSet reconciler: namespaces are walls", () => {
  it("never counts a pod of another namespace that names the CollaSet's UID as its replica", async () => {
    const harness = await running(2);
    const [victim] = harness.pods.list("ns");
    // Copied from a real replica, owner reference and all, into the attacker's namespace.
    harness.pods.upsert({ ...structuredClone(victim!), metadata: { ...structuredClone(victim!.metadata), namespace: "attacker", name: "imposter", uid: "uid-imposter" } });
    const before = harness.pods.list("ns").map((pod) => pod.metadata?.uid).sort();
    const writes = harness.writes.length;
    await harness.reconciler.reconcile("ns/web");
    expect(harness.writes.slice(writes)).toEqual([]);
    expect(harness.pods.list("ns").map((pod) => pod.metadata?.uid).sort()).toEqual(before);
    expect(harness.pods.get("attacker", "imposter")).toBeDefined();
    expect(harness.status("ns", "web")?.replicas).toBe(2);
  });
});

describe("CollaSet reconciler: what holds its pods' decorations back is said (DESIGN §10)", () => {
  const logging = (image: string) => ({
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name: "logging", namespace: "ns", creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: { selector: { matchLabels: { app: "web" } }, template: { containers: [{ name: "log-shipper", image }] } },
  });

  it("reports every pod a paused CollaSet keeps from a decoration's new revision, with the CollaSet as holder", async () => {
    const harness = new ReconcilerHarness();
    harness.decorations.push(logging("shipper:1"));
    harness.applyCollaSet(collaSet({ replicas: 2 }));
    await harness.reconciler.reconcile("ns/web");
    harness.runPods();
    await harness.reconciler.reconcile("ns/web");
    const pods = harness.pods.list("ns");
    expect(pods.map((pod) => pod.spec?.containers.find((container) => container.name === "log-shipper")?.image)).toEqual(["shipper:1", "shipper:1"]);
    expect(harness.rolloutReports.size).toBe(0);

    harness.applyCollaSet(collaSet({ replicas: 2, paused: true }));
    harness.decorations.splice(0, 1, logging("shipper:2"));
    await harness.reconciler.reconcile("ns/web");
    const key = `ns/CollaSet/web/${harness.collaSets.get("ns", "web")!.metadata.uid ?? ""}`;
    for (const pod of pods) {
      expect(harness.rolloutReports.get(key, pod.metadata?.name ?? "")).toEqual({
        moving: ["logging"],
        blocked: { reason: "Paused", message: `pod ${pod.metadata?.name ?? ""}: CollaSet web is paused (spec.paused): its pods keep what they have until it is resumed` },
      });
    }
    // Resumed: the pods move, and nothing is held any more.
    harness.applyCollaSet(collaSet({ replicas: 2 }));
    await harness.reconciler.reconcile("ns/web");
    expect([...pods].some((pod) => harness.rolloutReports.get(key, pod.metadata?.name ?? "")?.blocked !== undefined)).toBe(false);
  });
});
