// Recreation through the Eviction API (policy/v1), so PodDisruptionBudgets hold: an eviction a
// budget refuses (429) is never forced; the pod is retried with a capped per-pod backoff, and
// the refusal is returned for the caller to report. Pods that are gone are forgotten.
import { statusCode, statusMessage } from "../kube/errors.ts";
import type { EvictionClient } from "../kube/core.ts";
import type { Pod } from "../kube/objects.ts";
import { CappedBackoff } from "./runtime/backoff.ts";
import type { Clock } from "./runtime/clock.ts";
import type { EvictionMetrics } from "./runtime/metrics.ts";

export type EvictionResult =
  | { kind: "evicted" }
  /** Refused by a disruption budget now or on the last attempt; try again in retryInMs. */
  | { kind: "refused"; message: string; retryInMs: number };

export interface EvictionsOptions {
  client: EvictionClient;
  clock: Clock;
  /** The first wait after a refusal (default 1 s), doubling up to maxMs (default 60 s). */
  initialMs?: number;
  maxMs?: number;
  metrics?: EvictionMetrics | undefined;
}

interface Refusal {
  backoff: CappedBackoff;
  notBeforeMs: number;
  message: string;
}

export class Evictions {
  readonly #options: EvictionsOptions;
  readonly #refused = new Map<string, Refusal>();

  constructor(options: EvictionsOptions) {
    this.#options = options;
  }

  /** Evicts the pod, unless it is backing off from a refusal; other errors are thrown. */
  async evict(pod: Pod): Promise<EvictionResult> {
    const { namespace = "", name = "", uid = "" } = pod.metadata ?? {};
    const now = this.#options.clock.now();
    const previous = this.#refused.get(uid);
    if (previous !== undefined && now < previous.notBeforeMs) return { kind: "refused", message: previous.message, retryInMs: previous.notBeforeMs - now };
    try {
      await this.#options.client.evict(namespace, name, uid === "" ? undefined : uid);
    } catch (error) {
      if (statusCode(error) !== 429) throw error;
      const refusal = previous ?? { backoff: new CappedBackoff({ initialMs: this.#options.initialMs ?? 1000, maxMs: this.#options.maxMs ?? 60_000 }), notBeforeMs: 0, message: "" };
      const wait = refusal.backoff.next();
      refusal.notBeforeMs = now + wait;
      refusal.message = statusMessage(error);
      this.#refused.set(uid, refusal);
      this.#options.metrics?.refused();
      this.#options.metrics?.waiting(this.#refused.size);
      return { kind: "refused", message: refusal.message, retryInMs: wait };
    }
    this.#refused.delete(uid);
    this.#options.metrics?.waiting(this.#refused.size);
    return { kind: "evicted" };
  }

  /** Forgets the pods not among `live` (by uid): deleted pods keep no backoff. */
  retain(live: Iterable<string>): void {
    const keep = new Set(live);
    for (const uid of this.#refused.keys()) if (!keep.has(uid)) this.#refused.delete(uid);
    this.#options.metrics?.waiting(this.#refused.size);
  }

  /** How many pods are backing off (for tests and metrics). */
  get size(): number {
    return this.#refused.size;
  }
}
