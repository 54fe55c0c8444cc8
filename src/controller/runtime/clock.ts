// Time as a dependency: everything in the runtime that waits or measures takes a Clock, so
// tests drive time with FakeClock instead of sleeping.

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): Timer;
  /** Resolves after ms, or as soon as signal aborts; never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    const handle = setTimeout(callback, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  },
  sleep(ms, signal) {
    return sleepOn(realClock, ms, signal);
  },
};

/** A Clock's sleep in terms of its setTimeout. */
export function sleepOn(clock: Pick<Clock, "setTimeout">, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted === true) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = () => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
