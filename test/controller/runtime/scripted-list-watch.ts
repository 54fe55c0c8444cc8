// A ListWatch whose list and watch calls the test answers one by one: just the two functions
// an informer calls, under the test's control, to drive its timing (fake clock) exactly. How
// the informer behaves against the real API server is e2e/runtime-informer.test.ts's subject.
import type { ListResult, ListWatch, WatchEvent, WatchOptions } from "../../../src/kube/list-watch.ts";
import type { ConfigMap } from "../../../src/kube/objects.ts";

export interface WatchSession {
  options: Omit<WatchOptions, "signal">;
  signal: AbortSignal;
  emit(event: WatchEvent<ConfigMap>): void;
  /** The server ends the watch cleanly. */
  close(): void;
  fail(error: unknown): void;
}

type ListAnswer = ListResult<ConfigMap> | Error;

export class ScriptedListWatch implements ListWatch<ConfigMap> {
  readonly #listAnswers: ListAnswer[] = [];
  readonly #listWaiters: ((answer: ListAnswer) => void)[] = [];
  readonly #sessions: WatchSession[] = [];
  readonly #sessionWaiters: ((session: WatchSession) => void)[] = [];
  lists = 0;
  watches: WatchSession[] = [];

  /** The answer to the next list call; a list call waits until it has one. */
  answerList(answer: ListAnswer): this {
    const waiter = this.#listWaiters.shift();
    if (waiter === undefined) this.#listAnswers.push(answer);
    else waiter(answer);
    return this;
  }

  async list(_signal: AbortSignal, prepare: (item: ConfigMap) => ConfigMap): Promise<ListResult<ConfigMap>> {
    this.lists++;
    const answer = this.#listAnswers.shift() ?? (await new Promise<ListAnswer>((resolve) => this.#listWaiters.push(resolve)));
    if (answer instanceof Error) throw answer;
    const { items, resourceVersion } = structuredClone(answer);
    return { items: items.map(prepare), resourceVersion };
  }

  watch(options: WatchOptions, onEvent: (event: WatchEvent<ConfigMap>) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const { signal, ...rest } = options;
      const session: WatchSession = {
        options: rest,
        signal,
        emit: (event) => onEvent(structuredClone(event)),
        close: () => resolve(),
        fail: (error) => reject(error instanceof Error ? error : new Error(String(error))),
      };
      signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      this.watches.push(session);
      const waiter = this.#sessionWaiters.shift();
      if (waiter === undefined) this.#sessions.push(session);
      else waiter(session);
    });
  }

  /** The next watch the informer opens (already open, or the one it opens next). */
  nextWatch(): Promise<WatchSession> {
    const session = this.#sessions.shift();
    if (session !== undefined) return Promise.resolve(session);
    return new Promise((resolve) => this.#sessionWaiters.push(resolve));
  }
}

export function configMap(name: string, resourceVersion: string, extra: Partial<ConfigMap> = {}, namespace = "default"): ConfigMap {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, resourceVersion, uid: `uid-${name}` }, data: { version: resourceVersion }, ...extra };
}

export function listOf(resourceVersion: string, ...items: ConfigMap[]): ListResult<ConfigMap> {
  return { items, resourceVersion };
}
