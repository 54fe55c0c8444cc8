// Out-ranking judged as rendered (DESIGN §10): labels decorations set can bring a pod to a
// selector its own labels do not satisfy, so the platform's decoration can be out-ranked through
// a chain of decorations each harmless alone — issue 37's takeover — and a decoration that
// changes a label another selects by takes that other off the pods it relabels.
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { labelWrites } from "../../src/decoration/label-writes.ts";
import { outRankedDecorations, outRankingsWithin } from "../../src/decoration/out-ranking.ts";
import fc from "fast-check";
import { decorations } from "./arbitraries.ts";
import { selectorsOverlap } from "../../src/decoration/selector-overlap.ts";
import { decoratePod, liveRevision } from "../../src/decoration/decorate.ts";

const NAMESPACE = "shop";

function decoration(name: string, spec: Partial<PodDecoration["spec"]>, created?: string): PodDecoration {
  return { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name, namespace: NAMESPACE, ...(created === undefined ? {} : { creationTimestamp: created }) }, spec: { selector: {}, ...spec } };
}

const platform = decoration("mesh", { selector: { matchLabels: { tier: "backend" } }, template: { containers: [{ name: "mesh-proxy", image: "platform/proxy:1" }] } }, "2026-01-01T00:00:00Z");
const relabel = decoration("app-relabel", { selector: { matchLabels: { tier: "backend" } }, template: { metadata: [{ patchPolicy: "Overwrite", labels: { tier: "frontend" } }] } }, "2026-01-02T00:00:00Z");
const takeover = decoration("zz-takeover", { selector: { matchLabels: { tier: "frontend" } }, template: { containers: [{ name: "mesh-proxy", image: "app-team/proxy:1" }] } });

describe("the chain takeover of issue 37", () => {
  it("works when both are in: every backend pod runs the app team's proxy", () => {
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "api-0", namespace: NAMESPACE, labels: { tier: "backend" } }, spec: { containers: [{ name: "api", image: "api:1" }] } };
    const rendered = decoratePod(pod, [platform, relabel, { ...takeover, metadata: { ...takeover.metadata, creationTimestamp: "2026-01-03T00:00:00Z" } }], liveRevision);
    expect(rendered.pod.spec?.containers.find((container) => container.name === "mesh-proxy")?.image).toBe("app-team/proxy:1");
  });

  it("finds the selectors overlapping once the namespace's labels are taken into account", () => {
    expect(selectorsOverlap(takeover.spec.selector, platform.spec.selector)).toBe(false);
    expect(selectorsOverlap(takeover.spec.selector, platform.spec.selector, labelWrites([platform, relabel, takeover]))).toBe(true);
  });

  it("says the relabelling decoration changes the label the platform's selects by", () => {
    expect(outRankedDecorations(relabel, [platform]).map(({ decoration: other, reasons }) => [other.metadata.name, reasons])).toEqual([
      ["mesh", [`would change label "tier" that ${NAMESPACE}/mesh selects pods by`]],
    ]);
  });

  it("says the takeover replaces the platform's proxy, through the relabelling already there", () => {
    expect(outRankedDecorations(takeover, [platform, relabel]).map(({ decoration: other, reasons }) => [other.metadata.name, reasons])).toEqual([
      ["mesh", [`would replace container "mesh-proxy" that ${NAMESPACE}/mesh injects`]],
    ]);
    // Alone, with no decoration setting tier, the two never meet.
    expect(outRankedDecorations(takeover, [platform])).toEqual([]);
  });
});

describe("selectorsOverlap as rendered", () => {
  it.each<[string, PodDecoration["spec"]["selector"], PodDecoration["spec"]["selector"], [string, string][], boolean]>([
    ["a value no decoration writes keeps them apart", { matchLabels: { a: "1" } }, { matchLabels: { a: "2" } }, [["a", "3"]], false],
    ["a written value one selector accepts bridges them", { matchLabels: { a: "1" } }, { matchLabels: { a: "2" } }, [["a", "2"]], true],
    ["DoesNotExist and a write: the pod starts without, a decoration adds it", { matchExpressions: [{ key: "a", operator: "DoesNotExist" }] }, { matchLabels: { a: "1" } }, [["a", "1"]], true],
    ["a selector that no value satisfies stays unsatisfiable", { matchExpressions: [{ key: "a", operator: "In", values: ["1"] }, { key: "a", operator: "NotIn", values: ["1"] }] }, {}, [["a", "1"]], false],
    ["a key written elsewhere does not help a conflict on another key", { matchLabels: { a: "1", b: "1" } }, { matchLabels: { a: "1", b: "2" } }, [["a", "2"]], false],
  ])("%s", (_name, a, b, written, overlap) => {
    const writer = decoration("writer", { template: { metadata: [{ patchPolicy: "Overwrite", labels: Object.fromEntries(written) }] } });
    expect(selectorsOverlap(a, b, labelWrites([writer]))).toBe(overlap);
  });
});

describe("outRankingsWithin", () => {
  it("finds exactly what judging every pair finds, over generated namespaces", () => {
    fc.assert(
      fc.property(decorations, (generated) => {
        const namespace = generated.filter((decoration) => decoration.metadata.namespace === "shop");
        const writes = labelWrites(namespace);
        const byPairs = new Map<string, string[]>();
        for (const candidate of namespace) {
          if (candidate.metadata.deletionTimestamp != null) continue;
          for (const { decoration: other, reasons } of outRankedDecorations(candidate, namespace, writes)) {
            byPairs.set(`${other.metadata.name ?? ""} by ${candidate.metadata.name ?? ""}`, reasons);
          }
        }
        const indexed = new Map<string, string[]>();
        for (const [other, by] of outRankingsWithin(namespace, writes)) for (const entry of by) indexed.set(`${other.metadata.name ?? ""} by ${entry.by.metadata.name ?? ""}`, entry.reasons);
        expect(indexed).toEqual(byPairs);
      }),
      { numRuns: 500 },
    );
  });
});
