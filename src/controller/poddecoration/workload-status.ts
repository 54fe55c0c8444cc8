// status.workloads (DESIGN §5): the rollout of one decoration per workload — matched, updated,
// outdated (should move and has not yet), blocked (held by more than its turn, with the first
// pods' reasons). Pods of other owners than a CollaSet always; a CollaSet (whose pods status.details
// lists) while its pods have to move, with what holds them (paused, InPlaceOnly, a lifecycle
// step stuck: DESIGN §10, held back is said). Tallied in desiredStatus's one pass over the
// matched pods, with the controllers' reports; pods it should move that the selector no longer
// matches come from the reports. Pure.
import type { PodDecorationStatus } from "../../api/poddecoration.ts";
import type { PodRolloutReport } from "../workload-rollout/reports.ts";
import { parseWorkloadKey } from "../workload-rollout/workloads.ts";
import { COLLASET_KIND } from "../../api/group.ts";

export type WorkloadStatus = NonNullable<PodDecorationStatus["workloads"]>[number];

/** Blocked pods listed per workload; the count says how many there are. */
export const BLOCKED_PODS_LISTED = 10;

/** What the tally reads of the rollout controller's reports. */
export interface WorkloadReports {
  get(workloadKey: string, pod: string): PodRolloutReport | undefined;
  /** The pods the decoration should move, by workload key. */
  moving(namespace: string, decoration: string): ReadonlyMap<string, ReadonlySet<string>>;
}

export class WorkloadTally {
  readonly #reports: WorkloadReports;
  readonly #moving: ReadonlyMap<string, ReadonlySet<string>>;
  readonly #workloads = new Map<string, WorkloadStatus>();
  /** Moving pods counted as matched (`workloadKey\0pod`), so the unmatched ones are counted once more. */
  readonly #counted = new Set<string>();
  #last: { key: string; status: WorkloadStatus } | undefined;

  /** `decoration` by its key (decoration-kind.ts); a ClusterPodDecoration's over each namespace it may have pods in, each workload then named with its namespace. */
  readonly #fleet: boolean;

  constructor(namespaces: string | readonly string[], decoration: string, reports: WorkloadReports) {
    this.#reports = reports;
    this.#fleet = typeof namespaces !== "string";
    if (typeof namespaces === "string") this.#moving = reports.moving(namespaces, decoration);
    else {
      const moving = new Map<string, ReadonlySet<string>>();
      for (const namespace of namespaces) for (const [key, pods] of reports.moving(namespace, decoration)) moving.set(key, pods);
      this.#moving = moving;
    }
  }

  /** A matched pod of a workload, on the updated revision or not. */
  matched(workloadKey: string, pod: string, updated: boolean): void {
    const status = this.#entry(workloadKey);
    status.matchedPods++;
    if (updated) status.updatedPods++;
    if (this.#moving.size === 0 || this.#moving.get(workloadKey)?.has(pod) !== true) return;
    this.#counted.add(`${workloadKey}\0${pod}`);
    this.#outdated(status, workloadKey, pod);
  }

  /** The workloads, by kind and name, with the moving pods the selector no longer matches added. */
  statuses(): WorkloadStatus[] {
    for (const [workloadKey, pods] of this.#moving) {
      for (const pod of pods) if (!this.#counted.has(`${workloadKey}\0${pod}`)) this.#outdated(this.#entry(workloadKey), workloadKey, pod);
    }
    return [...this.#workloads.values()]
      .filter((status) => status.kind !== COLLASET_KIND || status.outdatedPods > 0)
      .map((status) => (status.blocked === undefined ? status : { ...status, blocked: status.blocked.sort((a, b) => compare(a.pod, b.pod)).slice(0, BLOCKED_PODS_LISTED) }))
      .sort((a, b) => compare(a.namespace ?? "", b.namespace ?? "") || compare(a.kind, b.kind) || compare(a.name, b.name));
  }

  #outdated(status: WorkloadStatus, workloadKey: string, pod: string): void {
    status.outdatedPods++;
    const blocked = this.#reports.get(workloadKey, pod)?.blocked;
    if (blocked === undefined) return;
    status.blockedPods++;
    (status.blocked ??= []).push({ pod, ...blocked });
  }

  #entry(workloadKey: string): WorkloadStatus {
    // A workload's pods mostly come one after another (the label index files them so).
    if (this.#last?.key === workloadKey) return this.#last.status;
    let status = this.#workloads.get(workloadKey);
    if (status === undefined) {
      const { namespace, workload } = parseWorkloadKey(workloadKey);
      this.#workloads.set(workloadKey, (status = { ...(this.#fleet ? { namespace } : {}), kind: workload.kind, name: workload.name, matchedPods: 0, updatedPods: 0, outdatedPods: 0, blockedPods: 0 }));
    }
    this.#last = { key: workloadKey, status };
    return status;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
