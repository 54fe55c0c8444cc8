// The simulated kubelet's memory of what runs in each pod, and the container statuses it
// reports from it. As on a real node, what runs is the node's own knowledge, never read back
// from the pod's status in a cache: a cache that has not yet shown the simulator's last status
// write must not make it report an older image again. Pure, so it is unit-tested.

export interface RunningContainer {
  image: string;
  restartCount: number;
  startedAt: string;
}

export interface ReportedStatus {
  name: string;
  image?: string;
  imageID?: string;
  ready?: boolean;
  started?: boolean;
  restartCount?: number;
  state?: { running?: { startedAt?: string } };
}

export interface SpecContainer {
  name: string;
  image?: string;
}

/** What runs in one pod (container name → state), and since when each pending image change was first seen. */
export interface PodMemory {
  running: Map<string, RunningContainer>;
  changeSeen: Map<string, { image: string; at: number }>;
}

export function newPodMemory(): PodMemory {
  return { running: new Map(), changeSeen: new Map() };
}

export interface ContainerStep {
  statuses: ReportedStatus[];
  /** Milliseconds until a pending image change is due; undefined when none is pending. */
  wakeInMs: number | undefined;
}

/**
 * Advances `memory` to `now` for the pod's spec: a container seen for the first time runs its
 * spec image (or what the pod's status says, for a pod the node already ran before this
 * simulator started); an image changed in the spec runs `restartDelayMs` after the change was
 * first seen, with one more restart.
 */
export function stepContainers(memory: PodMemory, spec: readonly SpecContainer[], reported: readonly ReportedStatus[] | undefined, now: number, restartDelayMs: number): ContainerStep {
  const startedAt = new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z");
  const previous = new Map((reported ?? []).map((status) => [status.name, status]));
  let wakeInMs: number | undefined;
  for (const container of spec) {
    const image = container.image ?? "";
    let running = memory.running.get(container.name);
    if (running === undefined) {
      const before = previous.get(container.name);
      running = before?.image === undefined
        ? { image, restartCount: 0, startedAt }
        : { image: before.image, restartCount: before.restartCount ?? 0, startedAt: before.state?.running?.startedAt ?? startedAt };
      memory.running.set(container.name, running);
    }
    if (running.image === image) {
      memory.changeSeen.delete(container.name);
      continue;
    }
    const seen = memory.changeSeen.get(container.name);
    const at = seen?.image === image ? seen.at : now;
    if (now - at >= restartDelayMs) {
      memory.running.set(container.name, { image, restartCount: running.restartCount + 1, startedAt });
      memory.changeSeen.delete(container.name);
    } else {
      memory.changeSeen.set(container.name, { image, at });
      wakeInMs = Math.min(wakeInMs ?? Number.POSITIVE_INFINITY, restartDelayMs - (now - at));
    }
  }
  const statuses = spec.map((container) => {
    const running = memory.running.get(container.name)!;
    return {
      name: container.name,
      image: running.image,
      imageID: `simulated://${running.image}`,
      ready: true,
      started: true,
      restartCount: running.restartCount,
      state: { running: { startedAt: running.startedAt } },
    };
  });
  return { statuses, wakeInMs };
}

/** Whether the reported statuses already say what `statuses` say (the API server orders keys its own way). */
export function sameStatuses(reported: readonly ReportedStatus[] | undefined, statuses: readonly ReportedStatus[]): boolean {
  if (reported === undefined || reported.length !== statuses.length) return false;
  return statuses.every((status, index) => {
    const other = reported[index]!;
    return other.name === status.name && other.image === status.image && other.imageID === status.imageID && other.ready === status.ready &&
      other.started === status.started && other.restartCount === status.restartCount && other.state?.running?.startedAt === status.state?.running?.startedAt;
  });
}
