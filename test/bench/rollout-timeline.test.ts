import { describe, expect, it } from "vitest";
import { summarizeTimeline } from "./rollout-timeline.ts";

describe("summarizeTimeline", () => {
  it("measures each freed slot's idle time until the next pod changes", () => {
    // Concurrency 2: pods 0 and 1 start at once; pod 2 starts 30 ms after pod 0 finished, pod 3 50 ms after pod 1.
    const summary = summarizeTimeline([
      { specAt: 10, runningAt: 110 },
      { specAt: 10, runningAt: 130 },
      { specAt: 140, runningAt: 240 },
      { specAt: 180, runningAt: 280 },
    ], 2);
    expect(summary.firstChangeMs).toBe(10);
    expect(summary.podUpdateMs).toEqual({ median: 100, p90: 120, max: 120 });
    expect(summary.handoffMs).toEqual({ median: 40, p90: 50, max: 50, count: 2 });
    expect(summary.maxInFlight).toBe(2);
  });

  it("counts a slot reused at the very instant it was freed as no overlap", () => {
    const summary = summarizeTimeline([{ specAt: 0, runningAt: 100 }, { specAt: 100, runningAt: 200 }], 1);
    expect(summary.maxInFlight).toBe(1);
    expect(summary.handoffMs.median).toBe(0);
  });

  it("refuses an empty timeline", () => {
    expect(() => summarizeTimeline([], 10)).toThrow(/no pods/);
  });
});
