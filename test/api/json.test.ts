import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cloneJson, sameJson } from "../../src/api/json.ts";
import { canonicalJson } from "../../src/revision/canonical-json.ts";

describe("cloneJson", () => {
  it("copies like a JSON round trip", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      expect(cloneJson(value)).toEqual(JSON.parse(JSON.stringify(value)));
    }));
  });

  it("shares nothing with its input", () => {
    const input = { a: [{ b: { c: 1 } }] };
    const copy = cloneJson(input);
    copy.a[0]!.b.c = 2;
    expect(input.a[0]!.b.c).toBe(1);
  });

  it("drops undefined properties and turns undefined array items into null", () => {
    expect(cloneJson({ a: undefined, b: [undefined, 1] })).toEqual({ b: [null, 1] });
    expect(Object.keys(cloneJson({ a: undefined }))).toEqual([]);
  });

  it("keeps a parsed \"__proto__\" key as data, never as the prototype", () => {
    const copy = cloneJson(JSON.parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(["__proto__"]);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
  });
});

describe("sameJson", () => {
  const reordered = (value: unknown): unknown => {
    if (typeof value !== "object" || value === null) return value;
    if (Array.isArray(value)) return value.map(reordered);
    return Object.fromEntries(Object.entries(value).reverse().map(([key, item]) => [key, reordered(item)]));
  };

  it("agrees with comparing canonical JSON, for any two values", () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), (a, b) => {
      expect(sameJson(a, b)).toBe(canonicalJson(a) === canonicalJson(b));
    }));
  });

  it("ignores key order and absent-as-undefined, not a changed leaf", () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
      expect(sameJson(value, reordered(value))).toBe(true);
      expect(sameJson({ value, gone: undefined }, { value })).toBe(true);
      expect(sameJson([value, undefined], [value, null])).toBe(true);
      expect(sameJson({ value }, { value, added: 1 })).toBe(false);
      expect(sameJson({ value }, { value: [value] })).toBe(false);
    }));
    expect(sameJson({ a: { b: [1, { c: "x" }] } }, { a: { b: [1, { c: "y" }] } })).toBe(false);
    expect(sameJson({ a: [] }, { a: {} })).toBe(false);
  });
});
