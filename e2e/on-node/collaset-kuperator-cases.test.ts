// What kuperator's own end-to-end suite found against this project (issue 39), as stories of
// ours on the real node: an included pod that records no template revision waits for the
// partition like any pod ("Include pod without revision"); a template update reaches a pod being
// replaced by label and its surge pod ("Replace pod with update"); a scaled-in pod lets its id go
// as it leaves, so a scale-out takes the id back with its retained claim ("PVC retention policy
// with scale in pods") and a replaced pod's id leaves the ResourceContext once the replace is
// done ("Replace pod by label"); and one delay before operating ("operationDelaySeconds"). The
// windows kuperator's suite hit by chance — a pod that is on its way out but not gone — are held
// open here by a finalizer of the test's own.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { stringify } from "yaml";
import type { Pod } from "../../src/kube/objects.ts";
import { testImage } from "../node/test-images.ts";
import { apply, INSTANCE_ID, readCollaSet, TEMPLATE_REVISION } from "../support/collaset-world.ts";
import { claimTemplate, localVolumes, nodeCollaSet, type NodeCollaSetOptions } from "../support/node-collaset.ts";
import { clients, eventually, kubectl, test } from "../support/cluster.ts";
import { withOperatorWatching } from "../support/operator.ts";
import type { PodWatch } from "../support/pod-watch.ts";

const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };
const HOLD = "e2e.pod-decorator.io/hold";
const TO_REPLACE = "collaset.kusionstack.io/to-replace";
const ORIGIN = "collaset.kusionstack.io/replace-pair-origin-name";

let hostRoot: string;
beforeAll(async () => {
  hostRoot = await mkdtemp(join(tmpdir(), "pod-decorator-kuperator-cases-"));
});
afterAll(async () => {
  await rm(hostRoot, { recursive: true, force: true });
});

const live = (watch: PodWatch) => watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null);
const isReady = (pod: Pod | undefined) => pod?.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;
const claimOf = (pod: Pod | undefined): string | undefined => pod?.spec?.volumes?.find((volume) => volume.name === "data")?.persistentVolumeClaim?.claimName;
/** Unix nanoseconds (the protocol's time labels) as milliseconds. */
const labelTimeMs = (value: string) => Number(BigInt(value) / 1_000_000n);

function applyCollaSet(namespace: string, options: NodeCollaSetOptions): Promise<void> {
  return apply(stringify(nodeCollaSet(namespace, options)));
}

async function contextIds(namespace: string): Promise<number[] | undefined> {
  try {
    const context = (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "resourcecontexts", namespace, name: "web" })) as { spec?: { contexts?: { id: number }[] } };
    return (context.spec?.contexts ?? []).map((detail) => detail.id).sort((a, b) => a - b);
  } catch {
    return undefined;
  }
}

async function claimNames(namespace: string): Promise<string[]> {
  return (await clients().core.listNamespacedPersistentVolumeClaim({ namespace })).items.filter((claim) => claim.metadata?.deletionTimestamp == null).map((claim) => claim.metadata?.name ?? "").sort();
}

/** Holds the pod's object after it is deleted, until `release`: the window a slow exit leaves open. */
async function hold(namespace: string, name: string): Promise<void> {
  const finalizers = (await clients().core.readNamespacedPod({ namespace, name })).metadata?.finalizers;
  const operation = finalizers === undefined ? { op: "add", path: "/metadata/finalizers", value: [HOLD] } : { op: "add", path: "/metadata/finalizers/-", value: HOLD };
  const result = await kubectl(["patch", "pod", name, "-n", namespace, "--type=json", "-p", JSON.stringify([operation])]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
}

async function release(namespace: string, name: string): Promise<void> {
  const pod = await clients().core.readNamespacedPod({ namespace, name }).catch(() => undefined);
  const index = pod?.metadata?.finalizers?.indexOf(HOLD) ?? -1;
  if (index < 0) return;
  expect((await kubectl(["patch", "pod", name, "-n", namespace, "--type=json", "-p", JSON.stringify([{ op: "remove", path: `/metadata/finalizers/${index}` }])])).code).toBe(0);
}

/** Runs `story` with an operator and a watch of the namespace's pods; releases every held pod after. */
function withOperator(namespace: string, args: string[], story: (watch: PodWatch) => Promise<void>): Promise<void> {
  return withOperatorWatching(namespace, { args }, story, async (watch) => {
    for (const pod of watch.pods()) if (pod.metadata?.finalizers?.includes(HOLD) === true) await release(namespace, pod.metadata.name ?? "");
  });
}

describe("CollaSet cases kuperator's suite found, on the real node", () => {
  test("an included pod that records no template revision is held back by the partition like any other pod, and recreated once the rollout reaches it", async ({ namespace }) => {
    await withOperator(namespace, [], async (watch) => {
      await applyCollaSet(namespace, { replicas: 3 });
      await watch.waitFor(() => (live(watch).filter(isReady).length === 3 ? true : undefined), 120_000, "three Ready pods");
      const joining = live(watch).sort((a, b) => Number(a.metadata!.labels![INSTANCE_ID]) - Number(b.metadata!.labels![INSTANCE_ID]))[0]!.metadata!.name!;

      // Out of the CollaSet, its template revision removed, then back in with partition 3 over 3 replicas.
      await applyCollaSet(namespace, { replicas: 2, spec: { scaleStrategy: { podToExclude: [joining] } } });
      await watch.waitFor(() => ((watch.get(joining)?.metadata?.ownerReferences ?? []).every((owner) => owner.kind !== "CollaSet") && live(watch).length === 3 ? true : undefined), 120_000, "the pod out of the CollaSet");
      expect((await kubectl(["label", "pod", joining, "-n", namespace, `${TEMPLATE_REVISION}-`])).code).toBe(0);
      const uid = watch.get(joining)!.metadata!.uid;
      await applyCollaSet(namespace, { replicas: 3, spec: { scaleStrategy: { podToInclude: [joining] }, updateStrategy: { rollingUpdate: { byPartition: { partition: 3 } } } } });
      await watch.waitFor(() => (watch.get(joining)?.metadata?.ownerReferences?.[0]?.kind === "CollaSet" ? true : undefined), 60_000, "the pod back in the CollaSet");

      // A full sync after it joined: partition 2 moves one pod, the first in update order (already updated): not it.
      await applyCollaSet(namespace, { replicas: 3, spec: { scaleStrategy: { podToInclude: [joining] }, updateStrategy: { rollingUpdate: { byPartition: { partition: 2 } } } } });
      const status = await eventually(async () => {
        const object = await readCollaSet(namespace);
        return object.status?.observedGeneration === object.metadata.generation && object.status.replicas === 3 ? object.status : undefined;
      }, 60_000, "the CollaSet to sync partition 2");
      expect(status.updatedReplicas).toBe(2);
      expect(watch.get(joining)?.metadata?.uid).toBe(uid);
      expect(watch.get(joining)?.metadata?.deletionTimestamp).toBeUndefined();

      // Partition 0: the rollout reaches it and it is recreated (its replacement records the revision).
      await applyCollaSet(namespace, { replicas: 3, spec: { updateStrategy: { rollingUpdate: { byPartition: { partition: 0 } } } } });
      await watch.waitFor(() => (watch.get(joining) === undefined && live(watch).filter(isReady).length === 3 ? true : undefined), 120_000, "the joined pod recreated");
      await eventually(async () => ((await readCollaSet(namespace)).status?.updatedReplicas === 3 ? true : undefined), 60_000, "updatedReplicas 3");
    });
  });

  test("a template update reaches a pod being replaced by label and its surge pod: the surge pod of the bad image goes, one of the new image replaces the pod", async ({ namespace }) => {
    await withOperator(namespace, [], async (watch) => {
      // An image the node does not have and cannot pull: the pod never becomes Ready.
      const broken = "e2e.local/app:missing";
      await applyCollaSet(namespace, { replicas: 1, image: broken, spec: { updateStrategy: { podUpgradePolicy: "Recreate" } } });
      const origin = await watch.waitFor(() => live(watch)[0], 60_000, "the first pod");
      const originName = origin.metadata!.name!;
      expect((await kubectl(["label", "pod", originName, "-n", namespace, `${TO_REPLACE}=true`])).code).toBe(0);
      const oldSurge = await watch.waitFor(() => live(watch).find((pod) => pod.metadata?.labels?.[ORIGIN] === originName), 60_000, "the surge pod");
      expect(oldSurge.spec!.containers[0]!.image).toBe(broken);

      await applyCollaSet(namespace, { replicas: 1, image: testImage("app", "2"), spec: { updateStrategy: { podUpgradePolicy: "Recreate" } } });
      const done = await watch.waitFor(() => {
        const pods = live(watch);
        return pods.length === 1 && watch.get(originName) === undefined && watch.get(oldSurge.metadata!.name!) === undefined && isReady(pods[0]) ? pods[0] : undefined;
      }, 180_000, "one Ready pod of the new image, the origin and the old surge pod gone");
      expect(done.spec!.containers[0]!.image).toBe(testImage("app", "2"));
      await eventually(async () => {
        const object = await readCollaSet(namespace);
        return object.status?.replicas === 1 && object.status.readyReplicas === 1 && object.status.updatedReplicas === 1 ? true : undefined;
      }, 60_000, "status: one pod, ready, updated");
      await eventually(async () => (JSON.stringify(await contextIds(namespace)) === JSON.stringify([Number(done.metadata!.labels![INSTANCE_ID])]) ? true : undefined), 60_000, "the ResourceContext to hold the pod's id alone");
    });
  });

  test("a scale-out while a scaled-in pod is still on its way out takes its id back, and the claim it retained (whenScaled Retain)", async ({ namespace }) => {
    const storageClass = `cases-${namespace}`.slice(0, 50);
    const removeVolumes = await localVolumes(hostRoot, storageClass, 3);
    const collaSet = (replicas: number) => applyCollaSet(namespace, {
      replicas,
      container: { volumeMounts: [{ name: "data", mountPath: "/data" }] },
      spec: { volumeClaimTemplates: [claimTemplate("data", storageClass)], scaleStrategy: { persistentVolumeClaimRetentionPolicy: { whenScaled: "Retain" } } },
    });
    try {
      await withOperator(namespace, [], async (watch) => {
        await collaSet(2);
        await watch.waitFor(() => (live(watch).filter(isReady).length === 2 ? true : undefined), 120_000, "two Ready pods");
        const claims = await eventually(async () => {
          const names = await claimNames(namespace);
          return names.length === 2 ? names : undefined;
        }, 60_000, "two claims");
        const leaving = live(watch).find((pod) => pod.metadata?.labels?.[INSTANCE_ID] === "1")!;
        const retained = claimOf(leaving);
        await hold(namespace, leaving.metadata!.name!);

        await collaSet(1);
        await watch.waitFor(() => (watch.get(leaving.metadata!.name!)?.metadata?.deletionTimestamp != null ? true : undefined), 60_000, "the scaled-in pod on its way out");
        await collaSet(2);
        const returned = await watch.waitFor(() => live(watch).find((pod) => pod.metadata?.name !== leaving.metadata?.name && pod.metadata?.labels?.[INSTANCE_ID] !== "0"), 60_000, "the scaled-out pod");
        expect(returned.metadata!.labels![INSTANCE_ID]).toBe("1");
        expect(claimOf(returned)).toBe(retained);
        expect(await claimNames(namespace)).toEqual(claims);
        await watch.waitFor(() => (isReady(watch.get(returned.metadata!.name!)) ? true : undefined), 120_000, "the returned pod Ready on its claim");
      });
    } finally {
      await kubectl(["delete", "--ignore-not-found", "--wait=true", "--timeout=60s", "-n", namespace, "collaset", "web"]);
      await removeVolumes();
    }
  });

  test("a replaced pod's id leaves the ResourceContext once the surge pod has taken over, while the pod itself is still on its way out", async ({ namespace }) => {
    await withOperator(namespace, [], async (watch) => {
      await applyCollaSet(namespace, { replicas: 1 });
      const origin = await watch.waitFor(() => live(watch).find(isReady), 120_000, "the first pod Ready");
      const originName = origin.metadata!.name!;
      await hold(namespace, originName);
      expect((await kubectl(["label", "pod", originName, "-n", namespace, `${TO_REPLACE}=true`])).code).toBe(0);
      await watch.waitFor(() => (watch.get(originName)?.metadata?.deletionTimestamp != null ? true : undefined), 120_000, "the origin on its way out");
      const surge = await watch.waitFor(() => live(watch).find(isReady), 60_000, "the surge pod Ready");
      await eventually(async () => (JSON.stringify(await contextIds(namespace)) === JSON.stringify([Number(surge.metadata!.labels![INSTANCE_ID])]) ? true : undefined), 30_000, "one ResourceContext entry, the surge pod's");
      expect(watch.get(originName)?.metadata?.deletionTimestamp).toBeDefined();
    });
  });

  test("one delay before operating: with operationDelaySeconds the operation is allowed as soon as the pod is out of traffic, and the chart's drain delay does not come first", async ({ namespace }) => {
    // The chart's drain delay, 5 s; the CollaSet asks for 3 s.
    await withOperator(namespace, ["--lifecycle-drain-delay=5s"], async (watch) => {
      const collaSet = (image: string) => applyCollaSet(namespace, { replicas: 1, image, spec: { updateStrategy: { operationDelaySeconds: 3, rollingUpdate: { byLabel: {} } } } });
      await collaSet(testImage("app"));
      const pod = await watch.waitFor(() => live(watch).find((item) => item.metadata?.labels?.["podopslifecycle.kusionstack.io/service-available"] !== undefined), 120_000, "a service-available pod");
      const name = pod.metadata!.name!;
      await collaSet(testImage("app", "2"));
      await eventually(async () => {
        const object = await readCollaSet(namespace);
        return object.status?.observedGeneration === object.metadata.generation ? true : undefined;
      }, 60_000, "the CollaSet to observe the new template");
      expect((await kubectl(["label", "pod", name, "-n", namespace, "collaset.kusionstack.io/update-included=true"])).code).toBe(0);
      const labels = await watch.waitFor(() => {
        const current = watch.get(name)?.metadata?.labels ?? {};
        return current["operate.podopslifecycle.kusionstack.io/collaset"] === undefined ? undefined : current;
      }, 60_000, "the operate label");
      const began = labelTimeMs(labels["operating.podopslifecycle.kusionstack.io/collaset"]!);
      const allowed = labelTimeMs(labels["operate.podopslifecycle.kusionstack.io/collaset"]!);
      // Allowed once the kubelet has the pod out of traffic, well before a 5 s drain delay would end.
      expect(allowed - began).toBeLessThan(4000);
      const changedAt = await watch.waitFor(() => (watch.get(name)?.spec?.containers[0]?.image === testImage("app", "2") ? Date.now() : undefined), 60_000, "the update", 50);
      expect(changedAt - allowed).toBeGreaterThanOrEqual(3000 - 1000);
      await watch.waitFor(() => (watch.get(name)?.metadata?.labels?.["podopslifecycle.kusionstack.io/service-available"] !== undefined && isReady(watch.get(name)) ? true : undefined), 120_000, "the pod service-available again");
    });
  });
});
