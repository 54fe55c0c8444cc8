// client-go's workqueue rate limiters: how long a failed item waits before it is retried.
import type { Clock } from "./clock.ts";

export interface RateLimiter {
  /** The delay before item may be processed again; counts as one more failure of item. */
  when(item: string): number;
  /** Stop tracking item (it succeeded). */
  forget(item: string): void;
  numRequeues(item: string): number;
}

/** base·2^failures per item, capped (client-go: 5ms base, 1000s cap). */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #failures = new Map<string, number>();

  constructor(baseMs = 5, maxMs = 1_000_000) {
    this.#baseMs = baseMs;
    this.#maxMs = maxMs;
  }

  when(item: string): number {
    const failures = this.#failures.get(item) ?? 0;
    this.#failures.set(item, failures + 1);
    const delay = this.#baseMs * 2 ** failures;
    return Number.isFinite(delay) ? Math.min(delay, this.#maxMs) : this.#maxMs;
  }

  forget(item: string): void {
    this.#failures.delete(item);
  }

  numRequeues(item: string): number {
    return this.#failures.get(item) ?? 0;
  }
}

/** An overall token bucket shared by all items (client-go: 10 qps, burst 100). */
export class BucketRateLimiter implements RateLimiter {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(qps: number, burst: number, clock: Clock) {
    this.#qps = qps;
    this.#burst = burst;
    this.#clock = clock;
    this.#tokens = burst;
    this.#last = clock.now();
  }

  when(_item: string): number {
    // A reservation, as golang.org/x/time/rate does it: tokens may go negative, the debt is the wait.
    const now = this.#clock.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) / 1000) * this.#qps);
    this.#last = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.#qps) * 1000;
  }

  forget(_item: string): void {}

  numRequeues(_item: string): number {
    return 0;
  }
}

/** The worst (longest) of several limiters. */
export class MaxOfRateLimiter implements RateLimiter {
  readonly #limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.#limiters = limiters;
  }

  when(item: string): number {
    return Math.max(0, ...this.#limiters.map((limiter) => limiter.when(item)));
  }

  forget(item: string): void {
    for (const limiter of this.#limiters) limiter.forget(item);
  }

  numRequeues(item: string): number {
    return Math.max(0, ...this.#limiters.map((limiter) => limiter.numRequeues(item)));
  }
}

/**
 * The longest a failing key waits for its next attempt in our controllers. Failures that pass
 * by themselves (an unreachable webhook refusing every pod create) leave no event behind when
 * they end, and nothing resyncs: with client-go's 1000 s cap a long outage would be followed
 * by minutes of idleness.
 */
export const MAX_RETRY_BACKOFF_MS = 30_000;

/** client-go's DefaultControllerRateLimiter; `maxBackoffMs` lowers its per-item cap of 1000 s. */
export function defaultControllerRateLimiter(clock: Clock, maxBackoffMs = 1_000_000): RateLimiter {
  return new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, maxBackoffMs), new BucketRateLimiter(10, 100, clock));
}
