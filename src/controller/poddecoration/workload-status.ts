// status.workloads (DESIGN §5): the rollout of one decoration to pods of other owners than a
// CollaSet, per workload — matched, updated, outdated (should move and has not yet), blocked
// (held by more than its turn, with the first pods' reasons). From cached pods and the rollout
// controller's reports. Pure.
import type { PodDecoration, PodDecorationStatus } from "../../api/poddecoration.ts";
import { workloadOf } from "../../api/owners.ts";
import { recordedRevisions } from "../../decoration/recording.ts";
import { isMatchedPod } from "../../decoration/rollout.ts";
import type { Pod } from "../../kube/objects.ts";
import type { PodRolloutReport } from "../workload-rollout/reports.ts";
import { workloadKeyOfPod } from "../workload-rollout/workloads.ts";

export type WorkloadStatus = NonNullable<PodDecorationStatus["workloads"]>[number];

/** Blocked pods listed per workload; the count says how many there are. */
export const BLOCKED_PODS_LISTED = 10;

/**
 * `pods`: at least every pod of the namespace the decoration matches or that records it (others
 * are skipped); `report` finds the rollout controller's report of a pod by workload key and name.
 */
export function workloadStatuses(decoration: PodDecoration, pods: readonly Pod[], updatedRevision: string | undefined, report: (workloadKey: string, pod: string) => PodRolloutReport | undefined): WorkloadStatus[] {
  const name = decoration.metadata.name ?? "";
  const workloads = new Map<string, WorkloadStatus>();
  const seen = new Set<string>();
  for (const pod of pods) {
    const key = workloadKeyOfPod(pod);
    const podName = pod.metadata?.name ?? "";
    if (key === undefined || seen.has(podName)) continue;
    seen.add(podName);
    const matched = isMatchedPod(decoration, pod);
    const recorded = recordedRevisions(pod)?.get(name);
    const standing = report(key, podName);
    const moving = standing?.moving.includes(name) === true;
    if (!matched && !moving) continue;
    let status = workloads.get(key);
    if (status === undefined) workloads.set(key, (status = { ...workloadOf(pod), matchedPods: 0, updatedPods: 0, outdatedPods: 0, blockedPods: 0 }));
    if (matched) status.matchedPods++;
    if (matched && recorded !== undefined && recorded === updatedRevision) status.updatedPods++;
    if (!moving) continue;
    status.outdatedPods++;
    if (standing?.blocked === undefined) continue;
    status.blockedPods++;
    (status.blocked ??= []).push({ pod: podName, ...standing.blocked });
  }
  return [...workloads.values()]
    .map((status) => (status.blocked === undefined ? status : { ...status, blocked: status.blocked.sort((a, b) => compare(a.pod, b.pod)).slice(0, BLOCKED_PODS_LISTED) }))
    .sort((a, b) => compare(a.kind, b.kind) || compare(a.name, b.name));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
