// client-go's leader election over a Lease: candidates try every retryPeriod (jittered) to
// take a lease that is free or whose holder has not renewed it for leaseDuration, as
// measured on the candidate's own clock from when it last saw the record change; the leader
// renews every retryPeriod and gives up leading when it could not renew for renewDeadline.
// On a graceful stop the leader releases the lease so a successor need not wait it out.
import { pino, type Logger } from "pino";
import { isAlreadyExists, isConflict, statusMessage } from "../../kube/errors.ts";
import { formatMicroTime } from "../../kube/timestamps.ts";
import { realClock, type Clock } from "./clock.ts";
import type { LeaderElectionRecord, LeaseLock } from "./lease-lock.ts";

export type ElectionAction = "create" | "acquire" | "renew" | "wait";

/**
 * What a candidate may do with the record it read: create a missing lease, renew its own,
 * acquire a free or expired one, or wait. `observedAt` is when this candidate first saw the
 * record in its current state, on its own clock.
 */
export function electionAction(identity: string, observed: LeaderElectionRecord | undefined, observedAt: number, now: number): ElectionAction {
  if (observed === undefined) return "create";
  if (observed.holderIdentity === identity) return "renew";
  const valid = observed.holderIdentity !== "" && observedAt + observed.leaseDurationSeconds * 1000 > now;
  return valid ? "wait" : "acquire";
}

/** The record a successful create, acquire or renew writes. */
export function nextRecord(
  action: Exclude<ElectionAction, "wait">,
  identity: string,
  observed: LeaderElectionRecord | undefined,
  now: number,
  leaseDurationSeconds: number,
): LeaderElectionRecord {
  const time = formatMicroTime(now);
  const base = { holderIdentity: identity, leaseDurationSeconds, renewTime: time };
  if (action === "renew" && observed !== undefined) return { ...base, acquireTime: observed.acquireTime, leaseTransitions: observed.leaseTransitions };
  return { ...base, acquireTime: time, leaseTransitions: action === "create" || observed === undefined ? 0 : observed.leaseTransitions + 1 };
}

export interface LeaderElectorOptions {
  lock: LeaseLock;
  identity: string;
  /** How long a non-renewed lease keeps others out (client-go default 15s). */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a failed renewal before it stops leading (10s). */
  renewDeadlineMs?: number;
  /** Between attempts (2s). */
  retryPeriodMs?: number;
  /** Candidates wait retryPeriod·(1 + random·jitterFactor) between attempts (1.2). */
  jitterFactor?: number;
  /** Clear the holder on a graceful stop so a successor takes over at once (default true). */
  releaseOnCancel?: boolean;
  clock?: Clock;
  logger?: Logger;
  random?: () => number;
  /** Called once the lease is held; signal aborts when leadership ends. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called when leadership ends, after a release. */
  onStoppedLeading(): void;
  /** Called when the observed holder changes (including to this identity). */
  onNewLeader?(identity: string): void;
}

export class LeaderElector {
  readonly identity: string;
  readonly #options: LeaderElectorOptions;
  readonly #lock: LeaseLock;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #jitterFactor: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #random: () => number;
  #observed: LeaderElectionRecord | undefined;
  #observedAt = 0;
  #observedResourceVersion = "";
  #leading = false;
  #running = false;

  constructor(options: LeaderElectorOptions) {
    this.identity = options.identity;
    this.#options = options;
    this.#lock = options.lock;
    this.#leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.#retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.#jitterFactor = options.jitterFactor ?? 1.2;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#logger = (options.logger ?? pino({ level: "silent" })).child({ lease: options.lock.describe(), identity: options.identity });
    if (options.identity === "") throw new Error("leader election needs a non-empty identity");
    if (this.#leaseDurationMs <= this.#renewDeadlineMs) throw new Error("leaseDuration must be greater than renewDeadline");
    if (this.#renewDeadlineMs <= this.#jitterFactor * this.#retryPeriodMs) throw new Error("renewDeadline must be greater than retryPeriod·jitterFactor");
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /** The holder this candidate last observed ("" when free, undefined before the first read). */
  observedLeader(): string | undefined {
    return this.#observed?.holderIdentity;
  }

  /**
   * Campaigns until it leads, leads until leadership is lost or signal aborts, then returns
   * (as client-go's Run: a process that lost leadership should exit or run a new elector).
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error("this elector is already running");
    this.#running = true;
    try {
      if (!(await this.#acquire(signal))) return;
      const leadership = new AbortController();
      this.#leading = true;
      this.#logger.info({ reason: "acquired lease, started leading" });
      Promise.resolve()
        .then(() => this.#options.onStartedLeading(leadership.signal))
        .catch((error: unknown) => this.#logger.error({ reason: `onStartedLeading failed: ${statusMessage(error)}` }));
      try {
        await this.#renew(signal);
      } finally {
        this.#leading = false;
        leadership.abort();
        if (signal.aborted && (this.#options.releaseOnCancel ?? true)) await this.#release();
        this.#logger.info({ reason: signal.aborted ? "stopped leading (shutting down)" : "failed to renew lease, stopped leading" });
        this.#options.onStoppedLeading();
      }
    } finally {
      this.#running = false;
    }
  }

  async #acquire(signal: AbortSignal): Promise<boolean> {
    this.#logger.info({ reason: "attempting to acquire lease" });
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew()) return true;
      await this.#clock.sleep(this.#retryPeriodMs * (1 + this.#random() * this.#jitterFactor), signal);
    }
    return false;
  }

  async #renew(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const deadline = this.#clock.now() + this.#renewDeadlineMs;
      let renewed = false;
      while (!signal.aborted) {
        const remaining = deadline - this.#clock.now();
        if (remaining <= 0) break;
        if (await this.#withTimeout(this.#tryAcquireOrRenew(), remaining)) {
          renewed = true;
          break;
        }
        await this.#clock.sleep(Math.min(this.#retryPeriodMs, Math.max(0, deadline - this.#clock.now())), signal);
      }
      if (!renewed || signal.aborted) return;
      await this.#clock.sleep(this.#retryPeriodMs, signal);
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const now = this.#clock.now();
    const leaseDurationSeconds = Math.ceil(this.#leaseDurationMs / 1000);
    try {
      const current = await this.#lock.get();
      if (current === undefined) {
        const created = await this.#lock.create(nextRecord("create", this.identity, undefined, now, leaseDurationSeconds));
        this.#observe(created.record, created.resourceVersion, now);
        return true;
      }
      if (this.#observed === undefined || JSON.stringify(current.record) !== JSON.stringify(this.#observed)) {
        this.#observe(current.record, current.resourceVersion, now);
      }
      const action = electionAction(this.identity, current.record, this.#observedAt, now);
      if (action === "wait" || action === "create") return false;
      const written = await this.#lock.update(nextRecord(action, this.identity, current.record, now, leaseDurationSeconds), current.resourceVersion);
      this.#observe(written.record, written.resourceVersion, now);
      return true;
    } catch (error) {
      // Losing a race (409, or AlreadyExists on create) is routine; anything else is worth a warning.
      if (isConflict(error) || isAlreadyExists(error)) this.#logger.debug({ reason: `lost a lease race: ${statusMessage(error)}` });
      else this.#logger.warn({ reason: `lease attempt failed: ${statusMessage(error)}` });
      return false;
    }
  }

  #observe(record: LeaderElectionRecord, resourceVersion: string, now: number): void {
    const previousHolder = this.#observed?.holderIdentity;
    this.#observed = record;
    this.#observedAt = now;
    this.#observedResourceVersion = resourceVersion;
    if (record.holderIdentity !== previousHolder && record.holderIdentity !== "") this.#options.onNewLeader?.(record.holderIdentity);
  }

  #holdsObserved(): boolean {
    return this.#observed?.holderIdentity === this.identity;
  }

  /** Clears the holder, keeping the transition count, so the next candidate need not wait. */
  async #release(): Promise<void> {
    if (!this.#holdsObserved() || this.#observed === undefined) return;
    const now = formatMicroTime(this.#clock.now());
    const released: LeaderElectionRecord = { holderIdentity: "", leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: this.#observed.leaseTransitions };
    try {
      const written = await this.#lock.update(released, this.#observedResourceVersion);
      this.#observe(written.record, written.resourceVersion, this.#clock.now());
      this.#logger.info({ reason: "released lease" });
    } catch (error) {
      this.#logger.warn({ reason: `could not release lease: ${statusMessage(error)}` });
    }
  }

  /** An attempt that outlives the renew deadline counts as failed. */
  #withTimeout(attempt: Promise<boolean>, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => resolve(false), ms);
      void attempt.then((ok) => {
        timer.cancel();
        resolve(ok);
      });
    });
  }
}
