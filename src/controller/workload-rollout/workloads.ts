// Pods of other owners than a CollaSet, grouped by workload (api/owners.ts): the key the
// rollout controller reconciles, and the pod cache's index from a key to its pods.
import { collaSetOwnerOf, workloadOf, type WorkloadIdentity } from "../../api/owners.ts";
import type { Pod } from "../../kube/objects.ts";
import type { IndexFunc, Lister } from "../runtime/cache.ts";

/** `namespace/Kind/name/uid` (no part holds a slash; see WorkloadIdentity for an empty uid). */
export function workloadKey(namespace: string, workload: WorkloadIdentity): string {
  return `${namespace}/${workload.kind}/${workload.name}/${workload.uid}`;
}

export function parseWorkloadKey(key: string): { namespace: string; workload: WorkloadIdentity } {
  const [namespace = "", kind = "", name = "", uid = ""] = key.split("/");
  return { namespace, workload: { kind, name, uid } };
}

/** The workload key of a pod the rollout to other owners takes care of; undefined for CollaSet pods. */
export function workloadKeyOfPod(pod: Parameters<typeof workloadOf>[0] & { metadata?: { namespace?: string | undefined } | undefined }): string | undefined {
  if (collaSetOwnerOf(pod) !== undefined) return undefined;
  return workloadKey(pod.metadata?.namespace ?? "", workloadOf(pod));
}

export const podWorkloadIndex = "workload";

const podWorkloadIndexFunc: IndexFunc<Pod> = (pod) => {
  const key = workloadKeyOfPod(pod);
  return key === undefined ? [] : [key];
};

/** Adds the workload index to the pod cache, once. */
export function indexPodsByWorkload(pods: Lister<Pod>): void {
  if (!pods.hasIndex(podWorkloadIndex)) pods.addIndex(podWorkloadIndex, podWorkloadIndexFunc);
}
