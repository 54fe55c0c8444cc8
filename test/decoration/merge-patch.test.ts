// JSON Merge Patch as RFC 7386 defines it: the examples of its Appendix A, for any JSON value.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyMergePatch } from "../../src/decoration/merge-patch.ts";

describe("applyMergePatch (RFC 7386)", () => {
  // RFC 7386, Appendix A: original, patch, result.
  it.each([
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [["a", "b"], ["c", "d"], ["c", "d"]],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])("%j patched with %j is %j", (original, patch, result) => {
    expect(applyMergePatch(original, patch)).toEqual(result);
  });

  it("touches neither input", () => {
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (original, patch) => {
      const [before, patchBefore] = [structuredClone(original), structuredClone(patch)];
      applyMergePatch(original, patch);
      expect(original).toEqual(before);
      expect(patch).toEqual(patchBefore);
    }));
  });

  it("is idempotent: applying a patch twice is applying it once", () => {
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (original, patch) => {
      const once = applyMergePatch(original, patch);
      expect(applyMergePatch(once, patch)).toEqual(once);
    }));
  });
});
