// A ListWatch that a test can cut off: `close()` ends the informer's live watch and holds its
// next one until `open()`, so the informer lags for exactly as long as the test wants, with
// its resourceVersion frozen, and no timing involved.
import type { ListWatch, WatchEvent, WatchOptions } from "../../src/kube/list-watch.ts";

export class WatchGate<T> implements ListWatch<T> {
  readonly #inner: ListWatch<T>;
  #closed: PromiseWithResolvers<void> | undefined;
  #live: AbortController | undefined;
  #arrived: PromiseWithResolvers<void> | undefined;

  constructor(inner: ListWatch<T>) {
    this.#inner = inner;
  }

  list(signal: AbortSignal, prepare: (item: T) => T) {
    return this.#inner.list(signal, prepare);
  }

  async watch(options: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<void> {
    while (this.#closed !== undefined && !options.signal.aborted) {
      const closed = this.#closed;
      this.#arrived?.resolve();
      await Promise.race([closed.promise, new Promise((resolve) => options.signal.addEventListener("abort", resolve, { once: true }))]);
    }
    const connection = new AbortController();
    const stop = () => connection.abort();
    options.signal.addEventListener("abort", stop, { once: true });
    this.#live = connection;
    try {
      await this.#inner.watch({ ...options, signal: connection.signal }, onEvent);
    } finally {
      options.signal.removeEventListener("abort", stop);
      if (this.#live === connection) this.#live = undefined;
    }
  }

  /** Ends the live watch and resolves once the informer is waiting to watch again. */
  async close(): Promise<void> {
    if (this.#closed !== undefined) throw new Error("the gate is already closed");
    this.#closed = Promise.withResolvers();
    this.#arrived = Promise.withResolvers();
    // The informer sees a broken connection, backs off, and comes back to wait here.
    this.#live?.abort();
    await this.#arrived.promise;
  }

  open(): void {
    const closed = this.#closed;
    this.#closed = undefined;
    this.#arrived = undefined;
    closed?.resolve();
  }
}
