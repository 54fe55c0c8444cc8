// The webhook load bench's ratios: the pod webhook's figures over the bare server's in one run,
// and the fleet's (issue 38) over the all-namespaced ones of the same run. Pure.

/** Ratios of the pod webhook's figures to the bare server's in the same run. */
export interface WebhookRatios {
  /** pod webhook req/s ÷ bare req/s, both at saturation */
  throughputRatio: number;
  /** bare ÷ pod webhook server CPU µs per request at saturation: the ratio one fully available core would give. */
  cpuThroughputRatio: number;
  /** Pod webhook ÷ bare server p99 at the fixed rate, from the raw response times (µs resolution). */
  p99Ratio: number;
}

/** The fleet's ratios, and how much slower than the all-namespaced ones of the same run they are. */
export interface ClusterRatios extends WebhookRatios {
  /** (1 − fleet ÷ namespaced throughputRatio) × 100: how much lower the fleet's req/s is, in percent (negative: higher). */
  slowdownPercent: number;
  /** The same by server CPU per request (cpuThroughputRatio). */
  cpuSlowdownPercent: number;
  /** (fleet ÷ namespaced p99Ratio − 1) × 100: how much higher its p99 at the fixed rate is, in percent. */
  p99SlowdownPercent: number;
}

const percent = (value: number) => Math.round(value * 1000) / 10;

/** The fleet's ratios with how they compare with the all-namespaced ones, in percent to one decimal. */
export function clusterRatios(cluster: WebhookRatios, namespaced: WebhookRatios): ClusterRatios {
  return {
    ...cluster,
    slowdownPercent: percent(1 - cluster.throughputRatio / namespaced.throughputRatio),
    cpuSlowdownPercent: percent(1 - cluster.cpuThroughputRatio / namespaced.cpuThroughputRatio),
    p99SlowdownPercent: percent(cluster.p99Ratio / namespaced.p99Ratio - 1),
  };
}
