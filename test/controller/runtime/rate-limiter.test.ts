import { describe, expect, it } from "vitest";
import { FakeClock } from "../fake-clock.ts";
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from "../../../src/controller/runtime/rate-limiter.ts";

describe("ItemExponentialFailureRateLimiter", () => {
  it("doubles the delay from the base on every failure", () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    expect(Array.from({ length: 6 }, () => limiter.when("a"))).toEqual([5, 10, 20, 40, 80, 160]);
    expect(limiter.numRequeues("a")).toBe(6);
  });

  it("caps the delay, even after enough failures to overflow 2^n", () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    const delays = Array.from({ length: 1100 }, () => limiter.when("a"));
    expect(delays[17]).toBe(655_360);
    expect(delays[18]).toBe(1_000_000);
    expect(delays.at(-1)).toBe(1_000_000);
  });

  it("tracks keys independently and forgets one without touching the others", () => {
    const limiter = new ItemExponentialFailureRateLimiter(1, 100);
    limiter.when("a");
    limiter.when("a");
    limiter.when("b");
    limiter.forget("a");
    expect(limiter.numRequeues("a")).toBe(0);
    expect(limiter.when("a")).toBe(1);
    expect(limiter.when("b")).toBe(2);
  });
});

describe("BucketRateLimiter", () => {
  it("lets a burst through and then spaces items at 1/qps", async () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter(10, 3, clock);
    expect([limiter.when("a"), limiter.when("b"), limiter.when("c")]).toEqual([0, 0, 0]);
    expect(limiter.when("d")).toBeCloseTo(100);
    expect(limiter.when("e")).toBeCloseTo(200);
    await clock.advance(1000);
    // Refilled to the burst, not beyond: 10 tokens accrued, 2 owed, capped at 3.
    expect([limiter.when("f"), limiter.when("g"), limiter.when("h")]).toEqual([0, 0, 0]);
    expect(limiter.when("i")).toBeCloseTo(100);
    expect(limiter.numRequeues("i")).toBe(0);
  });
});

describe("MaxOfRateLimiter and the controller default", () => {
  it("waits for the slowest limiter and forgets in all of them", () => {
    const clock = new FakeClock();
    const slow = new ItemExponentialFailureRateLimiter(50, 10_000);
    const fast = new ItemExponentialFailureRateLimiter(1, 10_000);
    const limiter = new MaxOfRateLimiter(fast, slow);
    expect(limiter.when("a")).toBe(50);
    expect(limiter.when("a")).toBe(100);
    expect(limiter.numRequeues("a")).toBe(2);
    limiter.forget("a");
    expect(slow.numRequeues("a")).toBe(0);
    expect(fast.numRequeues("a")).toBe(0);
    const fallback = defaultControllerRateLimiter(clock);
    expect([fallback.when("x"), fallback.when("x"), fallback.when("x")]).toEqual([5, 10, 20]);
  });

  it("applies the shared 10 qps bucket after a burst of 100 distinct keys", () => {
    const limiter = defaultControllerRateLimiter(new FakeClock());
    for (let item = 0; item < 100; item++) expect(limiter.when(`k${item}`)).toBe(5);
    expect(limiter.when("k100")).toBeCloseTo(100);
  });

  it("caps the per-item backoff at 1000 s, or lower when asked", () => {
    const fail = (limiter: ReturnType<typeof defaultControllerRateLimiter>) => Array.from({ length: 30 }, () => limiter.when("x")).at(-1);
    expect(fail(defaultControllerRateLimiter(new FakeClock()))).toBe(1_000_000);
    expect(fail(defaultControllerRateLimiter(new FakeClock(), 30_000))).toBe(30_000);
  });
});
