import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cloneJson } from "../../src/api/json.ts";

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
