import { describe, expect, it } from "vitest";
import { median, percentile } from "./statistics.ts";

describe("percentile", () => {
  it("takes the nearest rank, whatever the order of the samples", () => {
    const samples = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(percentile(samples, 50)).toBe(5);
    expect(percentile(samples, 99)).toBe(10);
    expect(percentile(samples, 10)).toBe(1);
    expect(percentile(samples, 100)).toBe(10);
  });

  it("is NaN without samples and refuses a percentile outside (0, 100]", () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });
});

describe("median", () => {
  it("is the middle sample, or the mean of the two middle ones", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});
