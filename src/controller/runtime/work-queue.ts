// client-go's rate-limiting work queue: a key waiting in the queue is there once however
// often it is added; a key is handed to one worker at a time, and a key added while it is
// being processed is queued again when that worker calls done(); failures come back after a
// per-key backoff; addAfter() holds a key back until its time.
import { realClock, type Clock, type Timer } from "./clock.ts";
import { noQueueMetrics, type QueueMetrics } from "./metrics.ts";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate-limiter.ts";

export interface WorkQueueOptions {
  /** The `name` label of the workqueue metrics. */
  name: string;
  clock?: Clock;
  rateLimiter?: RateLimiter;
  metrics?: QueueMetrics;
}

interface Delayed {
  key: string;
  readyAt: number;
  sequence: number;
}

/** Min-heap of delayed keys by readyAt, then insertion order. */
class DelayHeap {
  readonly #items: Delayed[] = [];

  get size(): number {
    return this.#items.length;
  }

  peek(): Delayed | undefined {
    return this.#items[0];
  }

  push(item: Delayed): void {
    const items = this.#items;
    items.push(item);
    let index = items.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.#less(index, parent)) break;
      this.#swap(index, parent);
      index = parent;
    }
  }

  pop(): Delayed | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    items[0] = last;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < items.length && this.#less(left, smallest)) smallest = left;
      if (right < items.length && this.#less(right, smallest)) smallest = right;
      if (smallest === index) break;
      this.#swap(index, smallest);
      index = smallest;
    }
    return top;
  }

  clear(): void {
    this.#items.length = 0;
  }

  #less(a: number, b: number): boolean {
    const x = this.#items[a]!;
    const y = this.#items[b]!;
    return x.readyAt < y.readyAt || (x.readyAt === y.readyAt && x.sequence < y.sequence);
  }

  #swap(a: number, b: number): void {
    const items = this.#items;
    [items[a], items[b]] = [items[b]!, items[a]!];
  }
}

export class WorkQueue {
  readonly name: string;
  readonly #clock: Clock;
  readonly #rateLimiter: RateLimiter;
  readonly #metrics: QueueMetrics;

  /** Keys ready to hand out, in order; each is also in #dirty. */
  #queue: string[] = [];
  #head = 0;
  /** Keys that need processing (queued, or re-added while processing); value = when added. */
  readonly #dirty = new Map<string, number>();
  /** Keys handed to a worker and not yet done; value = when handed out. */
  readonly #processing = new Map<string, number>();
  readonly #waiters: ((key: string | undefined) => void)[] = [];

  /** Delayed keys: the heap may hold stale entries, #waiting says which readyAt is current. */
  readonly #delayed = new DelayHeap();
  readonly #waiting = new Map<string, number>();
  #sequence = 0;
  #timer: Timer | undefined;
  #timerAt = Infinity;

  #shuttingDown = false;
  readonly #drained: (() => void)[] = [];

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.#clock = options.clock ?? realClock;
    this.#rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.#clock);
    this.#metrics = options.metrics ?? noQueueMetrics;
  }

  /** Keys waiting to be handed out (not counting delayed or in-flight ones). */
  len(): number {
    return this.#queue.length - this.#head;
  }

  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#metrics.added();
    this.#dirty.set(key, this.#clock.now());
    // Being processed: it is queued again by done(), never handed to a second worker.
    if (this.#processing.has(key)) return;
    this.#push(key);
  }

  /** Adds key once ms have passed; an earlier pending addAfter of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const readyAt = this.#clock.now() + ms;
    const current = this.#waiting.get(key);
    if (current !== undefined && current <= readyAt) return;
    this.#waiting.set(key, readyAt);
    this.#delayed.push({ key, readyAt, sequence: this.#sequence++ });
    this.#arm();
  }

  /** Adds key after its rate limiter's backoff: each call without forget() waits longer. */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) return;
    this.#metrics.retried();
    this.addAfter(key, this.#rateLimiter.when(key));
  }

  /** Resets key's backoff (it succeeded); does not remove it from the queue. */
  forget(key: string): void {
    this.#rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.#rateLimiter.numRequeues(key);
  }

  /**
   * The next key to process, waiting for one if necessary; undefined once the queue is shut
   * down and empty. Keys queued before shutdown are still handed out, as in client-go.
   */
  get(): Promise<string | undefined> {
    const key = this.#pop();
    if (key !== undefined) return Promise.resolve(key);
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks key processed; if it was added meanwhile, it goes back in the queue. */
  done(key: string): void {
    const startedAt = this.#processing.get(key);
    if (startedAt === undefined) return;
    this.#processing.delete(key);
    this.#metrics.worked((this.#clock.now() - startedAt) / 1000);
    if (this.#dirty.has(key)) this.#push(key);
    if (this.#processing.size === 0) for (const resolve of this.#drained.splice(0)) resolve();
  }

  /** Stops accepting keys, drops delayed ones and releases idle workers. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Infinity;
    this.#delayed.clear();
    this.#waiting.clear();
    for (const resolve of this.#waiters.splice(0)) resolve(undefined);
  }

  /** shutDown, then wait until every key handed out has been marked done. */
  async shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.#processing.size === 0) return;
    await new Promise<void>((resolve) => this.#drained.push(resolve));
  }

  #push(key: string): void {
    this.#queue.push(key);
    this.#metrics.depth(1);
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) waiter(this.#pop());
  }

  #pop(): string | undefined {
    if (this.#head >= this.#queue.length) return undefined;
    const key = this.#queue[this.#head++]!;
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    const now = this.#clock.now();
    this.#metrics.depth(-1);
    this.#metrics.queued((now - (this.#dirty.get(key) ?? now)) / 1000);
    this.#dirty.delete(key);
    this.#processing.set(key, now);
    return key;
  }

  /** Keeps one clock timer set for the earliest delayed key. */
  #arm(): void {
    const next = this.#nextDelayed();
    if (next === undefined) return;
    if (this.#timer !== undefined && this.#timerAt <= next.readyAt) return;
    this.#timer?.cancel();
    this.#timerAt = next.readyAt;
    this.#timer = this.#clock.setTimeout(() => this.#release(), next.readyAt - this.#clock.now());
  }

  #release(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.#clock.now();
    for (let next = this.#nextDelayed(); next !== undefined && next.readyAt <= now; next = this.#nextDelayed()) {
      this.#delayed.pop();
      this.#waiting.delete(next.key);
      this.add(next.key);
    }
    this.#arm();
  }

  /** The earliest delayed entry that is still current, discarding superseded ones. */
  #nextDelayed(): Delayed | undefined {
    for (let top = this.#delayed.peek(); top !== undefined; top = this.#delayed.peek()) {
      if (this.#waiting.get(top.key) === top.readyAt) return top;
      this.#delayed.pop();
    }
    return undefined;
  }
}
