// A CollaSet's scaleStrategy.podToExclude / podToInclude on a real node, as kuperator's end-to-end
// cases run them ("exclude pod", "include pod", with claims): under namingStrategy
// PersistentSequence the pods are web-0 and web-1, each with a claim of the volumeClaimTemplate
// (hostPath PersistentVolumes of the test's own storage class, bound by kube-controller-manager),
// into which its container writes its name. web-0 excluded keeps running, with its claim, neither
// owned by the CollaSet and both labelled orphaned; web-2 (web-0's name is held) makes up the
// replicas on a claim of its own and the ResourceContext drops id 0. web-0 included back (replicas
// 3) is the CollaSet's again, instance 0, with its claim, and never restarted. Then the to-exclude
// label, and the refusals: a pod without kusionstack.io/control is not taken; once it has the label
// it joins, and (recording no revision of the CollaSet) is recreated, as kuperator does.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1PersistentVolumeClaim } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { stringify } from "yaml";
import { createKubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Pod } from "../../src/kube/objects.ts";
import { testImage } from "../node/test-images.ts";
import { apply, INSTANCE_ID, readCollaSet } from "../support/collaset-world.ts";
import { clients, eventually, kubeConfig, kubectl, test } from "../support/cluster.ts";
import { claimTemplate, localVolumes, nodeCollaSet } from "../support/node-collaset.ts";
import { startOperator } from "../support/operator.ts";
import { PodWatch } from "../support/pod-watch.ts";

const ORPHANED = "collaset.kusionstack.io/orphaned";
const CONTROL = "kusionstack.io/control";

let hostRoot: string;
beforeAll(async () => {
  hostRoot = await mkdtemp(join(tmpdir(), "pod-decorator-exclude-"));
});
afterAll(async () => {
  await rm(hostRoot, { recursive: true, force: true });
});

/** Under PersistentSequence with a claim per instance in `storageClass`; else named at random, without claims. */
function collaSetYaml(namespace: string, storageClass?: string): string {
  if (storageClass === undefined) return stringify(nodeCollaSet(namespace, { replicas: 2 }));
  return stringify(nodeCollaSet(namespace, {
    replicas: 2,
    container: { command: ["sh", "-c", "hostname >> /data/seen && exec /pause"], volumeMounts: [{ name: "data", mountPath: "/data" }] },
    spec: { namingStrategy: { podNamingSuffixPolicy: "PersistentSequence" }, volumeClaimTemplates: [claimTemplate("data", storageClass)] },
  }));
}

async function patchCollaSet(namespace: string, patch: unknown): Promise<void> {
  const result = await kubectl(["patch", "collaset", "web", "-n", namespace, "--type=merge", "-p", JSON.stringify(patch)]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
}

async function label(namespace: string, pod: string, label: string): Promise<void> {
  const result = await kubectl(["label", "pod", pod, "-n", namespace, label]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
}

/** The ids the ResourceContext `web` lists, as kubectl shows it. */
async function contextIds(namespace: string): Promise<number[] | undefined> {
  const result = await kubectl(["get", "resourcecontexts.apps.kusionstack.io", "web", "-n", namespace, "-o", "json"]);
  if (result.code !== 0) return undefined;
  const context = JSON.parse(result.stdout) as { apiVersion: string; spec?: { contexts?: { id: number }[] } };
  expect(context.apiVersion).toBe("apps.kusionstack.io/v1alpha1");
  return (context.spec?.contexts ?? []).map((detail) => detail.id).sort((a, b) => a - b);
}

const idsAre = async (namespace: string, ids: readonly number[]) => (JSON.stringify(await contextIds(namespace)) === JSON.stringify(ids) ? true : undefined);

const collaSetController = (object: KubeObject | V1PersistentVolumeClaim) => object.metadata?.ownerReferences?.find((owner) => owner.controller === true && owner.kind === "CollaSet" && owner.name === "web");
const isReady = (pod: Pod | undefined) => pod?.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;
const claimOf = (pod: Pod | undefined): string | undefined => pod?.spec?.volumes?.find((volume) => volume.name === "data")?.persistentVolumeClaim?.claimName;

function claimNamed(namespace: string, name: string | undefined): Promise<V1PersistentVolumeClaim> {
  return clients().core.readNamespacedPersistentVolumeClaim({ namespace, name: name ?? "" });
}

/** What the containers that used a claim wrote into it, read on the node from the volume it is bound to. */
async function seen(claim: V1PersistentVolumeClaim): Promise<string[]> {
  const volume = await clients().core.readPersistentVolume({ name: claim.spec?.volumeName ?? "" });
  const text = await readFile(join(volume.spec?.hostPath?.path ?? "", "seen"), "utf8");
  return text.split("\n").filter((line) => line !== "");
}

/** The claim once Bound, and once its pod's container has written `lines` into it. */
function boundWith(namespace: string, name: string | undefined, lines: readonly string[]): Promise<V1PersistentVolumeClaim> {
  return eventually(async () => {
    const claim = await claimNamed(namespace, name);
    if (claim.status?.phase !== "Bound") return undefined;
    return JSON.stringify(await seen(claim)) === JSON.stringify(lines) ? claim : undefined;
  }, 60_000, `claim ${name ?? ""} Bound, holding ${lines.join(", ")}`);
}

describe("CollaSet podToExclude / podToInclude on a real node", () => {
  test("an excluded pod keeps running with its claim, both orphaned, and another pod takes its place; included back, it is the CollaSet's again with its claim", async ({ namespace }) => {
    const storageClass = `exclude-${namespace}`.slice(0, 50);
    const removeVolumes = await localVolumes(hostRoot, storageClass, 4);
    const operator = await startOperator();
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    const live = () => watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null);
    const owned = () => live().filter((pod) => collaSetController(pod) !== undefined);
    const names = new Set<string>();
    const stopListening = watch.onPod((pod) => names.add(pod.metadata?.name ?? ""));
    try {
      await apply(collaSetYaml(namespace, storageClass));
      await watch.waitFor(() => {
        const pods = owned();
        return pods.length === 2 && pods.every(isReady) ? true : undefined;
      }, 120_000, "two Ready pods");
      expect(owned().map((pod) => [pod.metadata!.name, pod.metadata!.labels![INSTANCE_ID]]).sort()).toEqual([["web-0", "0"], ["web-1", "1"]]);
      const web0 = watch.get("web-0")!;
      const claim0 = claimOf(web0);
      expect(collaSetController(await boundWith(namespace, claim0, ["web-0"]))).toBeDefined();
      await boundWith(namespace, claimOf(watch.get("web-1")), ["web-1"]);
      await eventually(() => idsAre(namespace, [0, 1]), 30_000, "the ResourceContext to list ids 0 and 1");

      // Exclude web-0: it leaves, still running; web-2 makes up the replicas (web-0's name is held).
      await patchCollaSet(namespace, { spec: { scaleStrategy: { podToExclude: ["web-0"] } } });
      const left = await watch.waitFor(() => {
        const pod = watch.get("web-0");
        return pod !== undefined && collaSetController(pod) === undefined ? pod : undefined;
      }, 60_000, "web-0 without the CollaSet's ownerReference");
      expect(left.metadata!.uid).toBe(web0.metadata!.uid);
      expect(left.metadata!.deletionTimestamp).toBeUndefined();
      expect(left.metadata!.labels).toMatchObject({ [ORPHANED]: "true", [INSTANCE_ID]: "0", app: "web" });
      expect(left.metadata!.ownerReferences ?? []).toEqual([]);
      const leftClaim = await claimNamed(namespace, claim0);
      expect(collaSetController(leftClaim)).toBeUndefined();
      expect(leftClaim.metadata?.labels).toMatchObject({ [ORPHANED]: "true", [INSTANCE_ID]: "0", [CONTROL]: "true" });
      expect(leftClaim.metadata?.deletionTimestamp).toBeUndefined();

      const web2 = await watch.waitFor(() => {
        const pod = watch.get("web-2");
        return pod !== undefined && isReady(pod) && collaSetController(pod) !== undefined ? pod : undefined;
      }, 120_000, "web-2 Ready");
      expect(web2.metadata!.labels![INSTANCE_ID]).toBe("2");
      const claim2 = claimOf(web2);
      expect(claim2).not.toBe(claim0);
      expect((await boundWith(namespace, claim2, ["web-2"])).metadata?.labels?.[INSTANCE_ID]).toBe("2");
      await eventually(() => idsAre(namespace, [1, 2]), 30_000, "the ResourceContext to list ids 1 and 2");
      // web-0 ran on all along, on its claim, orphaned: no restart, nothing more written, nothing deleted.
      const still = watch.get("web-0")!;
      expect(isReady(still)).toBe(true);
      expect(still.status?.containerStatuses?.[0]?.restartCount).toBe(0);
      expect(await seen(await claimNamed(namespace, claim0))).toEqual(["web-0"]);
      expect(collaSetController(await claimNamed(namespace, claim0))).toBeUndefined();
      expect(owned().map((pod) => pod.metadata!.name).sort()).toEqual(["web-1", "web-2"]);

      // Include web-0 back, with a third replica: it joins as instance 0 with its claim; no pod is created.
      await patchCollaSet(namespace, { spec: { replicas: 3, scaleStrategy: { podToExclude: [], podToInclude: ["web-0"] } } });
      const back = await watch.waitFor(() => {
        const pod = watch.get("web-0");
        return pod !== undefined && collaSetController(pod) !== undefined ? pod : undefined;
      }, 60_000, "web-0 the CollaSet's again");
      expect(back.metadata!.uid).toBe(web0.metadata!.uid);
      expect(back.metadata!.labels![INSTANCE_ID]).toBe("0");
      expect(back.metadata!.labels![ORPHANED]).toBeUndefined();
      const collaSetUid = (await readCollaSet(namespace)).metadata.uid;
      expect(collaSetController(back)).toMatchObject({ apiVersion: "apps.kusionstack.io/v1alpha1", uid: collaSetUid, blockOwnerDeletion: true });
      const backClaim = await claimNamed(namespace, claim0);
      expect(collaSetController(backClaim)).toMatchObject({ uid: collaSetUid });
      expect(backClaim.metadata?.labels?.[ORPHANED]).toBeUndefined();
      expect(backClaim.metadata?.labels?.[INSTANCE_ID]).toBe("0");
      await eventually(() => idsAre(namespace, [0, 1, 2]), 30_000, "the ResourceContext to list ids 0, 1 and 2");

      // Three Ready pods and no other; web-0 never restarted and its claim still the one it wrote to.
      await watch.waitFor(() => {
        const pods = live();
        return pods.length === 3 && pods.every((pod) => isReady(pod) && collaSetController(pod) !== undefined) ? true : undefined;
      }, 60_000, "three Ready pods of the CollaSet");
      expect(live().map((pod) => pod.metadata!.name).sort()).toEqual(["web-0", "web-1", "web-2"]);
      expect([...names].sort()).toEqual(["web-0", "web-1", "web-2"]);
      expect(watch.get("web-0")!.status?.containerStatuses?.[0]?.restartCount).toBe(0);
      expect(claimOf(watch.get("web-0"))).toBe(claim0);
      expect(await seen(await claimNamed(namespace, claim0))).toEqual(["web-0"]);
      const claims = (await clients().core.listNamespacedPersistentVolumeClaim({ namespace })).items;
      expect(claims.map((claim) => [claim.metadata?.labels?.[INSTANCE_ID], claim.status?.phase, collaSetController(claim)?.uid]).sort()).toEqual([
        ["0", "Bound", collaSetUid],
        ["1", "Bound", collaSetUid],
        ["2", "Bound", collaSetUid],
      ]);
      await eventually(async () => {
        const object = await readCollaSet(namespace);
        const status = object.status;
        return status?.observedGeneration === object.metadata.generation && status.replicas === 3 && status.readyReplicas === 3 ? true : undefined;
      }, 60_000, "status: three pods, three ready");
      // Each move told on the CollaSet, and nothing refused or failed.
      const events = (await clients().core.listNamespacedEvent({ namespace, fieldSelector: "involvedObject.kind=CollaSet,involvedObject.name=web" })).items;
      expect(events.filter((event) => event.reason === "Excluded").map((event) => event.message)).toEqual([`pod web-0 and claims ${claim0 ?? ""} left the CollaSet (instance 0 freed)`]);
      expect(events.filter((event) => event.reason === "Included").map((event) => event.message)).toEqual([`pod web-0 and claims ${claim0 ?? ""} joined the CollaSet as instance 0`]);
      expect(events.filter((event) => event.type === "Warning").map((event) => `${event.reason ?? ""}: ${event.message ?? ""}`)).toEqual([]);
    } finally {
      stopListening();
      await watch.stop();
      await kubectl(["delete", "--ignore-not-found", "--wait=true", "--timeout=60s", "-n", namespace, "collaset", "web"]);
      await kubectl(["delete", "--ignore-not-found", "--wait=true", "--timeout=60s", "-n", namespace, "pods", "--all"]);
      expect(await operator.stop()).toBe(0);
      await removeVolumes();
    }
  });

  test("the to-exclude label: the pod leaves and its id is free for the pod that takes its place; a pod kusionstack does not control is refused, with Events and ReplicaFailure, until it is; joined with no revision of the CollaSet, it is recreated", async ({ namespace }) => {
    const operator = await startOperator();
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    const owned = () => watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null && collaSetController(pod) !== undefined);
    const twoReady = () => {
      const pods = owned();
      return pods.length === 2 && pods.every(isReady) ? pods : undefined;
    };
    try {
      await apply(collaSetYaml(namespace));
      const first = await watch.waitFor(twoReady, 120_000, "two Ready pods");
      const leaving = first.sort((a, b) => a.metadata!.labels![INSTANCE_ID]!.localeCompare(b.metadata!.labels![INSTANCE_ID]!))[0]!;
      const leavingName = leaving.metadata!.name!;
      expect(leaving.metadata!.labels![INSTANCE_ID]).toBe("0");

      // Labelled to-exclude: it leaves, still Ready; another pod takes id 0, which the ResourceContext freed.
      await label(namespace, leavingName, "collaset.kusionstack.io/to-exclude=true");
      const left = await watch.waitFor(() => {
        const pod = watch.get(leavingName);
        return pod !== undefined && collaSetController(pod) === undefined ? pod : undefined;
      }, 60_000, `${leavingName} without the CollaSet's ownerReference`);
      expect(left.metadata!.uid).toBe(leaving.metadata!.uid);
      expect(left.metadata!.labels).toMatchObject({ [ORPHANED]: "true", [INSTANCE_ID]: "0" });
      const second = await watch.waitFor(() => {
        const pods = twoReady();
        return pods?.some((pod) => pod.metadata!.uid === leaving.metadata!.uid) === false ? pods : undefined;
      }, 120_000, "two Ready pods of the CollaSet, the labelled one not among them");
      const successor = second.find((pod) => !first.some((old) => old.metadata!.uid === pod.metadata!.uid))!;
      expect(successor.metadata!.labels![INSTANCE_ID]).toBe("0");
      expect(isReady(watch.get(leavingName))).toBe(true);
      await eventually(() => idsAre(namespace, [0, 1]), 30_000, "the ResourceContext to list ids 0 and 1");

      // A pod without kusionstack.io/control named in podToInclude: refused, told, nothing created.
      await apply(`
apiVersion: v1
kind: Pod
metadata: { name: stray, namespace: ${namespace}, labels: { app: web } }
spec:
  terminationGracePeriodSeconds: 1
  automountServiceAccountToken: false
  containers: [{ name: app, image: ${testImage("app")}, imagePullPolicy: Never }]
`);
      await patchCollaSet(namespace, { spec: { scaleStrategy: { podToInclude: ["stray"] } } });
      const failure = await eventually(async () => {
        const object = await readCollaSet(namespace);
        const condition = object.status?.conditions?.find((entry) => entry.type === "ReplicaFailure");
        return object.status?.observedGeneration === object.metadata.generation && condition?.status === "True" ? condition : undefined;
      }, 60_000, "ReplicaFailure True");
      expect(failure.reason).toBe("Blocked");
      expect(failure.message).toContain("pod stray may not join");
      const refusals = await eventually(async () => {
        const events = (await clients().core.listNamespacedEvent({ namespace, fieldSelector: "type=Warning" })).items;
        const onCollaSet = events.find((event) => event.involvedObject.kind === "CollaSet" && event.reason === "IncludeNotAllowed");
        const onPod = events.find((event) => event.involvedObject.kind === "Pod" && event.involvedObject.name === "stray" && event.reason === "ExcludeIncludeNotAllowed");
        return onCollaSet !== undefined && onPod !== undefined ? { onCollaSet, onPod } : undefined;
      }, 30_000, "the refusal's Events on the CollaSet and on the pod");
      expect(refusals.onCollaSet.message).toContain("kusionstack.io/control");
      expect(refusals.onPod.message).toContain("CollaSet web");
      expect(collaSetController(watch.get("stray")!)).toBeUndefined();
      expect(owned().map((pod) => pod.metadata!.uid).sort()).toEqual(second.map((pod) => pod.metadata!.uid).sort());

      // Taken off the list, the refusal ends. Given the label and named again with a third replica, it joins
      // as the smallest free id; recording no revision of the CollaSet, it is then recreated as kuperator
      // does (TargetCurrentRevisionNotFound): a pod of the updated revision takes instance 2.
      await patchCollaSet(namespace, { spec: { scaleStrategy: { podToInclude: [] } } });
      await eventually(async () => {
        const object = await readCollaSet(namespace);
        const condition = object.status?.conditions?.find((entry) => entry.type === "ReplicaFailure");
        return object.status?.observedGeneration === object.metadata.generation && condition?.status === "False" ? true : undefined;
      }, 60_000, "ReplicaFailure False");
      const stray = watch.get("stray")!;
      let joined: Pod | undefined;
      const stopListening = watch.onPod((pod) => {
        if (pod.metadata?.uid === stray.metadata!.uid && collaSetController(pod) !== undefined) joined ??= pod;
      });
      await label(namespace, "stray", `${CONTROL}=true`);
      await patchCollaSet(namespace, { spec: { replicas: 3, scaleStrategy: { podToInclude: ["stray"] } } });
      const updatedRevision = await eventually(async () => {
        const object = await readCollaSet(namespace);
        return object.status?.observedGeneration === object.metadata.generation ? object.status.updatedRevision : undefined;
      }, 30_000, "the CollaSet to observe the include");
      const third = await watch.waitFor(() => {
        const pods = owned();
        return watch.get("stray") === undefined && pods.length === 3 && pods.every(isReady) ? pods : undefined;
      }, 120_000, "stray recreated: three Ready pods of the CollaSet");
      stopListening();
      expect(joined?.metadata?.labels?.[INSTANCE_ID]).toBe("2");
      expect(joined?.metadata?.labels?.[CONTROL]).toBe("true");
      const recreated = third.find((pod) => !second.some((old) => old.metadata!.uid === pod.metadata!.uid))!;
      expect(recreated.metadata!.labels).toMatchObject({ [INSTANCE_ID]: "2", "controller-revision-hash": updatedRevision });
      expect(third.filter((pod) => pod !== recreated).map((pod) => pod.metadata!.uid).sort()).toEqual(second.map((pod) => pod.metadata!.uid).sort());
      await eventually(() => idsAre(namespace, [0, 1, 2]), 30_000, "the ResourceContext to list ids 0, 1 and 2");
      // The name stays listed (kuperator reclaims the lists only behind its ReclaimScaleStrategy gate, off by
      // default) and its pod is gone: a Warning Event, as kube-xset answers it, and no failure condition.
      await eventually(async () => {
        const events = await clients().core.listNamespacedEvent({ namespace, fieldSelector: "reason=IncludeNotAllowed" });
        return events.items.some((event) => event.message === "pod stray may not join: there is no such pod") ? true : undefined;
      }, 30_000, "an IncludeNotAllowed Event for the name left in podToInclude");
      await eventually(async () => {
        const object = await readCollaSet(namespace);
        const condition = object.status?.conditions?.find((entry) => entry.type === "ReplicaFailure");
        return object.status?.observedGeneration === object.metadata.generation && condition?.status === "False" && object.status.replicas === 3 && object.status.readyReplicas === 3 ? true : undefined;
      }, 60_000, "ReplicaFailure False and three Ready pods");
      // The pod that left is not taken back: only podToInclude would.
      expect(collaSetController(watch.get(leavingName)!)).toBeUndefined();
      expect(isReady(watch.get(leavingName))).toBe(true);
    } finally {
      await watch.stop();
      await kubectl(["delete", "--ignore-not-found", "--wait=true", "--timeout=60s", "-n", namespace, "collaset", "web"]);
      expect(await operator.stop()).toBe(0);
    }
  });
});
