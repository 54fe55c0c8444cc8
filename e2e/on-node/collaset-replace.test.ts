// CollaSet replace on the real node, as kuperator's end-to-end cases run it ("replace pod by
// label", "cancel replace pod by label", "replace pod with update"): a pod labelled
// collaset.kusionstack.io/to-replace gets a surge pod with an id of its own, which is Ready
// before the origin leaves traffic; then the origin is deleted and the ResourceContext holds the
// surge pod's id alone. Removing the label while the surge pod does not serve deletes it.
// podUpgradePolicy Replace updates the same way: the new revision's pod first.
import { describe, expect } from "vitest";
import type { Pod } from "../../src/kube/objects.ts";
import { testImage } from "../node/test-images.ts";
import { applyNodeCollaSet } from "../support/node-collaset.ts";
import { clients, eventually, kubectl, test } from "../support/cluster.ts";
import { withOperatorWatching } from "../support/operator.ts";
import type { PodWatch } from "../support/pod-watch.ts";

const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };
const TO_REPLACE = "collaset.kusionstack.io/to-replace";
const ORIGIN = "collaset.kusionstack.io/replace-pair-origin-name";
const NEW_ID = "collaset.kusionstack.io/replace-pair-new-id";
const INSTANCE_ID = "collaset.kusionstack.io/instance-id";
const GATE = "pod.kusionstack.io/service-ready";

function collaSet(namespace: string, options: { image?: string; policy?: string; ready?: boolean } = {}): Promise<void> {
  return applyNodeCollaSet(namespace, {
    replicas: 1,
    ...(options.image === undefined ? {} : { image: options.image }),
    container: { readinessProbe: { exec: { command: [options.ready === false ? "false" : "true"] }, periodSeconds: 1 } },
    spec: { updateStrategy: { podUpgradePolicy: options.policy ?? "InPlaceIfPossible" } },
  });
}

const isReady = (pod: Pod | undefined) => pod?.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;
const live = (watch: PodWatch) => watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null);

async function contextIds(namespace: string): Promise<number[] | undefined> {
  try {
    const context = (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "resourcecontexts", namespace, name: "web" })) as { spec?: { contexts?: { id: number; data?: Record<string, string> }[] } };
    return (context.spec?.contexts ?? []).map((detail) => detail.id);
  } catch {
    return undefined;
  }
}

/** Runs `story` with an operator (PodOpsLifecycle on, no drain delay) and a watch of the namespace's pods. */
function withOperator(namespace: string, story: (watch: PodWatch) => Promise<void>): Promise<void> {
  return withOperatorWatching(namespace, { args: ["--lifecycle-drain-delay=0s"] }, story);
}

describe("CollaSet replace on the real node", () => {
  test("to-replace: the surge pod is Ready before the origin leaves traffic; the origin goes and the ResourceContext holds the new id", async ({ namespace }) => {
    await withOperator(namespace, async (watch) => {
      await collaSet(namespace);
      const origin = await watch.waitFor(() => live(watch).find((pod) => isReady(pod)), 120_000, "the first pod Ready");
      const originName = origin.metadata!.name!;
      expect(await contextIds(namespace)).toEqual([Number(origin.metadata!.labels![INSTANCE_ID])]);

      // When the origin's gate went False, and whether the surge pod was Ready then.
      let surgeReadyWhenOriginLeft: boolean | undefined;
      const stopListening = watch.onPod((pod) => {
        if (pod.metadata?.name !== originName || surgeReadyWhenOriginLeft !== undefined) return;
        if (pod.status?.conditions?.some((condition) => condition.type === GATE && condition.status === "False")) {
          surgeReadyWhenOriginLeft = live(watch).some((other) => other.metadata?.labels?.[ORIGIN] === originName && isReady(other));
        }
      });
      await kubectl(["label", "pod", originName, "-n", namespace, `${TO_REPLACE}=true`]);
      const surge = await watch.waitFor(() => live(watch).find((pod) => pod.metadata?.labels?.[ORIGIN] === originName), 60_000, "the surge pod");
      const surgeId = surge.metadata!.labels![INSTANCE_ID]!;
      expect(surgeId).not.toBe(origin.metadata!.labels![INSTANCE_ID]);
      await watch.waitFor(() => (watch.get(originName)?.metadata?.labels?.[NEW_ID] === surgeId ? true : undefined), 60_000, "the origin labelled with the surge pod's id");

      await watch.waitFor(() => (watch.get(originName) === undefined ? true : undefined), 120_000, "the origin deleted");
      stopListening();
      expect(surgeReadyWhenOriginLeft).toBe(true);
      const finished = await watch.waitFor(() => {
        const pod = watch.get(surge.metadata!.name!);
        return pod?.metadata?.labels?.[ORIGIN] === undefined && isReady(pod) ? pod : undefined;
      }, 60_000, "the surge pod Ready, its pair label gone");
      expect(live(watch).map((pod) => pod.metadata!.name)).toEqual([finished.metadata!.name]);
      await eventually(async () => (JSON.stringify(await contextIds(namespace)) === JSON.stringify([Number(surgeId)]) ? true : undefined), 60_000, "the ResourceContext to hold the surge pod's id alone");
    });
  });

  test("removing to-replace before the surge pod serves deletes the surge pod; the origin stays", async ({ namespace }) => {
    await withOperator(namespace, async (watch) => {
      await collaSet(namespace, { ready: false });
      const origin = await watch.waitFor(() => live(watch).find((pod) => pod.status?.containerStatuses?.[0]?.started === true), 120_000, "the first pod running (never Ready)");
      const originName = origin.metadata!.name!;
      await kubectl(["label", "pod", originName, "-n", namespace, `${TO_REPLACE}=true`]);
      const surge = await watch.waitFor(() => live(watch).find((pod) => pod.metadata?.labels?.[ORIGIN] === originName), 60_000, "the surge pod");
      await eventually(async () => ((await contextIds(namespace))?.length === 2 ? true : undefined), 60_000, "two ids recorded");

      await kubectl(["label", "pod", originName, "-n", namespace, `${TO_REPLACE}-`]);
      await watch.waitFor(() => (watch.get(surge.metadata!.name!) === undefined ? true : undefined), 120_000, "the surge pod deleted");
      await watch.waitFor(() => (watch.get(originName)?.metadata?.labels?.[NEW_ID] === undefined ? true : undefined), 60_000, "the origin's pair label removed");
      expect(live(watch).map((pod) => pod.metadata!.name)).toEqual([originName]);
      await eventually(async () => (JSON.stringify(await contextIds(namespace)) === JSON.stringify([Number(origin.metadata!.labels![INSTANCE_ID])]) ? true : undefined), 60_000, "the ResourceContext back to the origin's id");
    });
  });

  test("podUpgradePolicy Replace: a pod of the new revision first, then the old pod goes", async ({ namespace }) => {
    await withOperator(namespace, async (watch) => {
      await collaSet(namespace, { policy: "Replace" });
      const origin = await watch.waitFor(() => live(watch).find((pod) => isReady(pod)), 120_000, "the first pod Ready");
      await collaSet(namespace, { policy: "Replace", image: testImage("app", "2") });
      const surge = await watch.waitFor(() => live(watch).find((pod) => pod.metadata?.labels?.[ORIGIN] === origin.metadata!.name), 60_000, "the surge pod of the new revision");
      expect(surge.spec!.containers[0]!.image).toBe(testImage("app", "2"));
      expect(watch.get(origin.metadata!.name!)?.metadata?.labels?.["collaset.kusionstack.io/replaced-by-replace-update"]).toBe(surge.metadata!.labels!["controller-revision-hash"]);
      await watch.waitFor(() => (watch.get(origin.metadata!.name!) === undefined ? true : undefined), 120_000, "the old pod deleted");
      const pods = live(watch);
      expect(pods.map((pod) => [pod.metadata!.name, pod.spec!.containers[0]!.image])).toEqual([[surge.metadata!.name, testImage("app", "2")]]);
      await eventually(async () => {
        const object = (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "collasets", namespace, name: "web" })) as { status?: { replicas?: number; updatedReplicas?: number } };
        return object.status?.replicas === 1 && object.status.updatedReplicas === 1 ? true : undefined;
      }, 60_000, "status: one pod, updated");
    });
  });
});
