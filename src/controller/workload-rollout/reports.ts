// What the rollout to pods of other owners knows about each pod, kept for the PodDecoration
// status (its per-workload counts): the decorations the pod should move, and why it cannot
// move now when something other than its turn holds it. Written by the rollout controller,
// read by the PodDecoration controller; both run in the leader.
import type { BLOCKED_REASONS } from "../../api/poddecoration.ts";

export type BlockedReason = (typeof BLOCKED_REASONS)[number];

export interface PodRolloutReport {
  /** Decorations whose revision on the pod differs from its target. */
  moving: readonly string[];
  blocked?: { reason: BlockedReason; message: string };
}

export class RolloutReports {
  /** workload key → pod name → report */
  readonly #byWorkload = new Map<string, Map<string, PodRolloutReport>>();

  /** Replaces a workload's reports; returns the decorations whose reports changed. */
  set(workloadKey: string, reports: ReadonlyMap<string, PodRolloutReport>): Set<string> {
    const previous = this.#byWorkload.get(workloadKey) ?? new Map<string, PodRolloutReport>();
    const changed = new Set<string>();
    for (const pod of new Set([...previous.keys(), ...reports.keys()])) {
      const [before, after] = [previous.get(pod), reports.get(pod)];
      if (sameReport(before, after)) continue;
      for (const name of [...(before?.moving ?? []), ...(after?.moving ?? [])]) changed.add(name);
    }
    if (reports.size === 0) this.#byWorkload.delete(workloadKey);
    else this.#byWorkload.set(workloadKey, new Map(reports));
    return changed;
  }

  get(workloadKey: string, pod: string): PodRolloutReport | undefined {
    return this.#byWorkload.get(workloadKey)?.get(pod);
  }

  /** Workloads with reports (for tests and metrics). */
  get size(): number {
    return this.#byWorkload.size;
  }
}

function sameReport(a: PodRolloutReport | undefined, b: PodRolloutReport | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.moving.length === b.moving.length
    && a.moving.every((name, index) => b.moving[index] === name)
    && a.blocked?.reason === b.blocked?.reason
    && a.blocked?.message === b.blocked?.message;
}
