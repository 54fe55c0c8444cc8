import { Writable } from "node:stream";
import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { Controller, type Reconcile } from "../../../src/controller/runtime/controller.ts";
import { FakeClock, settle } from "../fake-clock.ts";
import type { EventHandler } from "../../../src/controller/runtime/informer.ts";

function logSink() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n")) if (line !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: "debug" }, stream) };
}

/** A reconcile that records calls and can be held open or made to fail per call. */
function scriptedReconcile() {
  const calls: string[] = [];
  const active = new Set<string>();
  let maxConcurrent = 0;
  let concurrentSameKey = false;
  const outcomes: ((key: string) => ReturnType<Reconcile>)[] = [];
  const reconcile: Reconcile = async (key) => {
    calls.push(key);
    if (active.has(key)) concurrentSameKey = true;
    active.add(key);
    maxConcurrent = Math.max(maxConcurrent, active.size);
    try {
      const next = outcomes.shift();
      return await (next === undefined ? Promise.resolve({}) : next(key));
    } finally {
      active.delete(key);
    }
  };
  return { calls, reconcile, outcomes, stats: () => ({ maxConcurrent, concurrentSameKey }) };
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("Controller", () => {
  it("reconciles nothing until every cache has synced", async () => {
    const clock = new FakeClock();
    const { calls, reconcile } = scriptedReconcile();
    let synced = false;
    const controller = new Controller({ name: "test", reconcile, clock, waitForSync: [{ hasSynced: () => synced }] });
    controller.enqueue("ns/a");
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    await clock.advance(1000);
    expect(calls).toEqual([]);
    synced = true;
    await clock.advance(100);
    expect(calls).toEqual(["ns/a"]);
    stop.abort();
    await running;
  });

  it("retries a failing key with growing backoff and forgets it after a success", async () => {
    const clock = new FakeClock();
    const { calls, reconcile, outcomes } = scriptedReconcile();
    const fail = () => Promise.reject(new Error("boom"));
    outcomes.push(fail, fail, fail, () => Promise.resolve({}));
    const controller = new Controller({ name: "test", reconcile, clock });
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    controller.enqueue("ns/a");
    await settle();
    expect(calls).toHaveLength(1);
    await clock.advance(5);
    expect(calls).toHaveLength(2);
    await clock.advance(9);
    expect(calls).toHaveLength(2);
    await clock.advance(1);
    expect(calls).toHaveLength(3);
    await clock.advance(20);
    expect(calls).toHaveLength(4);
    expect(controller.queue.numRequeues("ns/a")).toBe(0);
    await clock.advance(10_000);
    expect(calls).toHaveLength(4);
    stop.abort();
    await running;
  });

  it("reconciles again after requeueAfter, resetting the backoff", async () => {
    const clock = new FakeClock();
    const { calls, reconcile, outcomes } = scriptedReconcile();
    outcomes.push(() => Promise.reject(new Error("first")), () => Promise.resolve({ requeueAfter: 30_000 }));
    const controller = new Controller({ name: "test", reconcile, clock });
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    controller.enqueue("k");
    await clock.advance(5);
    expect(calls).toHaveLength(2);
    expect(controller.queue.numRequeues("k")).toBe(0);
    await clock.advance(29_999);
    expect(calls).toHaveLength(2);
    await clock.advance(1);
    expect(calls).toHaveLength(3);
    stop.abort();
    await running;
  });

  it("runs different keys in parallel on N workers but never one key twice at once", async () => {
    const clock = new FakeClock();
    const { reconcile, outcomes, calls, stats } = scriptedReconcile();
    const gates = [gate(), gate(), gate()];
    outcomes.push(...gates.map((g) => () => g.opened.then(() => ({}))));
    const controller = new Controller({ name: "test", reconcile, clock, workers: 3 });
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    controller.enqueue("a");
    controller.enqueue("b");
    await settle();
    // "a" again while it is being reconciled: it waits, although a worker is idle.
    controller.enqueue("a");
    await settle();
    expect(calls).toEqual(["a", "b"]);
    gates[0]!.open();
    await settle();
    expect(calls).toEqual(["a", "b", "a"]);
    gates[1]!.open();
    gates[2]!.open();
    await settle();
    expect(stats()).toEqual({ maxConcurrent: 2, concurrentSameKey: false });
    stop.abort();
    await running;
  });

  it("lets the reconcile in flight finish on stop and then resolves", async () => {
    const clock = new FakeClock();
    const { reconcile, outcomes, calls } = scriptedReconcile();
    const held = gate();
    let finished = false;
    outcomes.push(() => held.opened.then(() => ((finished = true), {})));
    const controller = new Controller({ name: "test", reconcile, clock, workers: 2 });
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    controller.enqueue("a");
    await settle();
    controller.enqueue("b");
    await settle();
    expect(calls).toEqual(["a", "b"]);
    controller.enqueue("c");
    stop.abort();
    let resolved = false;
    void running.then(() => (resolved = true));
    await settle();
    expect(resolved).toBe(false);
    held.open();
    await running;
    expect(finished).toBe(true);
    // Keys still queued at stop are not started.
    expect(calls).toEqual(["a", "b"]);
    expect(controller.queue.shuttingDown()).toBe(true);
  });

  it("maps informer events to keys while it runs, and detaches its handlers when it stops", async () => {
    const clock = new FakeClock();
    const { reconcile, calls } = scriptedReconcile();
    const handlers = new Set<EventHandler<{ metadata: { name: string } }>>();
    const informer = { addEventHandler: (handler: EventHandler<{ metadata: { name: string } }>) => (handlers.add(handler), () => handlers.delete(handler)) };
    const controller = new Controller({ name: "test", reconcile, clock });
    controller.watch(informer, { onAdd: (object) => controller.enqueue(object.metadata.name) });
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    for (const handler of handlers) handler.onAdd?.({ metadata: { name: "a" } });
    await settle();
    expect(calls).toEqual(["a"]);
    stop.abort();
    await running;
    expect(handlers.size).toBe(0);
  });

  it("logs one JSON line per failure with controller, key and reason", async () => {
    const clock = new FakeClock();
    const { lines, logger } = logSink();
    const { reconcile, outcomes } = scriptedReconcile();
    outcomes.push(() => Promise.reject(new Error("PodDecoration ns/x: spec.selector: invalid")));
    const controller = new Controller({ name: "poddecoration", reconcile, clock, logger });
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    controller.enqueue("ns/x");
    await settle();
    stop.abort();
    await running;
    const failure = lines.find((line) => line.level === 50);
    expect(failure).toMatchObject({ controller: "poddecoration", key: "ns/x", reason: "PodDecoration ns/x: spec.selector: invalid", retries: 1 });
  });

  it("counts reconciles by result and errors under controller-runtime's names", async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const { reconcile, outcomes } = scriptedReconcile();
    outcomes.push(
      () => Promise.reject(new Error("x")),
      () => Promise.resolve({ requeueAfter: 1000 }),
      () => Promise.resolve({ requeue: true }),
      () => Promise.resolve({}),
    );
    const controller = new Controller({ name: "collaset", reconcile, clock, metrics: registry });
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    controller.enqueue("k");
    await clock.advance(5);
    await clock.advance(1000);
    await clock.advance(5);
    stop.abort();
    await running;
    const text = await registry.metrics();
    for (const result of ["error", "requeue_after", "requeue", "success"]) expect(text).toContain(`controller_runtime_reconcile_total{controller="collaset",result="${result}"} 1`);
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="collaset"} 1');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_count{controller="collaset"} 4');
    expect(text).toContain('workqueue_adds_total{name="collaset"} 4');
    expect(text).toContain('workqueue_retries_total{name="collaset"} 2');
  });
});
