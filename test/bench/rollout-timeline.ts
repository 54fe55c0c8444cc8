// What a rollout's per-pod timeline says (pure): how long each pod took from its new spec to
// running it, and how long a freed slot of the concurrency budget stayed idle before the
// next pod was changed — the controller's hand-off cost, which bare patches barely have.
import { median, percentile } from "./statistics.ts";

/** When the watcher first saw a pod's spec name the new image, and first saw it run it (ms from the start). */
export interface PodTimes {
  specAt: number;
  runningAt: number;
}

export interface TimelineSummary {
  pods: number;
  /** From the start to the first pod's new spec. */
  firstChangeMs: number;
  /** Per pod, new spec seen → new image running. */
  podUpdateMs: { median: number; p90: number; max: number };
  /** The k-th pod to run the new image → the (k+concurrency)-th pod's new spec: a freed slot's idle time. */
  handoffMs: { median: number; p90: number; max: number; count: number };
  /** The most pods between new spec and running at once. */
  maxInFlight: number;
}

const rounded = (value: number) => Math.round(value);

export function summarizeTimeline(times: readonly PodTimes[], concurrency: number): TimelineSummary {
  if (times.length === 0) throw new Error("no pods in the timeline");
  const updates = times.map((pod) => pod.runningAt - pod.specAt);
  const specs = times.map((pod) => pod.specAt).sort((a, b) => a - b);
  const running = times.map((pod) => pod.runningAt).sort((a, b) => a - b);
  const handoffs: number[] = [];
  for (let k = 0; k + concurrency < specs.length; k++) handoffs.push(Math.max(0, specs[k + concurrency]! - running[k]!));
  // Sweep over +1 at each spec change and -1 at each finish (a finish at the same instant first).
  const events = [...specs.map((at) => ({ at, delta: 1 })), ...running.map((at) => ({ at, delta: -1 }))].sort((a, b) => a.at - b.at || a.delta - b.delta);
  let inFlight = 0;
  let maxInFlight = 0;
  for (const event of events) maxInFlight = Math.max(maxInFlight, (inFlight += event.delta));
  const spread = (samples: readonly number[]) => ({ median: rounded(median(samples)), p90: rounded(percentile(samples, 90)), max: rounded(Math.max(...samples)) });
  return {
    pods: times.length,
    firstChangeMs: rounded(specs[0]!),
    podUpdateMs: spread(updates),
    handoffMs: handoffs.length === 0 ? { median: 0, p90: 0, max: 0, count: 0 } : { ...spread(handoffs), count: handoffs.length },
    maxInFlight,
  };
}
