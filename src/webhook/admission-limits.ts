// What the admission server lets in at once, and how long it takes (DESIGN §10), so that a flood
// of large AdmissionReviews can neither exhaust memory nor stall /healthz:
// - at most `maxInFlight` admission requests and `maxInFlightBytes` of their bodies at once;
//   beyond that a request is answered 429 with Retry-After at once, before its body is read
//   (the API server's client retries it after that second, within its timeout);
// - large bodies are parsed and answered one at a time, with a turn of the event loop between
//   two of them, so that a health probe waits for at most one of them;
// - every request has a deadline below the one the API server gives in its `timeout` query
//   parameter; when it passes, the answer is a 503, so the API server applies the webhook's
//   failurePolicy instead of waiting for a reply that comes too late.

export interface AdmissionLimitsOptions {
  maxInFlight?: number;
  maxInFlightBytes?: number;
  /** A body at least this large takes its turn in the one-at-a-time lane. */
  largeBodyBytes?: number;
  /** The deadline when the API server does not say (a direct call, a test). */
  defaultDeadlineMs?: number;
}

export const DEFAULT_ADMISSION_LIMITS = {
  maxInFlight: 256,
  maxInFlightBytes: 10 * 1024 * 1024,
  largeBodyBytes: 256 * 1024,
  defaultDeadlineMs: 10_000,
} as const satisfies Required<AdmissionLimitsOptions>;

/** A request let in: its share of the budget, and its turn in the lane once it has one. */
export interface Admission {
  readonly bytes: number;
  readonly deadlineMs: number;
  /** Resolves when this (large) request may be parsed and answered. */
  turn(): Promise<void>;
  /** Gives back the budget and the turn; idempotent. */
  release(): void;
}

export type Admitted = { admission: Admission } | { refused: string };

export class AdmissionLimits {
  readonly #options: Required<AdmissionLimitsOptions>;
  #inFlight = 0;
  #inFlightBytes = 0;
  #laneBusy = false;
  readonly #waiting: (() => void)[] = [];

  constructor(options: AdmissionLimitsOptions = {}) {
    this.#options = { ...DEFAULT_ADMISSION_LIMITS, ...options };
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Lets a request in or says why not. `bytes` is its declared length (the body limit when it
   * declares none); `timeout` is the API server's `timeout` query parameter, if any.
   */
  admit(bytes: number, timeout: string | undefined): Admitted {
    const { maxInFlight, maxInFlightBytes } = this.#options;
    if (this.#inFlight >= maxInFlight) return { refused: `${this.#inFlight} admission requests are in flight (at most ${maxInFlight})` };
    // One request is always let in, however large: the body limit bounds it.
    if (this.#inFlight > 0 && this.#inFlightBytes + bytes > maxInFlightBytes) {
      return { refused: `${mib(this.#inFlightBytes)} MiB of admission requests are in flight and this one has ${mib(bytes)} MiB (at most ${mib(maxInFlightBytes)} MiB at once)` };
    }
    this.#inFlight++;
    this.#inFlightBytes += bytes;
    let released = false;
    let turnState: "none" | "waiting" | "held" = "none";
    let wake: (() => void) | undefined;
    const large = bytes >= this.#options.largeBodyBytes;
    const admission: Admission = {
      bytes,
      deadlineMs: deadlineFor(timeout, this.#options.defaultDeadlineMs),
      turn: () => {
        if (!large || released || turnState !== "none") return Promise.resolve();
        if (!this.#laneBusy) {
          this.#laneBusy = true;
          turnState = "held";
          return Promise.resolve();
        }
        turnState = "waiting";
        return new Promise<void>((resolve) => {
          wake = () => {
            turnState = "held";
            resolve();
          };
          this.#waiting.push(wake);
        });
      },
      release: () => {
        if (released) return;
        released = true;
        this.#inFlight--;
        this.#inFlightBytes -= bytes;
        if (turnState === "waiting" && wake !== undefined) this.#waiting.splice(this.#waiting.indexOf(wake), 1);
        if (turnState === "held") this.#passTurn();
      },
    };
    return { admission };
  }

  /** The next large request goes after a turn of the event loop, in which health probes are answered. */
  #passTurn(): void {
    setImmediate(() => {
      const next = this.#waiting.shift();
      if (next === undefined) this.#laneBusy = false;
      else next();
    });
  }
}

function mib(bytes: number): string {
  return (bytes / 1048576).toFixed(1);
}

/**
 * The API server sends its own deadline as `timeout=<Go duration>` (e.g. "10s"); answering a
 * little before it leaves time for the answer to arrive. Never longer than the default.
 */
export function deadlineFor(timeout: string | undefined, defaultMs: number): number {
  const given = timeout === undefined ? undefined : goDurationMs(timeout);
  if (given === undefined || given <= 0) return defaultMs;
  const margin = Math.min(1000, given * 0.2);
  return Math.max(1, Math.min(defaultMs, Math.floor(given - margin)));
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, "µs": 0.001, ns: 0.000001 };

/** Milliseconds of a Go duration string ("1m30s", "500ms"), or undefined when it is not one. */
export function goDurationMs(text: string): number | undefined {
  const pattern = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/y;
  let total = 0;
  let position = 0;
  while (position < text.length) {
    pattern.lastIndex = position;
    const match = pattern.exec(text);
    if (match === null) return undefined;
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
    position = pattern.lastIndex;
  }
  return position === 0 ? undefined : total;
}
