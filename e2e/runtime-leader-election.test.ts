// Two leader electors in one process contending for one real Lease: exactly one leads at a
// time, a released lease is taken over at once, and one whose holder stops renewing is
// taken over within a lease duration (plus the retry period it takes to notice).
import { describe, expect } from "vitest";
import { LeaderElector } from "../src/controller/runtime/leader-election.ts";
import { kubeLeaseLock } from "../src/controller/runtime/lease-lock.ts";
import { createKubeClient } from "../src/kube/client.ts";
import { clients, eventually, test } from "./support/cluster.ts";

const leaseDurationMs = 4_000;
const renewDeadlineMs = 3_000;
const retryPeriodMs = 500;

interface Candidate {
  identity: string;
  elector: LeaderElector;
  stop: AbortController;
  running: Promise<void>;
  history: string[];
  /** Set while onStartedLeading's signal is live. */
  leading: () => boolean;
}

function candidate(namespace: string, identity: string, releaseOnCancel: boolean): Candidate {
  const kube = createKubeClient(clients().config);
  const history: string[] = [];
  let leadership: AbortSignal | undefined;
  const elector = new LeaderElector({
    lock: kubeLeaseLock(kube.coordination.leases, namespace, "pod-decorator"),
    identity,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    jitterFactor: 0.2,
    releaseOnCancel,
    onStartedLeading: (signal) => {
      leadership = signal;
      history.push("started");
    },
    onStoppedLeading: () => history.push("stopped"),
  });
  const stop = new AbortController();
  return { identity, elector, stop, running: elector.run(stop.signal), history, leading: () => leadership !== undefined && !leadership.aborted };
}

async function leaseHolder(namespace: string): Promise<{ holder: string; transitions: number }> {
  const lease = await clients().objects.read({ apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { namespace, name: "pod-decorator" } });
  const spec = (lease as { spec?: { holderIdentity?: string; leaseTransitions?: number } }).spec;
  return { holder: spec?.holderIdentity ?? "", transitions: spec?.leaseTransitions ?? 0 };
}

/** Samples both candidates until `until` holds, failing if they ever both lead. */
async function watchExclusive(candidates: readonly Candidate[], until: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!until()) {
    const leaders = candidates.filter((entry) => entry.elector.isLeader() || entry.leading());
    expect(leaders.map((entry) => entry.identity).length).toBeLessThanOrEqual(1);
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs}ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

describe("leader election on a real Lease", () => {
  test("one of two candidates leads; on release the other takes over at once", async ({ namespace }) => {
    const a = candidate(namespace, "replica-a", true);
    const b = candidate(namespace, "replica-b", true);
    const both = [a, b];
    try {
      const first = await eventually(() => Promise.resolve(both.find((entry) => entry.elector.isLeader())), 20_000, "a leader");
      const second = first === a ? b : a;
      // For a few lease durations: exactly one leads, and it stays the same one.
      const deadline = Date.now() + 2 * leaseDurationMs;
      await watchExclusive(both, () => Date.now() > deadline, 3 * leaseDurationMs);
      expect(first.elector.isLeader()).toBe(true);
      expect(second.history).toEqual([]);
      expect(await leaseHolder(namespace)).toEqual({ holder: first.identity, transitions: 0 });

      first.stop.abort();
      await first.running;
      expect(first.history).toEqual(["started", "stopped"]);
      const takeover = await watchExclusive(both, () => second.elector.isLeader(), leaseDurationMs);
      // A released lease needs no expiry: the next attempt takes it, well inside a lease duration.
      expect(takeover).toBeLessThan(leaseDurationMs);
      expect(await leaseHolder(namespace)).toEqual({ holder: second.identity, transitions: 1 });
    } finally {
      for (const entry of both) entry.stop.abort();
      await Promise.all(both.map((entry) => entry.running));
    }
    expect(await leaseHolder(namespace)).toMatchObject({ holder: "" });
  });

  test("a leader that stops renewing is replaced within one lease duration", async ({ namespace }) => {
    const a = candidate(namespace, "replica-a", false);
    await eventually(() => Promise.resolve(a.elector.isLeader() ? true : undefined), 20_000, "replica-a to lead");
    const b = candidate(namespace, "replica-b", true);
    const both = [a, b];
    try {
      // replica-b has read the lease and seen it held: it waits, and does not lead.
      await eventually(() => Promise.resolve(b.elector.observedLeader() === "replica-a" ? true : undefined), 20_000, "replica-b to see replica-a's lease");
      expect(b.elector.isLeader()).toBe(false);
      // replica-a stops without releasing, as a crashed process would.
      a.stop.abort();
      await a.running;
      const stoppedAt = Date.now();
      expect(await leaseHolder(namespace)).toMatchObject({ holder: "replica-a" });
      await watchExclusive(both, () => b.elector.isLeader(), leaseDurationMs + 4 * retryPeriodMs);
      const takeover = Date.now() - stoppedAt;
      // Not before the lease ran out (its last renewal was at most one retry period before the stop)...
      expect(takeover).toBeGreaterThanOrEqual(leaseDurationMs - retryPeriodMs * 1.2);
      // ...and within a lease duration of noticing the last renewal.
      expect(takeover).toBeLessThanOrEqual(leaseDurationMs + 2 * retryPeriodMs * 1.2 + 1_500);
      expect(await leaseHolder(namespace)).toEqual({ holder: "replica-b", transitions: 1 });
    } finally {
      for (const entry of both) entry.stop.abort();
      await Promise.all(both.map((entry) => entry.running));
    }
  });
});
