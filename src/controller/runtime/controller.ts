// The controller loop of kubernetes/sample-controller: wait for the caches, then N workers
// each take a key, reconcile it, and either forget it (success), requeue it after a delay
// (asked for), or requeue it with backoff (error). Event handlers elsewhere only add keys.
import { pino, type Logger } from "pino";
import type { Registry } from "prom-client";
import { statusMessage } from "../../kube/errors.ts";
import { realClock, type Clock } from "./clock.ts";
import { waitForCacheSync, type EventHandler } from "./informer.ts";
import { noControllerMetrics, RuntimeMetrics, type ControllerMetrics, type ReconcileResult } from "./metrics.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import { WorkQueue } from "./work-queue.ts";

export interface Result {
  /** Reconcile this key again after this many milliseconds (and reset its backoff). */
  requeueAfter?: number;
  /** Reconcile again after the key's backoff, without it being an error. */
  requeue?: boolean;
}

export type Reconcile = (key: string, signal: AbortSignal) => Promise<Result | undefined | void>;

export interface ControllerOptions {
  name: string;
  reconcile: Reconcile;
  workers?: number;
  logger?: Logger;
  /** Metrics go to this registry under controller-runtime's names; none when omitted. */
  metrics?: Registry | RuntimeMetrics;
  clock?: Clock;
  /** Used when no queue is given. */
  rateLimiter?: RateLimiter;
  /** Defaults to a rate-limited queue named after the controller. */
  queue?: WorkQueue;
  /** Informers whose caches must have synced before the first reconcile. */
  waitForSync?: readonly { hasSynced(): boolean }[];
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #reconcile: Reconcile;
  readonly #workers: number;
  readonly #logger: Logger;
  readonly #metrics: ControllerMetrics;
  readonly #clock: Clock;
  readonly #syncs: readonly { hasSynced(): boolean }[];
  readonly #detach: (() => void)[] = [];
  #started = false;

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.#reconcile = options.reconcile;
    this.#workers = options.workers ?? 1;
    this.#logger = (options.logger ?? pino({ level: "silent" })).child({ controller: options.name });
    this.#clock = options.clock ?? realClock;
    this.#syncs = options.waitForSync ?? [];
    const metrics = options.metrics === undefined ? undefined : options.metrics instanceof RuntimeMetrics ? options.metrics : new RuntimeMetrics(options.metrics);
    this.#metrics = metrics?.controller(options.name) ?? noControllerMetrics;
    this.queue =
      options.queue ??
      new WorkQueue({
        name: options.name,
        clock: this.#clock,
        ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
        ...(metrics === undefined ? {} : { metrics: metrics.queue(options.name) }),
      });
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** Adds an informer's event handler (it should only enqueue keys) for as long as the controller runs. */
  watch<T>(informer: { addEventHandler(handler: EventHandler<T>): () => void }, handler: EventHandler<T>): void {
    this.#detach.push(informer.addEventHandler(handler));
  }

  /**
   * Waits for the caches, runs the workers until signal aborts, then lets in-flight reconciles
   * finish (keys still queued are left to whoever runs next) and resolves.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error(`controller ${this.name} was already started`);
    this.#started = true;
    const stop = () => this.queue.shutDown();
    signal.addEventListener("abort", stop, { once: true });
    try {
      if (!(await waitForCacheSync(signal, this.#clock, ...this.#syncs))) return;
      this.#logger.info({ reason: "caches synced, starting workers", workers: this.#workers });
      await Promise.all(Array.from({ length: this.#workers }, () => this.#work(signal)));
      await this.queue.shutDownWithDrain();
      this.#logger.info({ reason: "stopped" });
    } finally {
      signal.removeEventListener("abort", stop);
      this.queue.shutDown();
      for (const detach of this.#detach.splice(0)) detach();
    }
  }

  async #work(signal: AbortSignal): Promise<void> {
    for (let key = await this.queue.get(); key !== undefined; key = await this.queue.get()) {
      if (signal.aborted) {
        this.queue.done(key);
        return;
      }
      await this.#process(key, signal);
    }
  }

  async #process(key: string, signal: AbortSignal): Promise<void> {
    const started = this.#clock.now();
    let result: ReconcileResult;
    try {
      const outcome = (await this.#reconcile(key, signal)) ?? {};
      if (outcome.requeueAfter !== undefined && outcome.requeueAfter > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, outcome.requeueAfter);
        result = "requeue_after";
      } else if (outcome.requeue === true) {
        this.queue.addRateLimited(key);
        result = "requeue";
      } else {
        this.queue.forget(key);
        result = "success";
      }
      this.#logger.debug({ key, reason: result, durationMs: this.#clock.now() - started });
    } catch (error) {
      // Errors travel up to the queue, which owns the retry policy.
      this.queue.addRateLimited(key);
      result = "error";
      this.#logger.error({ key, reason: statusMessage(error), retries: this.queue.numRequeues(key) });
    } finally {
      this.queue.done(key);
    }
    this.#metrics.reconciled(result, (this.#clock.now() - started) / 1000);
  }
}
