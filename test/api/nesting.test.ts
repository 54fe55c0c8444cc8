import { describe, expect, it } from "vitest";
import { MAX_NESTING_DEPTH, nestingErrors } from "../../src/api/nesting.ts";

function nested(depth: number, leaf: unknown = "x"): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? { key: value } : [value];
  return value;
}

describe("nestingErrors", () => {
  it("accepts nesting up to the limit, counting objects and arrays alike", () => {
    expect(nestingErrors(nested(MAX_NESTING_DEPTH), "spec")).toEqual([]);
    expect(nestingErrors(nested(MAX_NESTING_DEPTH + 1, 1), "spec")).toHaveLength(1);
  });

  it("names the first levels of the path that nests too deep", () => {
    expect(nestingErrors({ ok: { a: 1 }, bad: nested(5, null) }, "spec", 3)).toEqual([{ path: "spec.bad.key[0]", reason: "Invalid value: nests deeper than 3 levels" }]);
    expect(nestingErrors(nested(50), "", 20)[0]?.path).toBe("[0].key[0].key[0].key[0].key[0].key[0].key...");
  });

  it("walks a million levels without overflowing the stack", () => {
    expect(nestingErrors(nested(1_000_000), "")).toHaveLength(1);
  });
});
