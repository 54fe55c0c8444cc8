// One informer per resource type (and selector) for the whole process, as client-go's
// SharedInformerFactory: every controller that needs pods shares one list, one watch and
// one cache.
import type { Logger } from "pino";
import { restListWatch, type RestListWatchOptions } from "../../kube/list-watch.ts";
import type { KubeObject } from "../../kube/objects.ts";
import { resourceName, type ResourceType } from "../../kube/resources.ts";
import type { RestTransport } from "../../kube/rest-transport.ts";
import { realClock, type Clock } from "./clock.ts";
import { Informer, waitForCacheSync, type InformerOptions } from "./informer.ts";

export interface SharedInformersOptions {
  transport: RestTransport;
  clock?: Clock;
  logger?: Logger;
  /** Defaults for every informer made here. */
  informer?: Pick<InformerOptions<KubeObject>, "freezeObjects" | "backoff" | "watchTimeoutSeconds" | "watchdogMs">;
}

export class SharedInformers {
  readonly #options: SharedInformersOptions;
  readonly #clock: Clock;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  readonly #started = new Set<string>();
  readonly #runs: Promise<void>[] = [];

  constructor(options: SharedInformersOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
  }

  /**
   * The informer for resource (made on first use); the caller names the object type it holds.
   * `informerOptions` apply when this call makes the informer: later callers share it as it is.
   */
  forResource<T extends KubeObject>(resource: ResourceType, options: RestListWatchOptions = {}, informerOptions: Pick<InformerOptions<T>, "transform"> = {}): Informer<T> {
    const selectors = [options.namespace, options.labelSelector, options.fieldSelector].filter((part) => part !== undefined && part !== "");
    const key = [resourceName(resource), ...selectors].join("|");
    let informer = this.#informers.get(key);
    if (informer === undefined) {
      informer = new Informer<KubeObject>({
        ...this.#options.informer,
        // The informer only ever holds objects of this resource, which the caller calls T.
        ...(informerOptions as Pick<InformerOptions<KubeObject>, "transform">),
        name: key,
        listWatch: restListWatch(this.#options.transport, resource, options),
        clock: this.#clock,
        ...(this.#options.logger === undefined ? {} : { logger: this.#options.logger }),
      });
      this.#informers.set(key, informer);
    }
    // The cache holds whatever the server sends for this resource; T only names it.
    return informer as unknown as Informer<T>;
  }

  /** Starts every informer not started yet; they run until signal aborts. */
  start(signal: AbortSignal): void {
    for (const [key, informer] of this.#informers) {
      if (this.#started.has(key)) continue;
      this.#started.add(key);
      this.#runs.push(informer.run(signal));
    }
  }

  waitForSync(signal: AbortSignal): Promise<boolean> {
    return waitForCacheSync(signal, this.#clock, ...this.#informers.values());
  }

  /** Resolves once every started informer has stopped. */
  async stopped(): Promise<void> {
    await Promise.all(this.#runs);
  }
}
