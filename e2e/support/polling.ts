// Polling and naming helpers with no test-runner dependency, so benchmarks can use them too.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

/** Polls until check returns a value other than undefined, or fails with the last reason. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000, what = "condition", intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${lastError === undefined ? "" : `: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}`}`);
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString("hex")}`;
}
