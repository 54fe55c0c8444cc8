// A Clock for tests: time stands still until advance() moves it, firing due timers in order
// and letting the promise continuations they trigger run before the next one fires.
import { sleepOn, type Clock, type Timer } from "../../src/controller/runtime/clock.ts";

interface Scheduled {
  at: number;
  sequence: number;
  callback: () => void;
}

/** Lets every queued promise continuation run (microtasks drain before a macrotask). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class FakeClock implements Clock {
  #now: number;
  #sequence = 0;
  readonly #timers = new Set<Scheduled>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): Timer {
    const scheduled: Scheduled = { at: this.#now + Math.max(0, ms), sequence: this.#sequence++, callback };
    this.#timers.add(scheduled);
    return { cancel: () => this.#timers.delete(scheduled) };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Timers not yet fired. */
  pending(): number {
    return this.#timers.size;
  }

  /** Milliseconds until the next timer fires, or undefined when none is pending. */
  nextTimerIn(): number | undefined {
    const next = this.#next();
    return next === undefined ? undefined : next.at - this.#now;
  }

  /** Moves time forward by ms, firing every timer that falls due on the way, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (let next = this.#next(); next !== undefined && next.at <= target; next = this.#next()) {
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.at);
      next.callback();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  #next(): Scheduled | undefined {
    let earliest: Scheduled | undefined;
    for (const timer of this.#timers) {
      if (earliest === undefined || timer.at < earliest.at || (timer.at === earliest.at && timer.sequence < earliest.sequence)) earliest = timer;
    }
    return earliest;
  }
}
