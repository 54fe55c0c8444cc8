import { describe, expect, it } from "vitest";
import { clusterRatios } from "./webhook-ratios.ts";

describe("clusterRatios", () => {
  it("says how much lower the fleet's ratios are than the all-namespaced ones, and how much higher its p99", () => {
    const fleet = clusterRatios({ throughputRatio: 0.665, cpuThroughputRatio: 0.7, p99Ratio: 1.32 }, { throughputRatio: 0.7, cpuThroughputRatio: 0.7, p99Ratio: 1.2 });
    expect(fleet).toEqual({ throughputRatio: 0.665, cpuThroughputRatio: 0.7, p99Ratio: 1.32, slowdownPercent: 5, cpuSlowdownPercent: 0, p99SlowdownPercent: 10 });
  });

  it("gives a negative slowdown when the fleet is the faster", () => {
    expect(clusterRatios({ throughputRatio: 0.36, cpuThroughputRatio: 0.36, p99Ratio: 1 }, { throughputRatio: 0.35, cpuThroughputRatio: 0.4, p99Ratio: 1 }).slowdownPercent).toBe(-2.9);
  });
});
