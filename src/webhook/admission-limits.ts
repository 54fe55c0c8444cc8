// What the admission server lets in at once, and how long it takes (DESIGN §10), so that neither
// a flood of large AdmissionReviews nor clients that connect and then send slowly or nothing can
// exhaust memory, stall /healthz or keep the API server's reviews out:
// - a body is charged to the budget as its bytes arrive, never from the length it declares: a
//   client that declares 3 MiB and sends nothing holds nothing. At most `maxInFlightBytes` of
//   bodies received and not yet answered, and `maxInFlight` requests parsed and answered, at once;
//   beyond that a request is answered 429 with Retry-After (the API server's client retries it
//   after that second, within its timeout): at its headers when the budget is spent already,
//   else at the byte or the end of body that overruns it. Large bodies leave a tenth of the
//   bytes to small ones, the reviews of ordinary pods;
// - headers and body arrive within `arrivalDeadlineMs` of the request's first byte (the TLS
//   handshake within as long), else Node answers 408 and closes the connection;
// - large bodies are parsed and answered one at a time, with a turn of the event loop between
//   two of them, so that a health probe waits for at most one of them;
// - every request has a deadline below the one the API server gives in its `timeout` query
//   parameter; when it passes, the answer is a 503, so the API server applies the webhook's
//   failurePolicy instead of waiting for a reply that comes too late.
// Connections (connections-per-source.ts, the server's timeouts) are limited beside these.

export interface AdmissionLimitsOptions {
  /** Requests whose bodies have arrived, being parsed and answered at once. */
  maxInFlight?: number;
  /** Bytes of bodies received and not yet answered, counted as they arrive. */
  maxInFlightBytes?: number;
  /** A body at least this large takes its turn in the one-at-a-time lane. */
  largeBodyBytes?: number;
  /** The deadline when the API server does not say (a direct call, a test). */
  defaultDeadlineMs?: number;
  /** Headers and body (and a TLS handshake) must arrive within this, else 408 and the connection closed. */
  arrivalDeadlineMs?: number;
  /** Connections open at once from one source address; more are closed as they come. */
  maxConnectionsPerSource?: number;
  /** A kept-alive connection with no request on it is closed after this. */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_ADMISSION_LIMITS = {
  maxInFlight: 256,
  maxInFlightBytes: 10 * 1024 * 1024,
  largeBodyBytes: 256 * 1024,
  defaultDeadlineMs: 10_000,
  // The API server writes a review at once; seconds are ample even for 3 MiB on a slow link.
  arrivalDeadlineMs: 5_000,
  // The API server opens a connection per concurrent call (HTTP/1.1) and keeps up to 25 idle per
  // transport; several API servers may share one address (SNAT, konnectivity). Twice the calls
  // maxInFlight lets in leaves them room: beyond maxInFlight they get a 429 to retry, not a
  // refused connection.
  maxConnectionsPerSource: 512,
  // Reused within a burst of admissions, closed when no one has used it for half a minute.
  keepAliveTimeoutMs: 30_000,
} as const satisfies Required<AdmissionLimitsOptions>;

/** A request let in at its headers: it charges its body as it arrives, then takes its turn. */
export interface Admission {
  readonly deadlineMs: number;
  /** Charges `bytes` more of its body; says why not when they overrun the budget. */
  received(bytes: number): string | undefined;
  /** Its body has all arrived: it is parsed and answered now, unless maxInFlight are. */
  arrived(): string | undefined;
  /** Resolves when this request, once arrived, may be parsed and answered (large ones in turn). */
  turn(): Promise<void>;
  /** Gives back the budget and the turn; idempotent; nothing is charged after it. */
  release(): void;
}

export type Admitted = { admission: Admission } | { refused: string };

export class AdmissionLimits {
  readonly options: Readonly<Required<AdmissionLimitsOptions>>;
  /** Requests whose bodies have arrived and that are not answered yet. */
  #answering = 0;
  /** Bytes received of requests not answered yet. */
  #bytes = 0;
  #laneBusy = false;
  readonly #waiting: (() => void)[] = [];

  constructor(options: AdmissionLimitsOptions = {}) {
    this.options = { ...DEFAULT_ADMISSION_LIMITS, ...options };
  }

  /** Requests being parsed and answered. */
  get inFlight(): number {
    return this.#answering;
  }

  /** Bytes of bodies received and not yet answered. */
  get inFlightBytes(): number {
    return this.#bytes;
  }

  /**
   * Lets a request in at its headers, charging nothing yet, or says why not: the budget is spent
   * already. `declaredBytes` (its Content-Length, 0 when it has none) only refuses early a body
   * that could not fit beside what others have sent; `timeout` is the API server's `timeout`
   * query parameter, if any.
   */
  admit(declaredBytes: number, timeout: string | undefined): Admitted {
    const { maxInFlight, largeBodyBytes } = this.options;
    if (this.#answering >= maxInFlight) return { refused: answeringRefusal(this.#answering, maxInFlight) };
    // One body is always let in, however large: the body limit bounds it.
    const declaredLimit = this.#bytesLimit(declaredBytes >= largeBodyBytes);
    if (this.#bytes > 0 && this.#bytes + declaredBytes > declaredLimit.bytes) {
      return { refused: `${mib(this.#bytes)} MiB of admission requests are in flight and this one has ${mib(declaredBytes)} MiB (${declaredLimit.text})` };
    }
    let bytes = 0;
    let answering = false;
    let released = false;
    let turnState: "none" | "waiting" | "held" = "none";
    let wake: (() => void) | undefined;
    const admission: Admission = {
      deadlineMs: deadlineFor(timeout, this.options.defaultDeadlineMs),
      received: (more) => {
        if (released) return undefined;
        const others = this.#bytes - bytes;
        const limit = this.#bytesLimit(declaredBytes >= largeBodyBytes || bytes + more >= largeBodyBytes);
        if (others > 0 && this.#bytes + more > limit.bytes) {
          return `${mib(others)} MiB of other admission requests are in flight and this one has ${mib(bytes + more)} MiB so far (${limit.text})`;
        }
        bytes += more;
        this.#bytes += more;
        return undefined;
      },
      arrived: () => {
        if (released || answering) return undefined;
        if (this.#answering >= maxInFlight) return answeringRefusal(this.#answering, maxInFlight);
        answering = true;
        this.#answering++;
        return undefined;
      },
      turn: () => {
        if (bytes < this.options.largeBodyBytes || released || turnState !== "none") return Promise.resolve();
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
        this.#bytes -= bytes;
        if (answering) this.#answering--;
        if (turnState === "waiting" && wake !== undefined) this.#waiting.splice(this.#waiting.indexOf(wake), 1);
        if (turnState === "held") this.#passTurn();
      },
    };
    return { admission };
  }

  /**
   * Large bodies leave a tenth of the budget to small ones, as three 3 MiB bodies of ten left
   * one: large bodies arriving, however many or slow, never keep out the reviews of ordinary pods.
   */
  #bytesLimit(large: boolean): { bytes: number; text: string } {
    const { maxInFlightBytes, largeBodyBytes } = this.options;
    if (!large) return { bytes: maxInFlightBytes, text: `at most ${mib(maxInFlightBytes)} MiB at once` };
    const bytes = maxInFlightBytes - Math.floor(maxInFlightBytes / 10);
    return { bytes, text: `at most ${mib(bytes)} MiB at once of bodies of ${Math.round(largeBodyBytes / 1024)} KiB or more` };
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

function answeringRefusal(answering: number, maxInFlight: number): string {
  return `${answering} admission requests are in flight (at most ${maxInFlight})`;
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
