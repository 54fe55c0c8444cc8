// Traffic-safe CollaSet updates on the real node: a client sends requests to the pod IPs the
// Service's EndpointSlice lists as ready while a decoration's sidecar image rolls out in place.
// With PodOpsLifecycle the EndpointSlice marks each pod not ready before its sidecar restarts
// and ready again after, and no request fails; without it the sidecar restarts while the pod is
// still listed ready. A protection finalizer holds an update back until it is released, and a
// PodDisruptionBudget with maxUnavailable 0 holds a recreation back, reported in status.
// TRAFFIC_REPLICAS (default 3) sizes the rollout; the figures are printed for the record.
import { describe, expect } from "vitest";
import { createKubeClient } from "../../src/kube/client.ts";
import { testImage } from "../node/test-images.ts";
import { allowNoDisruption, removeDisruptionBudget } from "../support/disruption-budget.ts";
import { apply } from "../support/collaset-world.ts";
import { clients, eventually, kubeConfig, kubectl, test } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";
import { PodWatch } from "../support/pod-watch.ts";
import { expectOutOfTrafficAroundEachRestart, podsReady, reportFigures, rolloutUnderTraffic, SERVICE_READY_GATE as GATE, type RolloutFigures } from "../support/traffic.ts";

const REPLICAS = Number(process.env.TRAFFIC_REPLICAS ?? "3");
const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };

function collaSetYaml(namespace: string, options: { replicas: number; image?: string; policy?: string; maxUnavailable?: number }): string {
  return `
apiVersion: apps.kusionstack.io/v1alpha1
kind: CollaSet
metadata: { name: web, namespace: ${namespace} }
spec:
  replicas: ${options.replicas}
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      terminationGracePeriodSeconds: 2
      automountServiceAccountToken: false
      containers:
        - name: app
          image: ${options.image ?? testImage("app")}
  updateStrategy:
    podUpgradePolicy: ${options.policy ?? "InPlaceIfPossible"}
    rollingUpdate: { maxUnavailable: ${options.maxUnavailable ?? 1} }
`;
}

async function collaSetStatus(namespace: string): Promise<{ conditions?: { type: string; status: string; reason?: string; message?: string }[]; availableReplicas?: number; updatedAvailableReplicas?: number }> {
  const object = (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "collasets", namespace, name: "web" })) as { status?: object };
  return object.status ?? {};
}

/** The rollout with an operator started with `args`; its figures printed under `label`. */
async function rolloutWith(namespace: string, args: readonly string[], label: string): Promise<RolloutFigures> {
  const operator = await startOperator({ args });
  try {
    const figures = await rolloutUnderTraffic(namespace, REPLICAS, () => apply(collaSetYaml(namespace, { replicas: REPLICAS })));
    reportFigures("traffic-safe-updates", label, REPLICAS, figures);
    return figures;
  } finally {
    expect(await operator.stop()).toBe(0);
  }
}

describe("traffic-safe updates on the real node", () => {
  test("with PodOpsLifecycle, each pod leaves the EndpointSlice before its sidecar restarts, returns after, and no request fails", async ({ namespace }) => {
    const figures = await rolloutWith(namespace, ["--lifecycle-drain-delay=2s"], "with PodOpsLifecycle");
    expectOutOfTrafficAroundEachRestart(figures, REPLICAS);
  });

  test("without PodOpsLifecycle, the sidecar restarts while the EndpointSlice still lists its pod ready", async ({ namespace }) => {
    const figures = await rolloutWith(namespace, ["--pod-ops-lifecycle=false"], "without PodOpsLifecycle");
    expect(figures.pods.size).toBe(REPLICAS);
    // Read in the pod object that carries the new image: the Ready condition the EndpointSlice
    // follows. (Comparing with the EndpointSlice watch's own times races two watch streams.)
    for (const [ip, pod] of figures.pods) expect(pod.readyAtSpecChange, `${ip}: still Ready, so listed ready, when its sidecar's image changed`).toBe(true);
  });

  test("a protection finalizer holds the update back until it is released; the wait is reported; the operation lasts until the finalizer the pod's available-conditions expect is back", async ({ namespace }) => {
    const operator = await startOperator({ args: ["--lifecycle-drain-delay=1s", "--lifecycle-stuck-after=3s"] });
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    try {
      await podsReady(watch, 1, () => apply(collaSetYaml(namespace, { replicas: 1 })));
      const pod = watch.pods()[0]!;
      const name = pod.metadata!.name!;
      const finalizer = "prot.podopslifecycle.kusionstack.io/test-traffic";
      // A traffic controller's finalizer, and (kube-api's PodAvailableConditions) the finalizer that says the pod is back in its rotation.
      const expected = JSON.stringify({ expectedFinalizers: { [`Service/${namespace}/web`]: finalizer } });
      await kubectl(["patch", "pod", name, "-n", namespace, "--type=json", "-p", JSON.stringify([
        { op: "add", path: "/metadata/finalizers", value: [finalizer] },
        { op: "add", path: `/metadata/annotations`, value: { ...watch.get(name)?.metadata?.annotations, "pod.kusionstack.io/available-conditions": expected } },
      ])]);
      await apply(collaSetYaml(namespace, { replicas: 1, image: testImage("app", "2") }));
      // Out of traffic, and held: the status says by what.
      await watch.waitFor(() => (watch.get(name)?.status?.conditions?.some((c) => c.type === GATE && c.status === "False") ? true : undefined), 60_000, "the gate's condition False");
      await eventually(async () => {
        const failure = (await collaSetStatus(namespace)).conditions?.find((c) => c.type === "ReplicaFailure");
        return failure?.status === "True" && failure.message?.includes(finalizer) === true ? true : undefined;
      }, 60_000, "the CollaSet to report the protection finalizer it waits for");
      const held = watch.get(name)!;
      expect(held.spec!.containers[0]!.image).toBe(testImage("app"));
      expect(held.status!.containerStatuses!.find((c) => c.name === "app")!.image).toBe(testImage("app"));
      const events = await clients().core.listNamespacedEvent({ namespace, fieldSelector: "reason=LifecycleStuck" });
      expect(events.items.some((event) => event.message?.includes(finalizer))).toBe(true);

      await kubectl(["patch", "pod", name, "-n", namespace, "--type=json", "-p", JSON.stringify([{ op: "remove", path: "/metadata/finalizers" }])]);
      // Updated in place and running, but the finalizer traffic is expected to put back is not:
      // the operation (out of traffic) lasts, and the pod does not count as available.
      const operated = await watch.waitFor(() => {
        const current = watch.get(name);
        const app = current?.status?.containerStatuses?.find((c) => c.name === "app");
        return app?.image === testImage("app", "2") && app.ready && current?.metadata?.labels?.["operated.podopslifecycle.kusionstack.io/collaset"] !== undefined ? current : undefined;
      }, 120_000, "the update in place, operated");
      expect(operated.metadata!.uid).toBe(pod.metadata!.uid);
      await eventually(async () => ((await collaSetStatus(namespace)).conditions?.find((c) => c.type === "ReplicaFailure")?.message?.includes("available-conditions") === true ? true : undefined), 60_000, "the CollaSet to report the expected finalizer it waits for");
      const waiting = watch.get(name)!;
      expect(waiting.status!.conditions!.find((c) => c.type === GATE)!.status).toBe("False");
      expect(waiting.metadata!.labels!["podopslifecycle.kusionstack.io/service-available"]).toBeUndefined();
      expect((await collaSetStatus(namespace)).availableReplicas ?? 0).toBe(0);

      // Traffic takes it back: the operation ends, the pod is in service and service-available.
      await kubectl(["patch", "pod", name, "-n", namespace, "--type=json", "-p", JSON.stringify([{ op: "add", path: "/metadata/finalizers", value: [finalizer] }])]);
      const done = await watch.waitFor(() => {
        const current = watch.get(name);
        const labels = Object.keys(current?.metadata?.labels ?? {}).filter((key) => key.endsWith(".podopslifecycle.kusionstack.io/collaset"));
        return labels.length === 0 && current?.metadata?.labels?.["podopslifecycle.kusionstack.io/service-available"] !== undefined && current.status?.conditions?.some((c) => c.type === GATE && c.status === "True") ? current : undefined;
      }, 120_000, "the operation to end once the expected finalizer is back");
      expect(done.metadata!.uid).toBe(pod.metadata!.uid);
      await eventually(async () => ((await collaSetStatus(namespace)).availableReplicas === 1 ? true : undefined), 60_000, "the CollaSet to count the pod available");
      await kubectl(["patch", "pod", name, "-n", namespace, "--type=json", "-p", JSON.stringify([{ op: "remove", path: "/metadata/finalizers" }])]);
    } finally {
      await watch.stop();
      expect(await operator.stop()).toBe(0);
    }
  });

  test("a PodDisruptionBudget with maxUnavailable 0 holds a recreation back, reported; never forced", async ({ namespace }) => {
    const operator = await startOperator({ args: ["--lifecycle-drain-delay=1s"] });
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    try {
      await podsReady(watch, 1, () => apply(collaSetYaml(namespace, { replicas: 1, policy: "Recreate" })));
      const pod = watch.pods()[0]!;
      await allowNoDisruption(namespace);
      await apply(collaSetYaml(namespace, { replicas: 1, policy: "Recreate", image: testImage("app", "2") }));
      await eventually(async () => {
        const failure = (await collaSetStatus(namespace)).conditions?.find((c) => c.type === "ReplicaFailure");
        return failure?.status === "True" && failure.message?.includes("eviction refused") === true ? failure : undefined;
      }, 60_000, "the CollaSet to report the refused eviction");
      const events = await clients().core.listNamespacedEvent({ namespace, fieldSelector: "reason=EvictionRefused" });
      expect(events.items.length).toBeGreaterThan(0);
      const kept = watch.get(pod.metadata!.name!);
      expect(kept?.metadata?.uid).toBe(pod.metadata!.uid);
      expect(kept?.metadata?.deletionTimestamp).toBeUndefined();

      await removeDisruptionBudget(namespace);
      const replacement = await watch.waitFor(() => watch.pods().find((each) => each.metadata?.uid !== pod.metadata!.uid && each.status?.containerStatuses?.[0]?.image === testImage("app", "2") && each.status.conditions?.some((c) => c.type === "Ready" && c.status === "True")), 120_000, "the replacement Ready");
      expect(replacement.spec!.readinessGates).toEqual([{ conditionType: GATE }]);
    } finally {
      await watch.stop();
      expect(await operator.stop()).toBe(0);
    }
  });
});
