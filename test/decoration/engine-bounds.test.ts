// The engine's cost is bounded (DESIGN §10, "No namespace can stall another"): rounds of
// selection through labels decorations set, the time a pod is given, the decorations a
// namespace renders with, and the chain estimate admission refuses on.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../src/api/pod.ts";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { decoratePod, liveRevision } from "../../src/decoration/decorate.ts";
import { DecorationBoundsError, DecorationError } from "../../src/decoration/decoration-error.ts";
import { budgetUntil } from "../../src/decoration/engine-bounds.ts";
import { withinNamespaceLimit } from "../../src/decoration/namespace-limit.ts";
import { longestSelectionChain } from "../../src/decoration/selection-chains.ts";

const NAMESPACE = "team-a";

function decoration(name: string, spec: Partial<PodDecoration["spec"]>, created = "2026-01-01T00:00:00Z", extra: Partial<PodDecoration["metadata"]> = {}): PodDecoration {
  return { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name, namespace: NAMESPACE, creationTimestamp: created, ...extra }, spec: { selector: {}, ...spec } };
}

/** Link i selects l<i>: x and sets l<i+1>: x (Overwrite): the attack of issue 37, `length` links long. */
function chain(length: number): PodDecoration[] {
  return Array.from({ length }, (_, index) =>
    decoration(`link-${index}`, { selector: { matchLabels: { [`l${index}`]: "x" } }, template: { metadata: [{ patchPolicy: "Overwrite", labels: { [`l${index + 1}`]: "x" } }] } }));
}

function pod(labels: Record<string, string>): Pod {
  return { apiVersion: "v1", kind: "Pod", metadata: { name: "web-0", namespace: NAMESPACE, labels }, spec: { containers: [{ name: "app", image: "app:1" }] } };
}

describe("decoratePod: rounds of selection", () => {
  it("follows labels decorations set as many rounds as it is given", () => {
    const result = decoratePod(pod({ l0: "x" }), chain(4), liveRevision, { maxSelectionRounds: 4 });
    expect(result.applied.map((applied) => applied.name)).toEqual(["link-0", "link-1", "link-2", "link-3"]);
    // Idempotent: the rendered pod selects nothing new.
    expect(decoratePod(result.pod, chain(4), liveRevision, { maxSelectionRounds: 4 }).applied).toEqual([]);
  });

  it("refuses a pod whose decorations select each other one round deeper, naming the one that would join", () => {
    expect(() => decoratePod(pod({ l0: "x" }), chain(5), liveRevision, { maxSelectionRounds: 4 })).toThrow(DecorationBoundsError);
    expect(() => decoratePod(pod({ l0: "x" }), chain(5), liveRevision, { maxSelectionRounds: 4 })).toThrow(/PodDecoration team-a\/link-4: selects the pod only through labels other decorations set, in selection round 5/);
  });

  it("stops a 600-link chain in a few milliseconds where the unbounded engine took seconds", () => {
    const links = chain(600);
    const started = performance.now();
    expect(() => decoratePod(pod({ l0: "x" }), links, liveRevision, { maxSelectionRounds: 4 })).toThrow(DecorationBoundsError);
    // 4 rounds of one selection over 600 and one render of at most 4: the issue measured 4.5 s for 500 before.
    expect(performance.now() - started).toBeLessThan(500);
  });

  it("renders nothing once its budget is spent, with the budget named", () => {
    let now = 0;
    const budget = budgetUntil(0, 100, () => now);
    const decorations = [decoration("a", { template: { containers: [{ name: "a", image: "a:1" }] } }), decoration("b", { template: { containers: [{ name: "b", image: "b:1" }] } })];
    const revisionFor = (pd: PodDecoration) => {
      // The clock moves on while the first decoration's revision is read.
      now = 150;
      return liveRevision(pd);
    };
    const attempt = () => decoratePod(pod({}), decorations, revisionFor, { maxSelectionRounds: 4, budget });
    expect(attempt).toThrow(DecorationBoundsError);
    expect(attempt).toThrow(/the time for this pod's decorations \(100 ms, the request's\) ran out after 0 of 2/);
  });

  it("is a DecorationError, so every caller handles it as a decoration that cannot be rendered", () => {
    expect(new DecorationBoundsError({ namespace: "a", name: "b" }, "why")).toBeInstanceOf(DecorationError);
  });
});

describe("withinNamespaceLimit", () => {
  const old = decoration("old", {}, "2026-01-01T00:00:00Z");
  const middle = decoration("middle", {}, "2026-01-02T00:00:00Z");
  const newestA = decoration("newest-a", {}, "2026-01-03T00:00:00Z");
  const newestB = decoration("newest-b", {}, "2026-01-03T00:00:00Z");
  const going = decoration("going", {}, "2026-01-04T00:00:00Z", { deletionTimestamp: "2026-01-05T00:00:00Z" });

  it("returns the list itself when the namespace is within the limit", () => {
    const list = [newestA, old, middle];
    const limited = withinNamespaceLimit(list, 3);
    expect(limited.within).toBe(list);
    expect(limited.over).toEqual([]);
  });

  it("leaves the newest beyond the limit out, by creation time then name, keeping the order given", () => {
    const limited = withinNamespaceLimit([newestB, old, newestA, middle], 2);
    expect(limited.within.map((pd) => pd.metadata.name)).toEqual(["old", "middle"]);
    expect(limited.over.map((pd) => pd.metadata.name)).toEqual(["newest-a", "newest-b"]);
    expect(limited.counted).toBe(4);
  });

  it("does not count a decoration being deleted", () => {
    const limited = withinNamespaceLimit([old, middle, going], 2);
    expect(limited.over).toEqual([]);
    expect(limited.counted).toBe(2);
  });
});

describe("longestSelectionChain", () => {
  const names = (decorations: PodDecoration[]) => longestSelectionChain(decorations).map((pd) => pd.metadata.name);

  it("follows labels to the selectors they satisfy", () => {
    expect(names(chain(3))).toEqual(["link-0", "link-1", "link-2"]);
  });

  it("does not follow a label whose value the selector does not accept", () => {
    const marker = decoration("marker", { template: { metadata: [{ patchPolicy: "Overwrite", labels: { mesh: "off" } }] } });
    const mesh = decoration("mesh", { selector: { matchLabels: { mesh: "on" } } });
    expect(names([marker, mesh])).toHaveLength(1);
    const notIn = decoration("not-off", { selector: { matchExpressions: [{ key: "mesh", operator: "NotIn", values: ["off"] }] } });
    expect(names([marker, notIn])).toHaveLength(1);
    const exists = decoration("any-mesh", { selector: { matchExpressions: [{ key: "mesh", operator: "Exists" }] } });
    expect(names([marker, exists])).toEqual(["marker", "any-mesh"]);
  });

  it("follows the label recording a decoration's revision", () => {
    const platform = decoration("platform", {});
    const follower = decoration("follower", { selector: { matchExpressions: [{ key: "poddecoration.kusionstack.io/pd-platform", operator: "Exists" }] } });
    expect(names([follower, platform])).toEqual(["platform", "follower"]);
  });

  it("counts decorations that lead to each other as long as they are many", () => {
    const a = decoration("a", { selector: { matchLabels: { x: "1" } }, template: { metadata: [{ labels: { y: "1" } }] } });
    const b = decoration("b", { selector: { matchLabels: { y: "1" } }, template: { metadata: [{ labels: { x: "1" } }] } });
    const c = decoration("c", { selector: { matchLabels: { x: "1" } } });
    expect(names([c, b, a])).toEqual(["b", "a", "c"]);
  });

  it("is linear: 2,000 decorations in a chain take well under a second", () => {
    const started = performance.now();
    expect(longestSelectionChain(chain(2000))).toHaveLength(2000);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
