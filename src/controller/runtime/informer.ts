// A shared informer with client-go's reflector semantics, written over list and watch
// functions rather than client-node's ListWatch, which stops for good on any watch error
// other than 410, reports "started" when the list failed, and hands out class instances.
// Here: list, then watch from the list's resourceVersion with bookmarks; a 410 relists; any
// other failure retries with capped exponential backoff; a watch silent for longer than the
// watchdog allows is restarted; the server's timeoutSeconds ends watches routinely.
import { pino, type Logger } from "pino";
import { isGone, statusMessage } from "../../kube/errors.ts";
import type { ListWatch, Status, WatchEvent } from "../../kube/list-watch.ts";
import { objectKey, type KubeObject } from "../../kube/objects.ts";
import { CappedBackoff, type BackoffOptions } from "./backoff.ts";
import { Cache, type Lister } from "./cache.ts";
import { realClock, type Clock, type Timer } from "./clock.ts";
import { deepFreeze } from "./deep-freeze.ts";

/** Handlers map an event to work-queue keys and nothing more; they must not block or throw. */
export interface EventHandler<T> {
  onAdd?(object: T): void;
  onUpdate?(oldObject: T, newObject: T): void;
  /** The last state seen, which after a relist may be older than the deletion. */
  onDelete?(object: T): void;
}

export interface InformerOptions<T> {
  /** For logs, e.g. "pods". */
  name: string;
  listWatch: ListWatch<T>;
  clock?: Clock;
  logger?: Logger;
  /** Hand out deeply frozen objects so that a mutation throws (default true). */
  freezeObjects?: boolean;
  /**
   * Applied to every listed or watched object before it is cached and handed out (client-go's
   * SetTransform): drops what no reader needs, such as managedFields. Must not throw.
   */
  transform?: (object: T) => T;
  /** Wait between failed attempts (default 200ms doubling to 30s). */
  backoff?: BackoffOptions;
  /** The server-side watch timeout, drawn per watch (default 5–10 minutes, as client-go). */
  watchTimeoutSeconds?: () => number;
  /** A watch that delivers nothing, not even a bookmark, for this long is restarted (default 2 min). */
  watchdogMs?: number;
}

export interface InformerStats {
  lists: number;
  watches: number;
  /** Relists forced by 410 Gone. */
  expired: number;
  /** Watches restarted by the watchdog. */
  silent: number;
  errors: number;
}

/** A watch that ended without an error: by the server (timeoutSeconds) or by the watchdog. */
type WatchEnd = { kind: "closed"; events: number; durationMs: number } | { kind: "silent" };

class WatchStatusError extends Error {
  readonly code: number | undefined;
  readonly body: Status;

  constructor(status: Status) {
    super(`watch error: ${status.code ?? "?"} ${status.reason ?? ""}: ${status.message ?? ""}`);
    this.code = status.code;
    this.body = status;
  }
}

/** The server closed the watch at once without sending anything: back off as for an error. */
class EmptyWatchError extends Error {}

export class Informer<T extends KubeObject> {
  readonly name: string;
  readonly #cache = new Cache<T>();
  readonly #listWatch: ListWatch<T>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #freeze: boolean;
  readonly #transform: ((object: T) => T) | undefined;
  readonly #backoff: CappedBackoff;
  readonly #watchTimeoutSeconds: () => number;
  readonly #watchdogMs: number;
  readonly #handlers = new Set<EventHandler<T>>();
  readonly #stats: InformerStats = { lists: 0, watches: 0, expired: 0, silent: 0, errors: 0 };
  #resourceVersion = "";
  #synced = false;
  #running = false;
  /** Callers of relist() waiting for a list that begins after their call. */
  #relistsWanted: (() => void)[] = [];
  /** A relist() came since the last list began. */
  #relistRequested = false;
  /** Ends the current watch or wait between retries early; a list in progress is left to finish. */
  #interrupt: AbortController | undefined;

  constructor(options: InformerOptions<T>) {
    this.name = options.name;
    this.#listWatch = options.listWatch;
    this.#clock = options.clock ?? realClock;
    this.#logger = (options.logger ?? pino({ level: "silent" })).child({ informer: options.name });
    this.#freeze = options.freezeObjects ?? true;
    this.#transform = options.transform;
    this.#backoff = new CappedBackoff(options.backoff);
    this.#watchTimeoutSeconds = options.watchTimeoutSeconds ?? (() => Math.floor(300 * (1 + Math.random())));
    this.#watchdogMs = options.watchdogMs ?? 120_000;
  }

  /** The cache readers use: objects in it are never to be mutated. */
  get cache(): Lister<T> {
    return this.#cache;
  }

  /** True once a list has succeeded; stays true through later relists. */
  hasSynced(): boolean {
    return this.#synced;
  }

  lastSyncResourceVersion(): string {
    return this.#resourceVersion;
  }

  stats(): Readonly<InformerStats> {
    return { ...this.#stats };
  }

  /** Registers handler; on a synced informer it first sees every cached object as an add. Returns the removal. */
  addEventHandler(handler: EventHandler<T>): () => void {
    this.#handlers.add(handler);
    if (this.#synced) for (const object of this.#cache.list()) this.#call("onAdd", () => handler.onAdd?.(object));
    return () => this.#handlers.delete(handler);
  }

  /**
   * Lists again now, cutting short the watch or a wait between retries, and resolves true once
   * a list begun after this call has succeeded (false if signal aborts first). hasSynced says
   * the cache was complete once; this says it is current as of now, even after an outage
   * that left the informer waiting out a long backoff.
   */
  relist(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const listed = () => {
        signal.removeEventListener("abort", aborted);
        resolve(true);
      };
      const aborted = () => {
        this.#relistsWanted = this.#relistsWanted.filter((waiter) => waiter !== listed);
        resolve(false);
      };
      signal.addEventListener("abort", aborted, { once: true });
      this.#relistsWanted.push(listed);
      this.#relistRequested = true;
      this.#interrupt?.abort();
    });
  }

  /** Lists and watches until signal aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error(`informer ${this.name} is already running`);
    this.#running = true;
    let needList = true;
    try {
      while (!signal.aborted) {
        const interrupt = new AbortController();
        const attempt = AbortSignal.any([signal, interrupt.signal]);
        try {
          if (this.#relistRequested) needList = true;
          if (needList) {
            // This list answers every relist() asked for so far; one that fails leaves them waiting.
            this.#relistRequested = false;
            const waiting = this.#relistsWanted.splice(0);
            try {
              await this.#list(signal);
            } catch (error) {
              this.#relistsWanted.unshift(...waiting);
              throw error;
            }
            needList = false;
            for (const listed of waiting) listed();
          }
          this.#interrupt = interrupt;
          if (this.#relistRequested) continue;
          const end = await this.#watch(attempt);
          if (interrupt.signal.aborted) continue;
          if (end.kind === "silent") {
            this.#stats.silent++;
            this.#logger.warn({ reason: `watch silent for ${this.#watchdogMs}ms, restarting it`, resourceVersion: this.#resourceVersion });
          } else if (end.events === 0 && end.durationMs < 1000) {
            throw new EmptyWatchError(`the watch closed after ${end.durationMs}ms without any event`);
          }
        } catch (error) {
          if (signal.aborted) break;
          // A relist() cut the watch short: list now, no waiting.
          if (interrupt.signal.aborted) continue;
          if (isGone(error)) {
            // Our resourceVersion is older than the server keeps: list again, no waiting.
            this.#stats.expired++;
            this.#logger.info({ reason: `resourceVersion ${this.#resourceVersion} expired, relisting` });
            needList = true;
            continue;
          }
          this.#stats.errors++;
          const waitMs = this.#backoff.next();
          this.#logger.warn({ reason: statusMessage(error), retryInMs: waitMs, phase: needList ? "list" : "watch" });
          this.#interrupt = interrupt;
          if (this.#relistRequested) continue;
          await this.#clock.sleep(waitMs, attempt);
        } finally {
          this.#interrupt = undefined;
        }
      }
    } finally {
      this.#running = false;
    }
  }

  async #list(signal: AbortSignal): Promise<void> {
    this.#stats.lists++;
    const result = await this.#listWatch.list(signal, (item) => this.#prepare(item));
    if (signal.aborted) return;
    const seen = new Set<string>();
    for (const object of result.items) {
      const key = objectKey(object);
      seen.add(key);
      const previous = this.#cache.upsert(object);
      if (previous === undefined) this.#emit("onAdd", (handler) => handler.onAdd?.(object));
      else if (previous.metadata?.resourceVersion !== object.metadata?.resourceVersion) this.#emit("onUpdate", (handler) => handler.onUpdate?.(previous, object));
    }
    // Whatever the list no longer has was deleted while we were not watching.
    for (const key of this.#cache.keys()) {
      if (seen.has(key)) continue;
      const gone = this.#cache.delete(key);
      if (gone !== undefined) this.#emit("onDelete", (handler) => handler.onDelete?.(gone));
    }
    this.#resourceVersion = result.resourceVersion;
    this.#backoff.reset();
    if (!this.#synced) this.#logger.info({ reason: "synced", objects: this.#cache.size, resourceVersion: this.#resourceVersion });
    this.#synced = true;
  }

  async #watch(signal: AbortSignal): Promise<WatchEnd> {
    this.#stats.watches++;
    const connection = new AbortController();
    const stop = () => connection.abort();
    signal.addEventListener("abort", stop, { once: true });
    let silent = false;
    let failure: WatchStatusError | undefined;
    let events = 0;
    let watchdog: Timer | undefined;
    const arm = () => {
      watchdog?.cancel();
      watchdog = this.#clock.setTimeout(() => {
        silent = true;
        connection.abort();
      }, this.#watchdogMs);
    };
    const started = this.#clock.now();
    arm();
    try {
      await this.#listWatch.watch(
        { resourceVersion: this.#resourceVersion, timeoutSeconds: this.#watchTimeoutSeconds(), signal: connection.signal },
        (event) => {
          if (failure !== undefined || connection.signal.aborted) return;
          arm();
          if (event.type === "ERROR") {
            failure = new WatchStatusError(event.object);
            connection.abort();
            return;
          }
          events++;
          this.#apply(event);
          // A watch that delivers is a working one: the next failure starts from a short wait.
          this.#backoff.reset();
        },
      );
    } catch (error) {
      if (failure === undefined && !silent && !signal.aborted) throw error;
    } finally {
      watchdog?.cancel();
      signal.removeEventListener("abort", stop);
    }
    if (failure !== undefined) throw failure;
    if (silent) return { kind: "silent" };
    return { kind: "closed", events, durationMs: this.#clock.now() - started };
  }

  #apply(event: Exclude<WatchEvent<T>, { type: "ERROR" }>): void {
    if (event.type === "BOOKMARK") {
      this.#resourceVersion = event.object.metadata?.resourceVersion ?? this.#resourceVersion;
      return;
    }
    const object = this.#prepare(event.object);
    if (event.type === "DELETED") {
      this.#cache.delete(objectKey(object));
      this.#emit("onDelete", (handler) => handler.onDelete?.(object));
    } else {
      const previous = this.#cache.upsert(object);
      if (previous === undefined) this.#emit("onAdd", (handler) => handler.onAdd?.(object));
      else this.#emit("onUpdate", (handler) => handler.onUpdate?.(previous, object));
    }
    this.#resourceVersion = object.metadata?.resourceVersion ?? this.#resourceVersion;
  }

  #prepare(received: T): T {
    const object = this.#transform === undefined ? received : this.#transform(received);
    return this.#freeze ? deepFreeze(object) : object;
  }

  #emit(kind: keyof EventHandler<T>, call: (handler: EventHandler<T>) => void): void {
    for (const handler of this.#handlers) this.#call(kind, () => call(handler));
  }

  #call(kind: keyof EventHandler<T>, call: () => void): void {
    try {
      call();
    } catch (error) {
      // A handler bug must not stop the informer; it is logged and the event is not retried.
      this.#logger.error({ reason: `${kind} handler threw: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
}

/** Polls hasSynced every 100ms (as client-go's WaitForCacheSync); false if signal aborted first. */
export async function waitForCacheSync(signal: AbortSignal, clock: Clock, ...informers: readonly { hasSynced(): boolean }[]): Promise<boolean> {
  while (!informers.every((informer) => informer.hasSynced())) {
    if (signal.aborted) return false;
    await clock.sleep(100, signal);
  }
  return !signal.aborted;
}
