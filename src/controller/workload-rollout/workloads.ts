// Pods of other owners than a CollaSet, grouped by workload (api/owners.ts): the key the
// rollout controller reconciles, and the pod cache's index from a key to its pods.
import { collaSetOwnerOf, workloadOf, type Workload } from "../../api/owners.ts";
import type { Pod } from "../../kube/objects.ts";
import type { IndexFunc, Lister } from "../runtime/cache.ts";

/** `namespace/Kind/name` (name empty for the pods without a controller). */
export function workloadKey(namespace: string, workload: Workload): string {
  return `${namespace}/${workload.kind}/${workload.name}`;
}

export function parseWorkloadKey(key: string): { namespace: string; workload: Workload } {
  const [namespace = "", kind = "", ...name] = key.split("/");
  return { namespace, workload: { kind, name: name.join("/") } };
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
