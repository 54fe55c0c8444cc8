// Capped exponential backoff for reconnecting (client-go's reflector backoff shape): the
// wait doubles from initialMs up to maxMs and starts over after a success.

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
}

export class CappedBackoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  #next: number;

  constructor(options: BackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 200;
    this.#maxMs = options.maxMs ?? 30_000;
    this.#next = this.#initialMs;
  }

  /** The wait before the next attempt; each call doubles the one after, up to the cap. */
  next(): number {
    const wait = this.#next;
    this.#next = Math.min(this.#next * 2, this.#maxMs);
    return wait;
  }

  reset(): void {
    this.#next = this.#initialMs;
  }
}
