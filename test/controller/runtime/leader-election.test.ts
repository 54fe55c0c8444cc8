import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { FakeClock, settle } from "../fake-clock.ts";
import { electionAction, LeaderElector, nextRecord } from "../../../src/controller/runtime/leader-election.ts";
import type { LeaderElectionRecord, LeaseLock, LockedRecord } from "../../../src/controller/runtime/lease-lock.ts";

const record = (holderIdentity: string, extra: Partial<LeaderElectionRecord> = {}): LeaderElectionRecord => ({
  holderIdentity,
  leaseDurationSeconds: 15,
  acquireTime: "2026-01-01T00:00:00.000000Z",
  renewTime: "2026-01-01T00:00:00.000000Z",
  leaseTransitions: 3,
  ...extra,
});

describe("electionAction", () => {
  const now = 1_000_000;
  it.each([
    ["creates a lease that does not exist", undefined, 0, "create"],
    ["renews its own lease", record("me"), now - 60_000, "renew"],
    ["waits while another holder's lease is fresh", record("other"), now - 14_999, "wait"],
    ["acquires once the other holder has not renewed for the lease duration", record("other"), now - 15_000, "acquire"],
    ["uses the duration written in the record", record("other", { leaseDurationSeconds: 60 }), now - 30_000, "wait"],
    ["acquires a released lease at once", record("", { leaseDurationSeconds: 1 }), now, "acquire"],
  ] as const)("%s", (_name, observed, observedAt, expected) => {
    expect(electionAction("me", observed, observedAt, now)).toBe(expected);
  });
});

describe("nextRecord", () => {
  const now = Date.UTC(2026, 5, 1, 12, 0, 0, 123);
  it("counts a transition when the holder changes and stamps MicroTime", () => {
    expect(nextRecord("acquire", "me", record("other"), now, 15)).toEqual({
      holderIdentity: "me",
      leaseDurationSeconds: 15,
      acquireTime: "2026-06-01T12:00:00.123000Z",
      renewTime: "2026-06-01T12:00:00.123000Z",
      leaseTransitions: 4,
    });
  });

  it("keeps acquireTime and transitions on renew", () => {
    expect(nextRecord("renew", "me", record("me"), now, 15)).toMatchObject({ acquireTime: "2026-01-01T00:00:00.000000Z", renewTime: "2026-06-01T12:00:00.123000Z", leaseTransitions: 3 });
  });

  it("starts at zero transitions on create", () => {
    expect(nextRecord("create", "me", undefined, now, 15).leaseTransitions).toBe(0);
  });
});

/** One Lease held in memory with resourceVersion checks, shared by the candidates' locks. */
class MemoryLease {
  stored: LockedRecord | undefined;
  #version = 0;
  writes: string[] = [];

  lock(identity: string, reachable: () => boolean = () => true): LeaseLock {
    const unreachable = () => new ApiException(503, "Service Unavailable", "{}", {});
    return {
      get: () => (reachable() ? Promise.resolve(this.stored === undefined ? undefined : structuredClone(this.stored)) : Promise.reject(unreachable())),
      create: (record) => {
        if (!reachable()) return Promise.reject(unreachable());
        if (this.stored !== undefined) return Promise.reject(new ApiException(409, "Conflict", JSON.stringify({ reason: "AlreadyExists", code: 409 }), {}));
        return Promise.resolve(this.#write(identity, record));
      },
      update: (record, resourceVersion) => {
        if (!reachable()) return Promise.reject(unreachable());
        if (this.stored?.resourceVersion !== resourceVersion) return Promise.reject(new ApiException(409, "Conflict", JSON.stringify({ reason: "Conflict", code: 409 }), {}));
        return Promise.resolve(this.#write(identity, record));
      },
      describe: () => "test/lease",
    };
  }

  #write(identity: string, record: LeaderElectionRecord): LockedRecord {
    this.stored = { record: structuredClone(record), resourceVersion: String(++this.#version) };
    this.writes.push(`${identity}:${record.holderIdentity}`);
    return structuredClone(this.stored);
  }
}

function candidate(lease: MemoryLease, clock: FakeClock, identity: string, options: { reachable?: () => boolean; releaseOnCancel?: boolean } = {}) {
  const log: string[] = [];
  const stop = new AbortController();
  let leadership: AbortSignal | undefined;
  const elector = new LeaderElector({
    lock: lease.lock(identity, options.reachable),
    identity,
    clock,
    random: () => 0,
    ...(options.releaseOnCancel === undefined ? {} : { releaseOnCancel: options.releaseOnCancel }),
    onStartedLeading: (signal) => {
      leadership = signal;
      log.push("started");
    },
    onStoppedLeading: () => log.push("stopped"),
  });
  const running = elector.run(stop.signal);
  return { elector, log, stop, running, leadership: () => leadership };
}

describe("LeaderElector", () => {
  it("rejects timings client-go rejects", () => {
    const lock = new MemoryLease().lock("me");
    const base = { lock, identity: "me", onStartedLeading() {}, onStoppedLeading() {} };
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(/leaseDuration/);
    expect(() => new LeaderElector({ ...base, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).toThrow(/renewDeadline/);
    expect(() => new LeaderElector({ ...base, identity: "" })).toThrow(/identity/);
  });

  it("lets exactly one of two candidates lead, and the leader keeps renewing", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const a = candidate(lease, clock, "a");
    const b = candidate(lease, clock, "b");
    await settle();
    await clock.advance(60_000);
    expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([true, false]);
    expect(a.log).toEqual(["started"]);
    expect(b.log).toEqual([]);
    expect(b.elector.observedLeader()).toBe("a");
    expect(lease.stored?.record.holderIdentity).toBe("a");
    // Renewed every 2s for a minute.
    expect(lease.writes.filter((write) => write === "a:a").length).toBeGreaterThanOrEqual(29);
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.running, b.running]);
  });

  it("hands over within a retry period when the leader releases on shutdown", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const a = candidate(lease, clock, "a");
    await settle();
    const b = candidate(lease, clock, "b");
    await clock.advance(10_000);
    expect(a.elector.isLeader()).toBe(true);
    a.stop.abort();
    await a.running;
    expect(a.log).toEqual(["started", "stopped"]);
    expect(a.leadership()?.aborted).toBe(true);
    expect(lease.stored?.record).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1, leaseTransitions: 0 });
    const released = clock.now();
    while (!b.elector.isLeader() && clock.now() - released < 60_000) await clock.advance(100);
    expect(clock.now() - released).toBeLessThanOrEqual(2_000);
    expect(lease.stored?.record).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    b.stop.abort();
    await b.running;
  });

  it("takes over from a leader that stops renewing only after a full lease duration", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const a = candidate(lease, clock, "a", { releaseOnCancel: false });
    await settle();
    const b = candidate(lease, clock, "b");
    await clock.advance(10_000);
    a.stop.abort();
    await a.running;
    const lastRenew = clock.now();
    expect(lease.stored?.record.holderIdentity).toBe("a");
    while (!b.elector.isLeader() && clock.now() - lastRenew < 60_000) await clock.advance(100);
    const takeover = clock.now() - lastRenew;
    expect(takeover).toBeGreaterThanOrEqual(15_000 - 2_000);
    expect(takeover).toBeLessThanOrEqual(15_000 + 2_000);
    b.stop.abort();
    await b.running;
  });

  it("stops leading when renewals fail past the renew deadline", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    let reachable = true;
    const a = candidate(lease, clock, "a", { reachable: () => reachable });
    await clock.advance(5_000);
    expect(a.elector.isLeader()).toBe(true);
    reachable = false;
    const cut = clock.now();
    while (a.elector.isLeader() && clock.now() - cut < 60_000) await clock.advance(100);
    const lost = clock.now() - cut;
    // The last success was up to one retry period before the cut; the deadline is 10s after it.
    expect(lost).toBeGreaterThanOrEqual(8_000);
    expect(lost).toBeLessThanOrEqual(12_100);
    await a.running;
    expect(a.log).toEqual(["started", "stopped"]);
    expect(a.leadership()?.aborted).toBe(true);
  });

  it("keeps leading through failures shorter than the renew deadline", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    let reachable = true;
    const a = candidate(lease, clock, "a", { reachable: () => reachable });
    await clock.advance(5_000);
    reachable = false;
    await clock.advance(6_000);
    reachable = true;
    await clock.advance(30_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.log).toEqual(["started"]);
    a.stop.abort();
    await a.running;
  });
});
