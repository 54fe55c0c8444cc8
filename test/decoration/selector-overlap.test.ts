// Whether two decorations' selectors can both select one pod: they overlap unless what they ask
// of some label key contradicts.
import { describe, expect, it } from "vitest";
import type { LabelSelector } from "../../src/api/label-selector.ts";
import { selectorsOverlap } from "../../src/decoration/selector-overlap.ts";

describe("selectorsOverlap", () => {
  it.each<[string, LabelSelector, LabelSelector, boolean]>([
    ["{} overlaps {}", {}, {}, true],
    ["{} overlaps any valid selector", {}, { matchLabels: { app: "a" }, matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] }, true],
    ["different keys overlap", { matchLabels: { app: "a" } }, { matchLabels: { tier: "web" } }, true],
    ["the same label value overlaps", { matchLabels: { app: "a" } }, { matchLabels: { app: "a", tier: "web" } }, true],
    ["different values of one label do not", { matchLabels: { app: "a" } }, { matchLabels: { app: "b" } }, false],
    ["In containing the label's value overlaps", { matchLabels: { app: "a" } }, { matchExpressions: [{ key: "app", operator: "In", values: ["a", "b"] }] }, true],
    ["In without the label's value does not", { matchLabels: { app: "a" } }, { matchExpressions: [{ key: "app", operator: "In", values: ["b", "c"] }] }, false],
    ["two In sets sharing a value overlap", { matchExpressions: [{ key: "app", operator: "In", values: ["a", "b"] }] }, { matchExpressions: [{ key: "app", operator: "In", values: ["b", "c"] }] }, true],
    ["two disjoint In sets do not", { matchExpressions: [{ key: "app", operator: "In", values: ["a"] }] }, { matchExpressions: [{ key: "app", operator: "In", values: ["b"] }] }, false],
    ["NotIn excluding the label's value does not", { matchLabels: { app: "a" } }, { matchExpressions: [{ key: "app", operator: "NotIn", values: ["a"] }] }, false],
    ["NotIn leaving a value of In overlaps", { matchExpressions: [{ key: "app", operator: "In", values: ["a", "b"] }] }, { matchExpressions: [{ key: "app", operator: "NotIn", values: ["a"] }] }, true],
    ["NotIn of every value of In does not", { matchExpressions: [{ key: "app", operator: "In", values: ["a", "b"] }] }, { matchExpressions: [{ key: "app", operator: "NotIn", values: ["b", "a"] }] }, false],
    ["NotIn and Exists overlap (another value)", { matchExpressions: [{ key: "app", operator: "Exists" }] }, { matchExpressions: [{ key: "app", operator: "NotIn", values: ["a"] }] }, true],
    ["NotIn and DoesNotExist overlap (no label)", { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, { matchExpressions: [{ key: "app", operator: "NotIn", values: ["a"] }] }, true],
    ["Exists and DoesNotExist do not", { matchExpressions: [{ key: "app", operator: "Exists" }] }, { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, false],
    ["a label and DoesNotExist do not", { matchLabels: { app: "a" } }, { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, false],
    ["In and DoesNotExist do not", { matchExpressions: [{ key: "app", operator: "In", values: ["a"] }] }, { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, false],
    ["one contradiction among agreeing keys is enough", { matchLabels: { app: "a", tier: "web" } }, { matchLabels: { app: "a", tier: "db" } }, false],
  ])("%s", (_what, a, b, expected) => {
    expect(selectorsOverlap(a, b)).toBe(expected);
    expect(selectorsOverlap(b, a)).toBe(expected);
  });

  it("finds a selector that contradicts itself overlapping nothing, not even {}", () => {
    const never: LabelSelector = { matchLabels: { app: "a" }, matchExpressions: [{ key: "app", operator: "NotIn", values: ["a"] }] };
    expect(selectorsOverlap(never, {})).toBe(false);
  });

  it("finds a missing or invalid selector (which selects no pod) overlapping nothing", () => {
    expect(selectorsOverlap(undefined, {})).toBe(false);
    expect(selectorsOverlap({}, null)).toBe(false);
    expect(selectorsOverlap({ matchExpressions: [{ key: "app", operator: "In" }] }, {})).toBe(false);
  });
});
