// client-go's ControllerExpectations, generalised: after a write, a controller must not act
// on a cache that has not seen it yet (it would create a pod twice or delete the wrong one).
// Each write leaves a check on the cache; a key's next sync waits until all of its checks
// hold, or until they expire, in case the event that would satisfy them was never delivered.
import { realClock, type Clock } from "./clock.ts";

export interface ExpectationsOptions {
  clock?: Clock;
  /** Give up waiting for a write to show after this long (default 60 s). */
  timeoutMs?: number;
}

export type Satisfied = { satisfied: true } | { satisfied: false; retryInMs: number; pending: number };

export class Expectations {
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #pending = new Map<string, { checks: (() => boolean)[]; deadline: number }>();

  constructor(options: ExpectationsOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
  }

  /** After a write for `key`: `seen` returns true once the cache shows its effect. */
  expect(key: string, seen: () => boolean): void {
    const deadline = this.#clock.now() + this.#timeoutMs;
    const entry = this.#pending.get(key);
    if (entry === undefined) this.#pending.set(key, { checks: [seen], deadline });
    else {
      entry.checks.push(seen);
      entry.deadline = deadline;
    }
  }

  satisfied(key: string): Satisfied {
    const entry = this.#pending.get(key);
    if (entry === undefined) return { satisfied: true };
    entry.checks = entry.checks.filter((seen) => !seen());
    const now = this.#clock.now();
    if (entry.checks.length === 0 || now >= entry.deadline) {
      this.#pending.delete(key);
      return { satisfied: true };
    }
    return { satisfied: false, retryInMs: entry.deadline - now, pending: entry.checks.length };
  }

  forget(key: string): void {
    this.#pending.delete(key);
  }
}
