// The two calls an informer needs, as an interface so that informers can be driven by
// injected functions in tests, and its implementation over the REST transport.
import { isGone } from "./errors.ts";
import type { KubeObject } from "./objects.ts";
import { apiVersionOf, collectionPath, type ResourceType } from "./resources.ts";
import type { RestTransport } from "./rest-transport.ts";

/** metav1.Status as carried by a watch ERROR event. */
export interface Status {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
}

export type WatchEvent<T> =
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: T }
  | { type: "BOOKMARK"; object: KubeObject }
  | { type: "ERROR"; object: Status };

export interface ListResult<T> {
  items: T[];
  /** The collection's resourceVersion, where the following watch starts. */
  resourceVersion: string;
}

export interface WatchOptions {
  resourceVersion: string;
  /** Asks the server to end the watch cleanly after this long. */
  timeoutSeconds: number;
  /** Aborting closes the connection; the returned promise then rejects. */
  signal: AbortSignal;
}

export interface ListWatch<T> {
  /**
   * Every object of the collection, each passed through `prepare` as soon as its page has
   * arrived: a list never holds more than one page of objects as the server sent them (an
   * informer's transform drops most of a pod, and 10,000 pods as sent need gigabytes of heap).
   */
  list(signal: AbortSignal, prepare: (item: T) => T): Promise<ListResult<T>>;
  /** Resolves when the server ends the watch, rejects on any error. */
  watch(options: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<void>;
}

export interface RestListWatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Items per list page (client-go's pager uses 500). */
  pageSize?: number;
}

interface ListBody<T> {
  items?: T[] | null;
  metadata?: { resourceVersion?: string; continue?: string };
}

export function restListWatch<T extends KubeObject>(transport: Pick<RestTransport, "getJson" | "streamLines">, resource: ResourceType, options: RestListWatchOptions = {}): ListWatch<T> {
  const path = collectionPath(resource, options.namespace);
  const apiVersion = apiVersionOf(resource);
  const selectors = { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
  const pageSize = options.pageSize ?? 500;

  async function listAll(signal: AbortSignal, prepare: (item: T) => T, limit: number | undefined): Promise<ListResult<T>> {
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion = "";
    do {
      const body = (await transport.getJson(path, { ...selectors, limit, continue: continueToken }, signal)) as ListBody<T>;
      // List items carry no kind/apiVersion; watch events do. Make them the same.
      for (const item of body.items ?? []) items.push(prepare({ ...item, apiVersion, kind: resource.kind }));
      resourceVersion = body.metadata?.resourceVersion ?? resourceVersion;
      continueToken = body.metadata?.continue === "" ? undefined : body.metadata?.continue;
    } while (continueToken !== undefined);
    return { items, resourceVersion };
  }

  return {
    async list(signal, prepare) {
      try {
        return await listAll(signal, prepare, pageSize);
      } catch (error) {
        // A continue token expired between pages: fall back to one unpaged list, as client-go's pager does.
        if (isGone(error)) return await listAll(signal, prepare, undefined);
        throw error;
      }
    },
    async watch({ resourceVersion, timeoutSeconds, signal }, onEvent) {
      const query = { ...selectors, watch: true, allowWatchBookmarks: true, resourceVersion, timeoutSeconds };
      await transport.streamLines(path, query, signal, (line) => onEvent(JSON.parse(line) as WatchEvent<T>));
    },
  };
}
