// Issue 8: two replicas of serve with leader election; the leader is killed with SIGKILL in
// the middle of a rollout that recreates every pod — possibly between adding the recreate
// finalizer and deleting, or between deleting and creating the replacement. The other
// replica takes the Lease once it expires and finishes the rollout from what it finds.
import { afterAll, beforeAll, describe, expect } from "vitest";
import { createKubeClient } from "../src/kube/client.ts";
import { clients, eventually, kubeConfig, test } from "./support/cluster.ts";
import { apply, collaSetYaml, decorationYaml, expectConverged, isCollaSetPod, sidecarsOf, waitSettled } from "./support/collaset-world.ts";
import { startKubelet, type Kubelet } from "./support/kubelet.ts";
import { startOperator, troubleLines, type Operator } from "./support/operator.ts";
import { PodWatch } from "./support/pod-watch.ts";
import { watchInvariants, worstMoment } from "./support/rollout-invariants.ts";

const REPLICAS = 12;
const MAX_UNAVAILABLE = 2;
const v1 = ["log-shipper=e2e.local/sidecar:1"];
const withMetrics = ["log-shipper=e2e.local/sidecar:1", "metrics=e2e.local/logger:1"];

let kubelet: Kubelet;
beforeAll(async () => {
  kubelet = await startKubelet();
});
afterAll(async () => {
  await kubelet.stop();
});

async function webhookUrl(): Promise<string> {
  const configuration = await clients().admission.readMutatingWebhookConfiguration({ name: "pod-decorator" });
  return configuration.webhooks?.[0]?.clientConfig.url ?? "";
}

describe("leader killed mid-rollout", () => {
  test("the other replica takes over and finishes the rollout", async ({ namespace, onTestFailed }) => {
    const electionArgs = ["--leader-elect", `--leader-election-id=${namespace}`];
    const leader = await startOperator({ args: electionArgs });
    let follower: Operator | undefined;
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    onTestFailed(() => console.log(`leader's warnings and errors:\n${troubleLines(leader.logs())}\nfollower's:\n${troubleLines(follower?.logs() ?? "")}`));
    try {
      await eventually(() => Promise.resolve(leader.logs().includes('"msg":"controllers starting"') ? true : undefined), 30_000, "the first replica to lead");
      follower = await startOperator({ args: electionArgs });
      const survivor = follower;
      // Both serve the webhook; the configurations name whoever published last, which must be the survivor.
      await eventually(async () => ((await webhookUrl()).includes(`:${survivor.port}/`) ? true : undefined), 30_000, "the webhook configurations to point at the follower");
      expect(follower.logs()).not.toContain('"msg":"controllers starting"');

      await apply(collaSetYaml(namespace, { replicas: REPLICAS, maxUnavailable: MAX_UNAVAILABLE }));
      await apply(decorationYaml(namespace, v1));
      await waitSettled(namespace, REPLICAS, v1);
      const invariants = watchInvariants(watch, REPLICAS);

      await apply(decorationYaml(namespace, withMetrics));
      await watch.waitFor(() => (watch.pods().filter(isCollaSetPod).some((pod) => pod.metadata?.deletionTimestamp != null || sidecarsOf(pod).length === 2) ? true : undefined), 60_000, "the rollout to start");
      await leader.kill("SIGKILL");
      const killedAt = Date.now();
      const replaced = watch.pods().filter((pod) => isCollaSetPod(pod) && sidecarsOf(pod).length === 2).length;

      const convergedMs = await expectConverged(namespace, { replicas: REPLICAS, sidecars: withMetrics }, 120_000);
      const report = invariants.stop();
      expect(report.duplicates).toEqual([]);
      expect(report.maxUnavailable, worstMoment(report)).toBeLessThanOrEqual(MAX_UNAVAILABLE);
      // The pods before plus exactly one replacement each.
      expect(report.uids.size).toBe(2 * REPLICAS);
      expect(follower.logs()).toContain('"msg":"controllers starting"');
      console.log(`leader kill: ${replaced} of ${REPLICAS} pods replaced at the kill; converged ${Date.now() - killedAt} ms after it (end-state wait ${convergedMs} ms)`);
    } finally {
      await watch.stop();
      await leader.kill("SIGKILL");
      if (follower !== undefined) expect(await follower.stop()).toBe(0);
    }
  });
});
