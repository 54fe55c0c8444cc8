// A kuperator user's CollaSet operations on the real node, as kuperator's own end-to-end cases
// ("update pods by label", "operationDelaySeconds", "recreate pod with same revision") run them:
// with rollingUpdate.byLabel only the pod labelled collaset.kusionstack.io/update-included takes
// the new template, operationDelaySeconds after PodOpsLifecycle allowed it (the operate label),
// and the pod is service-available again after; a pod labelled collaset.kusionstack.io/to-delete
// is deleted and another takes its place.
import { describe, expect } from "vitest";
import { createKubeClient } from "../../src/kube/client.ts";
import { testImage } from "../node/test-images.ts";
import { applyNodeCollaSet } from "../support/node-collaset.ts";
import { clients, eventually, kubeConfig, kubectl, test } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";
import { PodWatch } from "../support/pod-watch.ts";

const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };
const DELAY_SECONDS = 4;
const OPERATE = "operate.podopslifecycle.kusionstack.io/collaset";
const SERVICE_AVAILABLE = "podopslifecycle.kusionstack.io/service-available";

function applyCollaSet(namespace: string, image: string): Promise<void> {
  return applyNodeCollaSet(namespace, { replicas: 3, image, spec: { updateStrategy: { operationDelaySeconds: DELAY_SECONDS, rollingUpdate: { byLabel: {} } } } });
}

interface Status { observedGeneration?: number; updatedRevision?: string; replicas?: number; availableReplicas?: number; updatedReplicas?: number }

async function collaSet(namespace: string): Promise<{ metadata: { generation: number }; status?: Status }> {
  return (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "collasets", namespace, name: "web" })) as { metadata: { generation: number }; status?: Status };
}

/** Unix nanoseconds (the protocol's time labels) as milliseconds. */
const labelTimeMs = (value: string) => Number(BigInt(value) / 1_000_000n);

describe("CollaSet operations by label on the real node", () => {
  test("byLabel updates only the labelled pod, operationDelaySeconds after the operate label; to-delete deletes a pod and another takes its place", async ({ namespace }) => {
    const operator = await startOperator({ args: ["--lifecycle-drain-delay=0s"] });
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    try {
      await applyCollaSet(namespace, testImage("app"));
      await watch.waitFor(() => {
        const serving = watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null && pod.metadata?.labels?.[SERVICE_AVAILABLE] !== undefined);
        return serving.length === 3 ? true : undefined;
      }, 120_000, "three service-available pods");
      const before = new Map(watch.pods().map((pod) => [pod.metadata!.name!, pod.metadata!.uid!]));

      // A new template: byLabel moves no pod by itself.
      await applyCollaSet(namespace, testImage("app", "2"));
      await eventually(async () => {
        const object = await collaSet(namespace);
        return object.status?.observedGeneration === object.metadata.generation && object.status.updatedReplicas === 0 ? true : undefined;
      }, 60_000, "the CollaSet to observe the new template");
      for (const pod of watch.pods()) expect(pod.spec!.containers[0]!.image, pod.metadata!.name).toBe(testImage("app"));

      // One pod labelled update-included: it alone is updated, in place, the delay after its operate label.
      const chosen = [...before.keys()].sort()[0]!;
      await kubectl(["label", "pod", chosen, "-n", namespace, "collaset.kusionstack.io/update-included=true"]);
      const permitted = await watch.waitFor(() => watch.get(chosen)?.metadata?.labels?.[OPERATE], 60_000, "the operate label");
      const changedAt = await watch.waitFor(() => (watch.get(chosen)?.spec?.containers[0]?.image === testImage("app", "2") ? Date.now() : undefined), 60_000, "the in-place update", 50);
      // Clocks: the operate label is the controller's, this process shares its machine.
      expect(changedAt - labelTimeMs(permitted)).toBeGreaterThanOrEqual(DELAY_SECONDS * 1000 - 1000);
      const back = await watch.waitFor(() => {
        const pod = watch.get(chosen);
        const app = pod?.status?.containerStatuses?.find((status) => status.name === "app");
        return app?.ready === true && app.image === testImage("app", "2") && pod?.metadata?.labels?.[SERVICE_AVAILABLE] !== undefined ? pod : undefined;
      }, 120_000, "the updated pod service-available again");
      expect(back.metadata!.uid).toBe(before.get(chosen));
      await eventually(async () => ((await collaSet(namespace)).status?.updatedReplicas === 1 ? true : undefined), 60_000, "updatedReplicas 1");
      for (const pod of watch.pods().filter((pod) => pod.metadata!.name !== chosen)) expect(pod.spec!.containers[0]!.image, pod.metadata!.name).toBe(testImage("app"));

      // to-delete: the pod goes, another is made (of the template revision its place holds), replicas stay 3.
      const doomed = [...before.keys()].sort()[1]!;
      await kubectl(["label", "pod", doomed, "-n", namespace, "collaset.kusionstack.io/to-delete=true"]);
      await watch.waitFor(() => {
        const live = watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null);
        const ready = live.filter((pod) => pod.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True"));
        return watch.get(doomed) === undefined && live.length === 3 && ready.length === 3 ? true : undefined;
      }, 120_000, "the labelled pod deleted and three pods ready");
      const replacement = watch.pods().find((pod) => !before.has(pod.metadata!.name!))!;
      expect(replacement.metadata!.labels!["collaset.kusionstack.io/to-delete"]).toBeUndefined();
      await eventually(async () => ((await collaSet(namespace)).status?.replicas === 3 ? true : undefined), 60_000, "status.replicas 3");
    } finally {
      await watch.stop();
      expect(await operator.stop()).toBe(0);
    }
  });
});
