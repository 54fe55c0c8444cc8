// Records core/v1 Events (what `kubectl describe` shows) about the objects a controller
// manages. Repeats of the same event — same object, type, reason and message — within a
// window update one Event's count and lastTimestamp instead of creating new ones, and at
// most one write per series is in flight and one per minIntervalMs, so a hot reconcile loop
// costs the API server a trickle of patches rather than a flood. As client-go's recorder
// does, similar events — same object, type and reason, different messages (one per pod of a
// rollout) — become one "(combined from similar events)" Event from the tenth distinct
// message within the window on, whose message is the latest.
import { randomBytes } from "node:crypto";
import { pino, type Logger } from "pino";
import { isNotFound, statusMessage } from "../../kube/errors.ts";
import type { Event, KubeObject } from "../../kube/objects.ts";
import type { ResourceClient } from "../../kube/resource-client.ts";
import { formatTime } from "../../kube/timestamps.ts";
import { realClock, type Clock, type Timer } from "./clock.ts";

export type EventType = "Normal" | "Warning";

export type EventSink = Pick<ResourceClient<Event>, "create" | "mergePatch">;

export interface EventRecorderOptions {
  sink: EventSink;
  /** source.component and reportingComponent, e.g. "pod-decorator". */
  component: string;
  /** reportingInstance and source.host, e.g. the pod name. */
  instance?: string;
  clock?: Clock;
  logger?: Logger;
  /** Repeats within this long of the last one join the same Event (default 10 minutes). */
  windowMs?: number;
  /** At most one write per series this often (default 1s). */
  minIntervalMs?: number;
}

/** client-go's defaults: from the tenth distinct message of similar events on, they are combined. */
const DISTINCT_MESSAGES_BEFORE_COMBINING = 10;
const COMBINED_PREFIX = "(combined from similar events): ";

/** The distinct messages of one object's events of one type and reason, within the window. */
interface Similar {
  messages: Set<string>;
  last: number;
}

interface Series {
  involved: Required<Pick<KubeObject, "apiVersion" | "kind">> & { namespace: string; name: string; uid: string | undefined; resourceVersion: string | undefined };
  type: EventType;
  reason: string;
  message: string;
  /** The Event's name once created. */
  eventName: string | undefined;
  count: number;
  writtenCount: number;
  first: number;
  last: number;
  lastWriteAt: number;
  writing: Promise<void> | undefined;
  timer: Timer | undefined;
}

export class EventRecorder {
  readonly #sink: EventSink;
  readonly #component: string;
  readonly #instance: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #windowMs: number;
  readonly #minIntervalMs: number;
  readonly #series = new Map<string, Series>();
  readonly #similar = new Map<string, Similar>();

  constructor(options: EventRecorderOptions) {
    this.#sink = options.sink;
    this.#component = options.component;
    this.#instance = options.instance ?? options.component;
    this.#clock = options.clock ?? realClock;
    this.#logger = (options.logger ?? pino({ level: "silent" })).child({ component: "event-recorder" });
    this.#windowMs = options.windowMs ?? 600_000;
    this.#minIntervalMs = options.minIntervalMs ?? 1_000;
  }

  /** Records an event about object; never throws, never blocks (failures are logged). */
  record(object: KubeObject, type: EventType, reason: string, message: string): void {
    const metadata = object.metadata ?? {};
    const involved = {
      apiVersion: object.apiVersion ?? "",
      kind: object.kind ?? "",
      namespace: metadata.namespace ?? "",
      name: metadata.name ?? "",
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
    };
    const now = this.#clock.now();
    const similarKey = JSON.stringify([involved.apiVersion, involved.kind, involved.namespace, involved.name, involved.uid, type, reason]);
    const combined = this.#combines(similarKey, message, now);
    const key = combined ? `${similarKey}\ncombined` : JSON.stringify([similarKey, message]);
    let series = this.#series.get(key);
    if (series !== undefined && series.last + this.#windowMs < now && series.writing === undefined) {
      series.timer?.cancel();
      this.#series.delete(key);
      series = undefined;
    }
    if (series === undefined) {
      this.#prune(now);
      series = { involved, type, reason, message, eventName: undefined, count: 0, writtenCount: 0, first: now, last: now, lastWriteAt: -Infinity, writing: undefined, timer: undefined };
      this.#series.set(key, series);
    }
    if (combined) series.message = `${COMBINED_PREFIX}${message}`;
    series.count++;
    series.last = now;
    series.involved.resourceVersion = involved.resourceVersion;
    this.#schedule(series);
  }

  /** Notes a message of similar events; true when it is a tenth or later distinct one, to be combined. */
  #combines(similarKey: string, message: string, now: number): boolean {
    let similar = this.#similar.get(similarKey);
    if (similar === undefined || similar.last + this.#windowMs < now) {
      similar = { messages: new Set(), last: now };
      this.#similar.set(similarKey, similar);
    }
    similar.last = now;
    if (similar.messages.has(message)) return false;
    if (similar.messages.size < DISTINCT_MESSAGES_BEFORE_COMBINING - 1) {
      similar.messages.add(message);
      return false;
    }
    return true;
  }

  /** Writes whatever is pending now and waits for it (for shutdown and tests). */
  async flush(): Promise<void> {
    for (;;) {
      const busy = [...this.#series.values()].filter((series) => series.writing !== undefined || series.timer !== undefined || series.count !== series.writtenCount);
      if (busy.length === 0) return;
      for (const series of busy) {
        if (series.timer !== undefined) {
          series.timer.cancel();
          series.timer = undefined;
          this.#write(series);
        } else if (series.writing === undefined) {
          this.#write(series);
        }
      }
      await Promise.all(busy.flatMap((series) => (series.writing === undefined ? [] : [series.writing])));
    }
  }

  #schedule(series: Series): void {
    if (series.writing !== undefined || series.timer !== undefined) return;
    const wait = series.lastWriteAt + this.#minIntervalMs - this.#clock.now();
    if (wait <= 0) {
      this.#write(series);
      return;
    }
    series.timer = this.#clock.setTimeout(() => {
      series.timer = undefined;
      this.#write(series);
    }, wait);
  }

  #write(series: Series): void {
    const count = series.count;
    series.lastWriteAt = this.#clock.now();
    series.writing = this.#send(series, count)
      .then(() => {
        series.writtenCount = count;
      })
      .catch((error: unknown) => {
        // Events are best effort; the series is marked written so a dead API server is not hammered.
        series.writtenCount = count;
        this.#logger.warn({ reason: `could not record event ${series.reason}: ${statusMessage(error)}`, object: `${series.involved.namespace}/${series.involved.name}` });
      })
      .finally(() => {
        series.writing = undefined;
        if (series.count !== series.writtenCount) this.#schedule(series);
      });
  }

  async #send(series: Series, count: number): Promise<void> {
    const namespace = series.involved.namespace === "" ? "default" : series.involved.namespace;
    const lastTimestamp = formatTime(series.last);
    if (series.eventName !== undefined) {
      try {
        // The message too: a combined Event says what happened last.
        await this.#sink.mergePatch(namespace, series.eventName, { count, lastTimestamp, message: series.message });
        return;
      } catch (error) {
        // The Event expired (events have a TTL) or was deleted: start a new one.
        if (!isNotFound(error)) throw error;
      }
    }
    const eventName = `${series.involved.name.slice(0, 200)}.${randomBytes(8).toString("hex")}`;
    await this.#sink.create({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: eventName, namespace },
      involvedObject: {
        apiVersion: series.involved.apiVersion,
        kind: series.involved.kind,
        name: series.involved.name,
        ...(series.involved.namespace === "" ? {} : { namespace: series.involved.namespace }),
        ...(series.involved.uid === undefined ? {} : { uid: series.involved.uid }),
        ...(series.involved.resourceVersion === undefined ? {} : { resourceVersion: series.involved.resourceVersion }),
      },
      type: series.type,
      reason: series.reason,
      message: series.message,
      count,
      firstTimestamp: formatTime(series.first),
      lastTimestamp,
      source: { component: this.#component, host: this.#instance },
      reportingComponent: this.#component,
      reportingInstance: this.#instance,
    });
    series.eventName = eventName;
  }

  /** Forgets series idle for longer than the window, so memory follows the active set. */
  #prune(now: number): void {
    if (this.#series.size < 1024 && this.#similar.size < 1024) return;
    for (const [key, series] of this.#series) {
      if (series.last + this.#windowMs < now && series.writing === undefined && series.timer === undefined) this.#series.delete(key);
    }
    for (const [key, similar] of this.#similar) if (similar.last + this.#windowMs < now) this.#similar.delete(key);
  }
}
