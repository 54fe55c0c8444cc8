import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { isMatchedPod, newPodMoves, planRollout, rolloutStandings, type NewPodRevision, type RolloutPod } from "../../src/decoration/rollout.ts";

function decoration(rollingUpdate?: NonNullable<NonNullable<PodDecoration["spec"]["updateStrategy"]>["rollingUpdate"]>): PodDecoration {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name: "logging", namespace: "shop" },
    spec: { selector: { matchLabels: { app: "web" } }, ...(rollingUpdate === undefined ? {} : { updateStrategy: { rollingUpdate } }) },
  };
}

function pod(name: string, instanceId: string | undefined, current: string | undefined, ready = true, labels: Record<string, string> = {}): RolloutPod {
  return { name, labels: { app: "web", ...(instanceId === undefined ? {} : { "collaset.kusionstack.io/instance-id": instanceId }), ...labels }, ready, current };
}

const targets = (plan: Map<string, string | undefined>) => Object.fromEntries(plan);

describe("planRollout", () => {
  it("moves every matched pod to the updated revision without a rolling update", () => {
    expect(targets(planRollout(decoration(), "r2", [pod("a", "0", "r1"), pod("b", "1", undefined)]))).toEqual({ a: "r2", b: "r2" });
  });

  it("moves only pods the rolling-update selector selects; the others keep what they have", () => {
    const plan = planRollout(decoration({ selector: { matchLabels: { canary: "true" } } }), "r2", [
      pod("a", "0", "r1", true, { canary: "true" }),
      pod("b", "1", "r1"),
      pod("c", "2", undefined),
    ]);
    expect(targets(plan)).toEqual({ a: "r2", b: "r1", c: undefined });
  });

  it("with both a selector and a partition, holds back the last `partition` of the pods the selector picks", () => {
    // KusionStack's own proposal sets both; its controller then ignores the partition (DESIGN §2).
    const canary = { canary: "true" };
    const plan = planRollout(decoration({ partition: 1, selector: { matchLabels: canary } }), "r2", [
      pod("a", "0", "r1", true, canary),
      pod("b", "1", "r1", true, canary),
      pod("c", "2", "r1", true, canary),
      pod("d", "3", "r1"),
      pod("e", "4", undefined),
    ]);
    expect(targets(plan)).toEqual({ a: "r2", b: "r2", c: "r1", d: "r1", e: undefined });
  });

  it("with a selector and a partition larger than the pods it picks, moves none of them", () => {
    const plan = planRollout(decoration({ partition: 5, selector: { matchLabels: { canary: "true" } } }), "r2", [pod("a", "0", "r1", true, { canary: "true" }), pod("b", "1", "r1")]);
    expect(targets(plan)).toEqual({ a: "r1", b: "r1" });
  });

  it("holds back the last `partition` pods in instance-id order", () => {
    const pods = [pod("web-c", "10", undefined), pod("web-a", "2", undefined), pod("web-b", "9", undefined)];
    expect(targets(planRollout(decoration({ partition: 2 }), "r1", pods))).toEqual({ "web-a": "r1", "web-b": undefined, "web-c": undefined });
  });

  it("updates not-ready pods before ready ones, and pods without an instance id last, by name", () => {
    const pods = [pod("z", undefined, "r1"), pod("y", undefined, "r1"), pod("x", "5", "r1"), pod("w", "7", "r1", false)];
    expect(targets(planRollout(decoration({ partition: 2 }), "r2", pods))).toEqual({ w: "r2", x: "r2", y: "r1", z: "r1" });
  });

  it("keeps pods already on the updated revision when the partition goes back up", () => {
    const pods = [pod("a", "0", "r1"), pod("b", "1", "r2"), pod("c", "2", "r2")];
    expect(targets(planRollout(decoration({ partition: 2 }), "r2", pods))).toEqual({ a: "r1", b: "r2", c: "r2" });
  });

  it("only ever extends the updated set when the partition is lowered", () => {
    const arbitraryPods = fc.uniqueArray(
      fc.record({ id: fc.integer({ min: 0, max: 40 }), ready: fc.boolean(), current: fc.constantFrom(undefined, "r1", "r2") }),
      { selector: (p) => p.id, maxLength: 12 },
    );
    fc.assert(fc.property(arbitraryPods, fc.nat(12), fc.nat(12), (specs, high, low) => {
      const [from, to] = high >= low ? [high, low] : [low, high];
      const pods = specs.map((spec) => pod(`p${spec.id}`, String(spec.id), spec.current, spec.ready));
      const before = planRollout(decoration({ partition: from }), "r2", pods);
      // Pods act on the plan, then the partition is lowered.
      const acted = pods.map((p) => ({ ...p, current: before.get(p.name) }));
      const after = planRollout(decoration({ partition: to }), "r2", acted);
      for (const p of acted) if (p.current === "r2") expect(after.get(p.name)).toBe("r2");
      expect([...after.values()].filter((r) => r === "r2").length).toBe(Math.max(acted.filter((p) => p.current === "r2").length, acted.length - to));
    }));
  });
});

describe("planRollout: new pods (the new-pod policy)", () => {
  const withPolicy = (newPodRevision: NewPodRevision | undefined, rollingUpdate: Parameters<typeof decoration>[0]): PodDecoration => {
    const pd = decoration(rollingUpdate);
    return { ...pd, spec: { ...pd.spec, updateStrategy: { ...pd.spec.updateStrategy, ...(newPodRevision === undefined ? {} : { newPodRevision }) } } };
  };
  const fresh = (name: string, id: string): RolloutPod => ({ ...pod(name, id, undefined, false), isNew: true });
  // Four pods, two updated; partition 2; two new pods make six, so four must be updated.
  const pods = () => [pod("a", "0", "r2"), pod("b", "1", "r2"), pod("c", "2", "r1"), pod("d", "3", "r1"), fresh("new-4", "4"), fresh("new-5", "5")];

  it("Updated (the default): new pods are the first to move", () => {
    const expected = { a: "r2", b: "r2", c: "r1", d: "r1", "new-4": "r2", "new-5": "r2" };
    expect(targets(planRollout(withPolicy(undefined, { partition: 2 }), "r2", pods(), "r1"))).toEqual(expected);
    expect(targets(planRollout(withPolicy("Updated", { partition: 2 }), "r2", pods(), "r1"))).toEqual(expected);
  });

  it("Current: new pods are the first to be held back, on the current revision, and existing pods move instead", () => {
    expect(targets(planRollout(withPolicy("Current", { partition: 2 }), "r2", pods(), "r1"))).toEqual({ a: "r2", b: "r2", c: "r2", d: "r2", "new-4": "r1", "new-5": "r1" });
  });

  it("gives a held-back new pod nothing when the decoration has no current revision", () => {
    expect(targets(planRollout(withPolicy("Current", { partition: 1 }), "r1", [pod("a", "0", undefined), fresh("new-1", "1")]))).toEqual({ a: "r1", "new-1": undefined });
  });

  it("gives a new pod the rolling-update selector does not pick the current revision", () => {
    const plan = planRollout(withPolicy(undefined, { selector: { matchLabels: { canary: "true" } } }), "r2", [fresh("new-0", "0"), { ...fresh("new-1", "1"), labels: { app: "web", canary: "true" } }], "r1");
    expect(targets(plan)).toEqual({ "new-0": "r1", "new-1": "r2" });
  });

  it("keeps the partition's count whatever the policy: never more, never fewer updated pods than it says", () => {
    const arbitraryPods = fc.uniqueArray(
      fc.record({ id: fc.integer({ min: 0, max: 30 }), ready: fc.boolean(), current: fc.constantFrom(undefined, "r1", "r2"), isNew: fc.boolean() }),
      { selector: (p) => p.id, maxLength: 10 },
    );
    fc.assert(fc.property(arbitraryPods, fc.nat(10), fc.constantFrom<NewPodRevision>("Updated", "Current"), (specs, partition, policy) => {
      const rolloutPods = specs.map((spec) => ({ ...pod(`p${spec.id}`, String(spec.id), spec.isNew ? undefined : spec.current, spec.ready), isNew: spec.isNew }));
      const plan = planRollout(withPolicy(policy, { partition }), "r2", rolloutPods, "r1");
      const alreadyUpdated = rolloutPods.filter((p) => p.current === "r2").length;
      expect([...plan.values()].filter((target) => target === "r2").length).toBe(Math.max(alreadyUpdated, rolloutPods.length - partition));
      // Where the policy has a choice: Updated moves a new pod before any existing one, Current after all of them.
      const moved = (p: RolloutPod) => plan.get(p.name) === "r2" && p.current !== "r2";
      const newPods = rolloutPods.filter((p) => p.isNew);
      const waiting = rolloutPods.filter((p) => !p.isNew && p.current !== "r2");
      if (policy === "Updated" && waiting.some(moved)) expect(newPods.every(moved)).toBe(true);
      if (policy === "Current" && newPods.some(moved)) expect(waiting.every(moved)).toBe(true);
    }));
  });
});

describe("newPodMoves (a pod the webhook decorates at creation)", () => {
  const withStatus = (rollingUpdate: Parameters<typeof decoration>[0], status: PodDecoration["status"]): PodDecoration => ({ ...decoration(rollingUpdate), status });

  it("moves without a rolling update, and with a selector that picks it", () => {
    expect(newPodMoves(decoration(), "r2", { app: "web" })).toBe(true);
    expect(newPodMoves(decoration({ selector: { matchLabels: { canary: "true" } } }), "r2", { app: "web", canary: "true" })).toBe(true);
    expect(newPodMoves(decoration({ selector: { matchLabels: { canary: "true" } } }), "r2", { app: "web" })).toBe(false);
  });

  it("moves exactly when the partition has room for one more updated pod, by the decoration's status counts", () => {
    // 5 matched, partition 2: 6 with the new pod, so up to 4 updated.
    expect(newPodMoves(withStatus({ partition: 2 }, { updatedRevision: "r2", matchedPods: 5, updatedPods: 3 }), "r2", {})).toBe(true);
    expect(newPodMoves(withStatus({ partition: 2 }, { updatedRevision: "r2", matchedPods: 5, updatedPods: 4 }), "r2", {})).toBe(false);
    expect(newPodMoves(withStatus({ partition: 7 }, { updatedRevision: "r2", matchedPods: 5, updatedPods: 0 }), "r2", {})).toBe(false);
  });

  it("does not count pods of an older updated revision as updated", () => {
    expect(newPodMoves(withStatus({ partition: 2 }, { updatedRevision: "r1", matchedPods: 5, updatedPods: 5 }), "r2", {})).toBe(true);
  });
});

describe("isMatchedPod", () => {
  const live = { metadata: { name: "p", namespace: "shop", labels: { app: "web" } }, status: { phase: "Running" } };

  it("matches a live pod the selector selects in the decoration's namespace", () => {
    expect(isMatchedPod(decoration(), live)).toBe(true);
    expect(isMatchedPod(decoration(), { ...live, metadata: { ...live.metadata, namespace: "other" } })).toBe(false);
    expect(isMatchedPod(decoration(), { ...live, metadata: { ...live.metadata, labels: { app: "db" } } })).toBe(false);
  });

  it("does not match terminal pods or pods being deleted", () => {
    expect(isMatchedPod(decoration(), { ...live, status: { phase: "Succeeded" } })).toBe(false);
    expect(isMatchedPod(decoration(), { ...live, status: { phase: "Failed" } })).toBe(false);
    expect(isMatchedPod(decoration(), { ...live, metadata: { ...live.metadata, deletionTimestamp: "2026-11-21T00:00:00Z" } })).toBe(false);
  });
});

describe("rolloutStandings", () => {
  it("agrees with planRollout and counts the position among the selector's candidates only", () => {
    const canary = { canary: "true" };
    const pd = decoration({ partition: 1, selector: { matchLabels: canary } });
    const pods = [pod("a", "0", "r1", true, canary), pod("b", "1", "r1"), pod("c", "2", "r1", true, canary)];
    const plan = planRollout(pd, "r2", pods);
    const standings = rolloutStandings(pd, "r2", pods);
    for (const { name } of pods) expect(standings.get(name)?.target).toBe(plan.get(name));
    expect(Object.fromEntries(standings)).toEqual({
      a: { target: "r2", held: undefined },
      b: { target: "r1", held: { by: "canary-selector" } },
      c: { target: "r1", held: { by: "partition", partition: 1, position: 2, candidates: 2 } },
    });
  });
});
