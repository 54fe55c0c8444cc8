// Issue 8: another writer keeps changing the labels and annotations of the CollaSet's pods and
// of the CollaSet itself, back to back, through two rollouts (one in place, one recreating
// every pod). Every write of the controller guarded by a resourceVersion can lose the race;
// the rollouts must still converge — pods and statuses — while the storm goes on.
import { afterAll, beforeAll, describe, expect } from "vitest";
import { createKubeClient } from "../src/kube/client.ts";
import { clients, kubeConfig, test } from "./support/cluster.ts";
import { apply, collaSetYaml, readCollaSet, decorationYaml, expectConverged, isCollaSetPod, waitSettled } from "./support/collaset-world.ts";
import { startKubelet, type Kubelet } from "./support/kubelet.ts";
import { startOperator, troubleLines } from "./support/operator.ts";
import { PodWatch } from "./support/pod-watch.ts";
import { watchInvariants, worstMoment } from "./support/rollout-invariants.ts";

const REPLICAS = 10;
const MAX_UNAVAILABLE = 3;
const v1 = ["log-shipper=e2e.local/sidecar:1"];
const v2 = ["log-shipper=e2e.local/sidecar:2"];
const v2WithMetrics = ["log-shipper=e2e.local/sidecar:2", "metrics=e2e.local/logger:1"];

let kubelet: Kubelet;
beforeAll(async () => {
  kubelet = await startKubelet();
});
afterAll(async () => {
  await kubelet.stop();
});

interface Storm {
  writes: () => number;
  stop(): Promise<{ writes: number; failures: string[]; claimedFailures: string[] }>;
}

/** Writers that update metadata of random live pods of the CollaSet, and of the CollaSet, as fast as the API server answers. */
function startStorm(namespace: string, watch: PodWatch, podWriters: number): Storm {
  const kube = createKubeClient(kubeConfig());
  let running = true;
  let writes = 0;
  const failures: string[] = [];
  const write = async (what: string, patch: () => Promise<unknown>) => {
    try {
      await patch();
      writes++;
    } catch (error) {
      // A pod deleted between the pick and the write is no failure of the storm.
      if ((error as { code?: number }).code !== 404) failures.push(`${what}: ${String(error)}`);
    }
  };
  const podWriter = async () => {
    while (running) {
      const pods = watch.pods().filter((pod) => isCollaSetPod(pod) && pod.metadata?.deletionTimestamp == null);
      const pod = pods[Math.floor(Math.random() * pods.length)];
      if (pod === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const seq = String(writes);
      await write(`pod ${pod.metadata?.name ?? ""}`, () => kube.core.pods.mergePatch(namespace, pod.metadata?.name ?? "", { metadata: { labels: { storm: seq }, annotations: { "storm.example.com/seq": seq } } }));
    }
  };
  const collaSetWriter = async () => {
    while (running) {
      const seq = String(writes);
      await write("collaset", () => kube.kusion.collaSets.mergePatch(namespace, "web", { metadata: { labels: { storm: seq }, annotations: { "storm.example.com/seq": seq } } }));
    }
  };
  // What the CollaSet's status claims meanwhile: losing a race is not a failure to report.
  const claimedFailures = new Set<string>();
  const statusSampler = async () => {
    while (running) {
      const failure = (await readCollaSet(namespace)).status?.conditions?.find((condition) => condition.type === "ReplicaFailure" && condition.status === "True");
      if (failure !== undefined) claimedFailures.add(`${failure.reason ?? ""}: ${failure.message ?? ""}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const done = Promise.all([...Array.from({ length: podWriters }, podWriter), collaSetWriter(), statusSampler()]);
  return {
    writes: () => writes,
    async stop() {
      running = false;
      await done;
      return { writes, failures, claimedFailures: [...claimedFailures] };
    },
  };
}

/** Warnings pod-decorator's controllers reported (a real kubelet's own, e.g. about DNS, are not ours). */
async function warningEvents(namespace: string): Promise<string[]> {
  const events = await clients().core.listNamespacedEvent({ namespace, fieldSelector: "type=Warning" });
  return events.items.filter((event) => event.reportingComponent === "pod-decorator" || event.source?.component === "pod-decorator").map((event) => `${event.involvedObject.kind ?? ""}/${event.involvedObject.name ?? ""} ${event.reason ?? ""}: ${event.message ?? ""}`);
}

describe("conflict storm", () => {
  test("rollouts converge while another writer keeps updating the pods and the CollaSet", async ({ namespace, onTestFailed }) => {
    const operator = await startOperator();
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    let storm: Storm | undefined;
    try {
      await apply(collaSetYaml(namespace, { replicas: REPLICAS, maxUnavailable: MAX_UNAVAILABLE }));
      await apply(decorationYaml(namespace, v1));
      await waitSettled(namespace, REPLICAS, v1);
      const invariants = watchInvariants(watch, REPLICAS);
      storm = startStorm(namespace, watch, 6);
      const started = Date.now();

      await apply(decorationYaml(namespace, v2));
      const inPlaceMs = await expectConverged(namespace, { replicas: REPLICAS, sidecars: v2 });
      const afterInPlace = invariants.report();
      expect(afterInPlace.uids.size).toBe(REPLICAS);
      const writesDuringInPlace = storm.writes();

      await apply(decorationYaml(namespace, v2WithMetrics));
      const recreateMs = await expectConverged(namespace, { replicas: REPLICAS, sidecars: v2WithMetrics });
      const result = await storm.stop();
      storm = undefined;
      const report = invariants.stop();
      expect(result.failures).toEqual([]);
      expect(result.claimedFailures).toEqual([]);
      expect(await warningEvents(namespace)).toEqual([]);
      expect(report.duplicates).toEqual([]);
      expect(report.maxUnavailable, worstMoment(report)).toBeLessThanOrEqual(MAX_UNAVAILABLE);
      expect(report.uids.size).toBe(2 * REPLICAS);
      // Still true once the storm is over.
      await expectConverged(namespace, { replicas: REPLICAS, sidecars: v2WithMetrics }, 30_000);
      const seconds = (Date.now() - started) / 1000;
      console.log(`conflict storm: ${result.writes} foreign writes in ${seconds.toFixed(1)} s (${writesDuringInPlace} during the in-place rollout); in place converged in ${inPlaceMs} ms, recreation in ${recreateMs} ms`);
    } finally {
      await storm?.stop();
      await watch.stop();
      expect(await operator.stop()).toBe(0);
    }
  });
});
