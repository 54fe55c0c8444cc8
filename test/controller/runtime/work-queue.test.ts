import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { FakeClock, settle } from "../fake-clock.ts";
import { RuntimeMetrics } from "../../../src/controller/runtime/metrics.ts";
import { ItemExponentialFailureRateLimiter } from "../../../src/controller/runtime/rate-limiter.ts";
import { WorkQueue } from "../../../src/controller/runtime/work-queue.ts";

function queue(clock = new FakeClock()) {
  return { clock, queue: new WorkQueue({ name: "test", clock, rateLimiter: new ItemExponentialFailureRateLimiter(5, 1_000_000) }) };
}

/** The value of promise if it has settled by now, else "pending". */
async function peek<T>(promise: Promise<T>): Promise<T | "pending"> {
  return Promise.race([promise, settle().then(() => "pending" as const)]);
}

describe("WorkQueue", () => {
  it("hands keys out in the order they were added", async () => {
    const { queue: q } = queue();
    q.add("a");
    q.add("b");
    q.add("c");
    expect([await q.get(), await q.get(), await q.get()]).toEqual(["a", "b", "c"]);
  });

  it("collapses repeated adds of a key that is still queued", async () => {
    const { queue: q } = queue();
    q.add("a");
    q.add("b");
    q.add("a");
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("b");
    expect(await peek(q.get())).toBe("pending");
  });

  it("never hands a key to a second worker while the first is processing it", async () => {
    const { queue: q } = queue();
    q.add("a");
    expect(await q.get()).toBe("a");
    q.add("a");
    expect(q.len()).toBe(0);
    const second = q.get();
    expect(await peek(second)).toBe("pending");
    q.done("a");
    expect(await peek(second)).toBe("a");
  });

  it("queues a key re-added during processing once, after done", async () => {
    const { queue: q } = queue();
    q.add("a");
    await q.get();
    q.add("a");
    q.add("a");
    q.add("b");
    q.done("a");
    expect([await q.get(), await q.get()]).toEqual(["b", "a"]);
    expect(q.len()).toBe(0);
  });

  it("does not requeue a key that was not re-added", async () => {
    const { queue: q } = queue();
    q.add("a");
    await q.get();
    q.done("a");
    expect(q.len()).toBe(0);
    expect(await peek(q.get())).toBe("pending");
  });

  it("wakes a waiting worker when a key arrives", async () => {
    const { queue: q } = queue();
    const waiting = q.get();
    expect(await peek(waiting)).toBe("pending");
    q.add("x");
    expect(await waiting).toBe("x");
  });

  it("backs a failing key off exponentially from 5ms", async () => {
    const { queue: q, clock } = queue();
    const delays: number[] = [];
    for (let failure = 0; failure < 5; failure++) {
      const added = clock.now();
      q.addRateLimited("a");
      const next = q.get();
      // Not before its time...
      const expected = 5 * 2 ** failure;
      await clock.advance(expected - 1);
      expect(await peek(next)).toBe("pending");
      // ...and exactly then.
      await clock.advance(1);
      expect(await peek(next)).toBe("a");
      delays.push(clock.now() - added);
      q.done("a");
    }
    expect(delays).toEqual([5, 10, 20, 40, 80]);
    expect(q.numRequeues("a")).toBe(5);
  });

  it("caps the backoff at 1000 seconds", async () => {
    const clock = new FakeClock();
    const limiter = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    for (let failure = 0; failure < 40; failure++) limiter.when("a");
    const capped = new WorkQueue({ name: "capped", clock, rateLimiter: limiter });
    capped.addRateLimited("a");
    const next = capped.get();
    await clock.advance(999_999);
    expect(await peek(next)).toBe("pending");
    await clock.advance(1);
    expect(await next).toBe("a");
  });

  it("starts the backoff over after forget", async () => {
    const { queue: q, clock } = queue();
    q.addRateLimited("a");
    q.addRateLimited("a");
    q.addRateLimited("a");
    expect(q.numRequeues("a")).toBe(3);
    q.forget("a");
    expect(q.numRequeues("a")).toBe(0);
    await clock.advance(10);
    expect(await q.get()).toBe("a");
    q.done("a");
    q.addRateLimited("a");
    const next = q.get();
    await clock.advance(4);
    expect(await peek(next)).toBe("pending");
    await clock.advance(1);
    expect(await next).toBe("a");
  });

  it("keeps a separate backoff per key", async () => {
    const { queue: q, clock } = queue();
    q.addRateLimited("a");
    q.addRateLimited("a");
    q.addRateLimited("b");
    await clock.advance(5);
    // "a" was delayed 5ms then 10ms: the earlier addAfter wins, so it is ready at 5ms as well.
    expect([await q.get(), await q.get()].sort()).toEqual(["a", "b"]);
    expect(q.numRequeues("a")).toBe(2);
    expect(q.numRequeues("b")).toBe(1);
  });

  it("releases delayed keys in the order they fall due", async () => {
    const { queue: q, clock } = queue();
    q.addAfter("late", 300);
    q.addAfter("early", 100);
    q.addAfter("middle", 200);
    q.addAfter("now", 0);
    expect(q.len()).toBe(1);
    await clock.advance(300);
    expect([await q.get(), await q.get(), await q.get(), await q.get()]).toEqual(["now", "early", "middle", "late"]);
  });

  it("keeps the earliest time when a delayed key is added again", async () => {
    const { queue: q, clock } = queue();
    q.addAfter("a", 500);
    q.addAfter("a", 100);
    q.addAfter("a", 800);
    await clock.advance(100);
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe("a");
    q.done("a");
    await clock.advance(1000);
    expect(q.len()).toBe(0);
  });

  it("collapses a delayed key into the same key already queued", async () => {
    const { queue: q, clock } = queue();
    q.add("a");
    q.addAfter("a", 50);
    await clock.advance(50);
    expect(q.len()).toBe(1);
  });

  it("ignores adds after shutdown but still hands out what was queued", async () => {
    const { queue: q, clock } = queue();
    q.add("a");
    q.addAfter("later", 10);
    q.shutDown();
    q.add("b");
    q.addRateLimited("c");
    await clock.advance(1000);
    expect(q.shuttingDown()).toBe(true);
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBeUndefined();
  });

  it("releases idle workers on shutdown", async () => {
    const { queue: q } = queue();
    const idle = [q.get(), q.get()];
    q.shutDown();
    expect(await Promise.all(idle)).toEqual([undefined, undefined]);
  });

  it("drains: shutDownWithDrain waits for keys in flight", async () => {
    const { queue: q } = queue();
    q.add("a");
    q.add("b");
    await q.get();
    await q.get();
    const drained = q.shutDownWithDrain();
    expect(await peek(drained)).toBe("pending");
    q.done("a");
    expect(await peek(drained)).toBe("pending");
    q.done("b");
    expect(await peek(drained)).toBeUndefined();
  });

  it("drains at once when nothing is in flight", async () => {
    const { queue: q } = queue();
    await expect(q.shutDownWithDrain()).resolves.toBeUndefined();
  });

  it("reports depth, adds, retries and durations under the workqueue names", async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const metrics = new RuntimeMetrics(registry);
    const q = new WorkQueue({ name: "pods", clock, metrics: metrics.queue("pods"), rateLimiter: new ItemExponentialFailureRateLimiter() });
    q.add("a");
    q.add("a");
    q.add("b");
    await clock.advance(2000);
    await q.get();
    await clock.advance(500);
    q.done("a");
    q.addRateLimited("a");
    const text = await registry.metrics();
    expect(text).toContain('workqueue_depth{name="pods"} 1');
    expect(text).toContain('workqueue_adds_total{name="pods"} 2');
    expect(text).toContain('workqueue_retries_total{name="pods"} 1');
    expect(text).toContain('workqueue_queue_duration_seconds_sum{name="pods"} 2');
    expect(text).toContain('workqueue_work_duration_seconds_sum{name="pods"} 0.5');
  });
});
