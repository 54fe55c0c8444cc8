// Label selector semantics, as apimachinery defines them.
import { describe, expect, it } from "vitest";
import type { LabelSelector } from "../../src/api/label-selector.ts";
import { parseLabelSelector, selectorKeys, selectorMatches } from "../../src/decoration/selector.ts";

const labels = { app: "web", tier: "frontend", "example.com/team": "shop" };

describe("selectorMatches", () => {
  it.each<[string, LabelSelector, boolean]>([
    ["{} matches everything", {}, true],
    ["matchLabels all present", { matchLabels: { app: "web", "example.com/team": "shop" } }, true],
    ["matchLabels one differs", { matchLabels: { app: "web", tier: "backend" } }, false],
    ["matchLabels key missing", { matchLabels: { track: "stable" } }, false],
    ["In", { matchExpressions: [{ key: "tier", operator: "In", values: ["backend", "frontend"] }] }, true],
    ["In, key missing", { matchExpressions: [{ key: "track", operator: "In", values: ["stable"] }] }, false],
    ["NotIn", { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["frontend"] }] }, false],
    ["NotIn, key missing", { matchExpressions: [{ key: "track", operator: "NotIn", values: ["canary"] }] }, true],
    ["Exists", { matchExpressions: [{ key: "example.com/team", operator: "Exists" }] }, true],
    ["Exists, key missing", { matchExpressions: [{ key: "track", operator: "Exists" }] }, false],
    ["DoesNotExist", { matchExpressions: [{ key: "track", operator: "DoesNotExist" }] }, true],
    ["DoesNotExist, key present", { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, false],
    ["requirements are ANDed", { matchExpressions: [{ key: "app", operator: "Exists" }, { key: "tier", operator: "In", values: ["backend"] }] }, false],
    ["matchLabels and matchExpressions are ANDed", { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] }, false],
    ["both parts hold", { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "NotIn", values: ["backend"] }] }, true],
  ])("%s", (_what, selector, expected) => {
    expect(selectorMatches(selector, labels)).toBe(expected);
  });

  it("matches a pod without labels only with selectors that need none", () => {
    expect(selectorMatches({}, undefined)).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, {})).toBe(true);
    expect(selectorMatches({ matchLabels: { app: "web" } }, undefined)).toBe(false);
  });

  it("selects nothing with a missing or invalid selector", () => {
    expect(selectorMatches(undefined, labels)).toBe(false);
    expect(selectorMatches(null, labels)).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: "app", operator: "In" }] }, labels)).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: "app", operator: "Like" as "In", values: ["web"] }] }, labels)).toBe(false);
  });

  // Cached decorations written before the webhook, or under a looser CRD, can hold anything.
  it.each<[string, unknown]>([
    ["a string", "app=web"],
    ["an array", [{ matchLabels: { app: "web" } }]],
    ["matchLabels as an array", { matchLabels: ["app", "web"] }],
    ["matchLabels with a non-string value", { matchLabels: { app: 1 } }],
    ["matchExpressions as an object", { matchExpressions: { key: "app", operator: "Exists" } }],
    ["a null requirement", { matchExpressions: [null] }],
    ["a requirement without a key", { matchExpressions: [{ operator: "Exists" }] }],
  ])("selects nothing, and depends on no label, with a selector that is %s", (_what, selector) => {
    expect(selectorMatches(selector as LabelSelector, labels)).toBe(false);
    expect(selectorKeys(selector as LabelSelector)).toEqual([]);
  });

  it("depends on every key its labels and requirements read, each once", () => {
    const selector: LabelSelector = { matchLabels: { app: "web" }, matchExpressions: [{ key: "app", operator: "Exists" }, { key: "tier", operator: "In", values: ["frontend"] }] };
    expect(selectorKeys(selector)).toEqual(["app", "tier"]);
    expect(selectorKeys({})).toEqual([]);
  });

  it("does not treat inherited object properties as labels", () => {
    expect(selectorMatches({ matchExpressions: [{ key: "constructor", operator: "Exists" }] }, labels)).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: "toString", operator: "DoesNotExist" }] }, labels)).toBe(true);
  });
});

describe("parseLabelSelector", () => {
  it("reports every problem with field paths under the given prefix", () => {
    const parsed = parseLabelSelector({ matchLabels: { "a/b/c": "x" }, matchExpressions: [{ key: "k", operator: "Exists", values: ["v"] }] }, "spec.selector");
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.errors.map((error) => error.path)).toEqual(["spec.selector.matchLabels", "spec.selector.matchExpressions[0].values"]);
  });
});
