// A ListWatch over generated objects, answering the informer the way the API server and
// restListWatch do: the list comes in pages of 500 as JSON text, parsed, each item given its
// kind and apiVersion; the watch then stays open and silent until the informer stops. Pages
// are generated on demand, so nothing but the informer's cache keeps the objects.
import type { ListResult, ListWatch } from "../../src/kube/list-watch.ts";
import type { KubeObject } from "../../src/kube/objects.ts";
import { realClock } from "../../src/controller/runtime/clock.ts";
import { waitForCacheSync, type Informer } from "../../src/controller/runtime/informer.ts";

export interface GeneratedListOptions<T> {
  count: number;
  generate(index: number): T;
  /** The item as JSON text, when the generator has it (saves a parse and a serialisation per item). */
  text?(index: number): string;
  apiVersion: string;
  kind: string;
  pageSize?: number;
}

export function generatedListWatch<T extends KubeObject>(options: GeneratedListOptions<T>): ListWatch<T> {
  const pageSize = options.pageSize ?? 500;
  const resourceVersion = String(200_000 + options.count);
  return {
    list(_signal, prepare): Promise<ListResult<T>> {
      const items: T[] = [];
      for (let start = 0; start < options.count; start += pageSize) {
        const page: string[] = [];
        for (let index = start; index < Math.min(options.count, start + pageSize); index++) {
          if (options.text !== undefined) {
            page.push(options.text(index));
            continue;
          }
          // The wire has no kind/apiVersion on list items.
          const { kind: _kind, apiVersion: _apiVersion, ...item } = options.generate(index);
          page.push(JSON.stringify(item));
        }
        const body = `{"kind":${JSON.stringify(`${options.kind}List`)},"apiVersion":${JSON.stringify(options.apiVersion)},"metadata":{"resourceVersion":"${resourceVersion}"},"items":[${page.join(",")}]}`;
        for (const item of (JSON.parse(body) as { items: T[] }).items) items.push(prepare({ ...item, apiVersion: options.apiVersion, kind: options.kind }));
      }
      return Promise.resolve({ items, resourceVersion });
    },
    watch(watchOptions) {
      return new Promise((_resolve, reject) => {
        watchOptions.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      });
    },
  };
}

/** Runs informer until it has synced; returns the function that stops it. */
export async function syncInformer<T extends KubeObject>(informer: Informer<T>): Promise<() => Promise<void>> {
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  if (!(await waitForCacheSync(stop.signal, realClock, informer))) throw new Error(`informer ${informer.name} did not sync`);
  return async () => {
    stop.abort();
    await running;
  };
}
