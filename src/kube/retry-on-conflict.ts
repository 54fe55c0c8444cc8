// client-go's retry.RetryOnConflict: a write that lost an optimistic-concurrency race is
// retried from a fresh read, a few times, with a short jittered pause.
import { setTimeout as sleep } from "node:timers/promises";
import { isConflict } from "./errors.ts";

export interface RetryOptions {
  /** Attempts in all (client-go's DefaultRetry: 5). */
  steps?: number;
  /** Pause before the next attempt (DefaultRetry: 10ms, factor 1, jitter 0.1). */
  delayMs?: number;
  jitter?: number;
  sleep?: (ms: number) => Promise<unknown>;
}

/** Runs attempt until it does not fail with 409 Conflict, at most `steps` times. */
export async function retryOnConflict<T>(attempt: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const steps = options.steps ?? 5;
  const delayMs = options.delayMs ?? 10;
  const jitter = options.jitter ?? 0.1;
  const pause = options.sleep ?? sleep;
  for (let step = 1; ; step++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isConflict(error) || step >= steps) throw error;
      await pause(delayMs * (1 + Math.random() * jitter));
    }
  }
}

/**
 * Read-modify-write with conflict retries: every attempt re-reads the object, so the change is
 * always computed from the state the write will be checked against. `change` returns undefined
 * when nothing needs writing.
 */
export function updateFresh<T, R>(read: () => Promise<T>, change: (fresh: T) => Promise<R> | undefined, options: RetryOptions = {}): Promise<R | undefined> {
  return retryOnConflict(async () => {
    const fresh = await read();
    return await change(fresh);
  }, options);
}
