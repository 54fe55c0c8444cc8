// Issue 8: the controller's kube-apiserver is killed in the middle of a rollout that recreates
// every pod, and comes back after longer than the leader's renew deadline. The controller must
// ride it out (watches fail, leadership is lost and won again, caches relist) and finish the
// rollout without losing or duplicating a pod or dropping a decoration. The private API server
// shares the run's etcd, so the test and the simulated kubelet keep using the shared one.
import { describe, expect } from "vitest";
import { createKubeClient } from "../src/kube/client.ts";
import { useControllerApiServer } from "./support/controller-api-server.ts";
import { clients, kubeConfig, test } from "./support/cluster.ts";
import { apply, collaSetPods, collaSetYaml, decorationYaml, expectConverged, isCollaSetPod, sidecarsOf, waitSettled } from "./support/collaset-world.ts";
import { startOperator, troubleLines } from "./support/operator.ts";
import { PodWatch } from "./support/pod-watch.ts";
import { watchInvariants, worstMoment } from "./support/rollout-invariants.ts";

const REPLICAS = 10;
const MAX_UNAVAILABLE = 2;
const v1 = ["log-shipper=e2e.local/sidecar:1"];
const withMetrics = ["log-shipper=e2e.local/sidecar:1", "metrics=e2e.local/logger:1"];

const controller = useControllerApiServer();

describe("kube-apiserver stopped and restarted mid-rollout", () => {
  test("the controller reconnects and finishes the rollout: no pod lost or duplicated, no decoration dropped", async ({ namespace, onTestFailed }) => {
    const operator = await startOperator({ kubeconfig: controller.kubeconfig, args: ["--leader-elect", `--leader-election-id=${namespace}`] });
    onTestFailed(async () => {
      console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`);
      // What the controller did to each pod and why: a pod recreated twice names its reasons here.
      const events = await clients().core.listNamespacedEvent({ namespace });
      const lines = events.items
        .filter((event) => event.involvedObject.kind === "CollaSet")
        .map((event) => `${(event.lastTimestamp ?? event.eventTime)?.toISOString() ?? ""} ${event.reason ?? ""} x${event.count ?? 1}: ${event.message ?? ""}`)
        .sort();
      console.log(`the CollaSet's events:\n${lines.join("\n")}`);
    });
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    try {
      await apply(collaSetYaml(namespace, { replicas: REPLICAS, maxUnavailable: MAX_UNAVAILABLE }));
      await apply(decorationYaml(namespace, v1));
      await waitSettled(namespace, REPLICAS, v1);
      const invariants = watchInvariants(watch, REPLICAS);

      // A new sidecar cannot be added to a live pod: every pod is recreated, two at a time.
      await apply(decorationYaml(namespace, withMetrics));
      await watch.waitFor(() => (watch.pods().filter(isCollaSetPod).some((pod) => pod.metadata?.deletionTimestamp != null || sidecarsOf(pod).length === 2) ? true : undefined), 60_000, "the rollout to start");
      await controller.api.kill();
      // Down until the leader's renew deadline (10 s) has passed and it has stopped leading: it has to win the lease back.
      await operator.waitForLog('"msg":"stopped leading"', 60_000);
      const duringOutage = (await collaSetPods(namespace)).map((pod) => `${pod.metadata?.name ?? ""}:${pod.metadata?.deletionTimestamp == null ? "live" : "terminating"}`).sort();
      await controller.api.start();

      const convergedMs = await expectConverged(namespace, { replicas: REPLICAS, sidecars: withMetrics });
      const report = invariants.stop();
      expect(report.duplicates).toEqual([]);
      expect(report.maxUnavailable, worstMoment(report)).toBeLessThanOrEqual(MAX_UNAVAILABLE);
      // The ten pods before plus exactly one replacement each: nothing recreated twice, no stray pod.
      expect(report.uids.size).toBe(2 * REPLICAS);
      // The outage was real for the controller: its watches failed and it lost the lease.
      expect(operator.child.exitCode).toBeNull();
      expect(operator.logs()).toContain('"msg":"stopped leading"');
      console.log(`apiserver restart: converged ${convergedMs} ms after the API server came back; pods during the outage: ${duringOutage.join(" ")}`);
    } finally {
      await watch.stop();
      expect(await operator.stop()).toBe(0);
    }
  });
});
