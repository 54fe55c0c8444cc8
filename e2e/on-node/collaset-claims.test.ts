// Issue 31 item 1 on a real node: a CollaSet's volumeClaimTemplates as kuperator runs them. Local
// (hostPath) PersistentVolumes of the test's own storage class, bound by kube-controller-manager's
// binder; each container appends its pod's name to a file in its claim, read back on the host.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1PersistentVolumeClaim } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { collaSetPods, INSTANCE_ID } from "../support/collaset-world.ts";
import { applyNodeCollaSet, claimTemplate, localVolumes } from "../support/node-collaset.ts";
import { clients, eventually, kubectl, test } from "../support/cluster.ts";
import { startOperator, type Operator } from "../support/operator.ts";
import type { Pod } from "../../src/kube/objects.ts";

let operator: Operator;
let hostRoot: string;
beforeAll(async () => {
  hostRoot = await mkdtemp(join(tmpdir(), "pod-decorator-claims-"));
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
  await rm(hostRoot, { recursive: true, force: true });
});

function collaSet(namespace: string, options: { replicas: number; storageClass: string; whenScaled: "Retain" | "Delete"; env: string }) {
  return applyNodeCollaSet(namespace, {
    replicas: options.replicas,
    container: {
      imagePullPolicy: "Never",
      command: ["sh", "-c", "hostname >> /data/seen && exec /pause"],
      env: [{ name: "MODE", value: options.env }],
      volumeMounts: [{ name: "data", mountPath: "/data" }],
    },
    spec: {
      volumeClaimTemplates: [claimTemplate("data", options.storageClass)],
      scaleStrategy: { persistentVolumeClaimRetentionPolicy: { whenScaled: options.whenScaled } },
      updateStrategy: { podUpgradePolicy: "Recreate" },
    },
  });
}

async function claims(namespace: string): Promise<V1PersistentVolumeClaim[]> {
  return (await clients().core.listNamespacedPersistentVolumeClaim({ namespace })).items;
}

const claimOf = (pod: Pod): string | undefined => pod.spec?.volumes?.find((volume) => volume.name === "data")?.persistentVolumeClaim?.claimName;
const running = (pod: Pod): boolean => pod.metadata?.deletionTimestamp == null && pod.status?.containerStatuses?.[0]?.state?.running !== undefined;

/** The running pod of each instance id, once there are `replicas` of them and no other. */
function runningPods(namespace: string, replicas: number): Promise<Map<string, Pod>> {
  return eventually(async () => {
    const pods = await collaSetPods(namespace);
    if (pods.length !== replicas || !pods.every(running)) return undefined;
    return new Map(pods.map((pod) => [pod.metadata?.labels?.[INSTANCE_ID] ?? "", pod]));
  }, 120_000, `${replicas} running pods and no other`);
}

/** What the containers that used a claim wrote into it, read on the node from the volume it is bound to. */
async function seen(claim: V1PersistentVolumeClaim): Promise<string[]> {
  const volume = await clients().core.readPersistentVolume({ name: claim.spec?.volumeName ?? "" });
  const text = await readFile(join(volume.spec?.hostPath?.path ?? "", "seen"), "utf8");
  return text.split("\n").filter((line) => line !== "");
}

async function claimNamed(namespace: string, name: string | undefined): Promise<V1PersistentVolumeClaim> {
  return clients().core.readNamespacedPersistentVolumeClaim({ namespace, name: name ?? "" });
}

describe("CollaSet volumeClaimTemplates on a real node", () => {
  test("a claim per instance, bound and mounted; kept with its data when the pod is recreated; deleted on scale-in under whenScaled Delete, kept and given back under Retain", async ({ namespace }) => {
    const storageClass = `claims-${namespace}`.slice(0, 50);
    const removeVolumes = await localVolumes(hostRoot, storageClass, 3);
    try {
      await collaSet(namespace, { replicas: 2, storageClass, whenScaled: "Delete", env: "blue" });
      const first = await runningPods(namespace, 2);
      const bound = await eventually(async () => {
        const items = await claims(namespace);
        return items.length === 2 && items.every((claim) => claim.status?.phase === "Bound") ? items : undefined;
      }, 60_000, "two Bound claims");
      // Named, labelled and owned as kuperator makes them.
      for (const claim of bound) {
        expect(claim.metadata?.name).toMatch(/^web-data-[a-z0-9]{5}$/);
        expect(claim.metadata?.labels).toMatchObject({ app: "web", "kusionstack.io/control": "true", "collaset.kusionstack.io/pvc-template-name": "data" });
        expect(claim.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "CollaSet", name: "web", controller: true });
      }
      // Each pod mounts its instance's claim, and its container wrote there.
      for (const [id, pod] of first) {
        const claim = await claimNamed(namespace, claimOf(pod));
        expect(claim.metadata?.labels?.[INSTANCE_ID]).toBe(id);
        expect(await eventually(async () => ((await seen(claim)).includes(pod.metadata?.name ?? "") ? seen(claim) : undefined), 30_000, "the container's line in its claim")).toEqual([pod.metadata?.name]);
      }

      // A change that recreates the pods: each new pod gets its instance's claim, and the data in it.
      await collaSet(namespace, { replicas: 2, storageClass, whenScaled: "Delete", env: "green" });
      const second = await eventually(async () => {
        const pods = await runningPods(namespace, 2);
        return [...pods].every(([id, pod]) => pod.metadata?.name !== first.get(id)?.metadata?.name) ? pods : undefined;
      }, 120_000, "both pods recreated");
      for (const [id, pod] of second) {
        expect(claimOf(pod)).toBe(claimOf(first.get(id)!));
        const claim = await claimNamed(namespace, claimOf(pod));
        expect(await eventually(async () => ((await seen(claim)).length === 2 ? seen(claim) : undefined), 30_000, "both pods' lines in the claim")).toEqual([first.get(id)!.metadata?.name, pod.metadata?.name]);
      }
      expect((await claims(namespace)).map((claim) => claim.metadata?.name).sort()).toEqual(bound.map((claim) => claim.metadata?.name).sort());

      // Scale in under whenScaled Delete: instance 1's claim goes.
      const scaledInClaim = claimOf(second.get("1")!);
      await collaSet(namespace, { replicas: 1, storageClass, whenScaled: "Delete", env: "green" });
      await runningPods(namespace, 1);
      await eventually(async () => ((await claims(namespace)).some((claim) => claim.metadata?.name === scaledInClaim) ? undefined : true), 60_000, `claim ${scaledInClaim} deleted`);
      expect((await claims(namespace)).map((claim) => claim.metadata?.name)).toEqual([claimOf(second.get("0")!)]);

      // Under Retain: instance 1 comes back on a new claim, which stays through a scale-in and is given back.
      await collaSet(namespace, { replicas: 2, storageClass, whenScaled: "Retain", env: "green" });
      const third = await runningPods(namespace, 2);
      const retained = claimOf(third.get("1")!);
      expect(retained).not.toBe(scaledInClaim);
      await collaSet(namespace, { replicas: 1, storageClass, whenScaled: "Retain", env: "green" });
      await runningPods(namespace, 1);
      expect((await claimNamed(namespace, retained)).metadata?.deletionTimestamp).toBeUndefined();
      await collaSet(namespace, { replicas: 2, storageClass, whenScaled: "Retain", env: "green" });
      const fourth = await runningPods(namespace, 2);
      expect(claimOf(fourth.get("1")!)).toBe(retained);
      const claim = await claimNamed(namespace, retained);
      expect(await eventually(async () => ((await seen(claim)).length === 2 ? seen(claim) : undefined), 30_000, "both instance-1 pods' lines")).toEqual([third.get("1")!.metadata?.name, fourth.get("1")!.metadata?.name]);
    } finally {
      await kubectl(["delete", "--ignore-not-found", "--wait=true", "--timeout=60s", "-n", namespace, "collaset", "web"]);
      await removeVolumes();
    }
  });
});
