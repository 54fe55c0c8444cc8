// What the rollout to pods of other owners knows about each pod, kept for the PodDecoration
// status (its per-workload counts): the decorations the pod should move, and why it cannot
// move now when something other than its turn holds it. Written by the rollout controller,
// read by the PodDecoration controller; both run in the leader.
import type { BLOCKED_REASONS } from "../../api/poddecoration.ts";
import { parseWorkloadKey } from "./workloads.ts";

const EMPTY: ReadonlyMap<string, ReadonlySet<string>> = new Map();

export type BlockedReason = (typeof BLOCKED_REASONS)[number];

export interface PodRolloutReport {
  /** Decorations whose revision on the pod differs from its target. */
  moving: readonly string[];
  blocked?: { reason: BlockedReason; message: string };
}

export class RolloutReports {
  /** workload key → pod name → report */
  readonly #byWorkload = new Map<string, Map<string, PodRolloutReport>>();
  /** `namespace/decoration` → workload key → names of its pods the decoration should move */
  readonly #moving = new Map<string, Map<string, Set<string>>>();

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
    const namespace = parseWorkloadKey(workloadKey).namespace;
    for (const name of changed) {
      const key = `${namespace}/${name}`;
      const byWorkload = this.#moving.get(key) ?? new Map<string, Set<string>>();
      const pods = new Set([...reports].filter(([, report]) => report.moving.includes(name)).map(([pod]) => pod));
      if (pods.size === 0) byWorkload.delete(workloadKey);
      else byWorkload.set(workloadKey, pods);
      if (byWorkload.size === 0) this.#moving.delete(key);
      else this.#moving.set(key, byWorkload);
    }
    return changed;
  }

  /** The pods a decoration should move, by workload key (for status: those its selector no longer matches too). */
  moving(namespace: string, decoration: string): ReadonlyMap<string, ReadonlySet<string>> {
    return this.#moving.get(`${namespace}/${decoration}`) ?? EMPTY;
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
