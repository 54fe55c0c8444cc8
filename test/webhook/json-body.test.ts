import { describe, expect, it } from "vitest";
import { parseJsonBody } from "../../src/webhook/json-body.ts";

describe("the webhook's JSON body parser", () => {
  it("parses JSON, a leading BOM ignored", () => {
    expect(parseJsonBody('\uFEFF{"a":[1,{"b":null}]}')).toEqual({ a: [1, { b: null }] });
  });

  it("says why a body is not JSON", () => {
    expect(() => parseJsonBody('{"apiVersion": "admission.k8s.io/v1", "kind": ')).toThrow(/^body is not valid JSON: Unexpected end of JSON input$/);
    expect(() => parseJsonBody("{'a': 1}")).toThrow(/^body is not valid JSON: .*position 1/);
    expect(() => parseJsonBody(" \n")).toThrow("body is empty: expected an admission.k8s.io/v1 AdmissionReview as JSON");
  });

  it.each([
    ['{"request": {"object": {"metadata": {"__proto__": {"polluted": true}}}}}', 'request.object.metadata: the key "__proto__" is not accepted'],
    ['{"request": [{"a": 1}, {"\\u005f_proto__": 1}]}', 'request[1]: the key "__proto__" is not accepted'],
    ['{"request": {"\\u005F\\u005Fproto\\u005f\\u005f": 1}}', 'request: the key "__proto__" is not accepted'],
    ['{"constructor": {"prototype": {"polluted": true}}}', 'body: a "constructor" key holding "prototype" is not accepted'],
    ['{"a": {"constr\\u0075ctor": {"prototype": 1}}}', 'a: a "constructor" key holding "prototype" is not accepted'],
  ])("refuses prototype keys, saying where: %s", (body, message) => {
    expect(() => parseJsonBody(body)).toThrow(message);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("accepts the words as values and a constructor key without a prototype", () => {
    expect(parseJsonBody('{"name": "__proto__", "constructor": "x", "kind": {"constructor": {"name": 1}}}')).toEqual({ name: "__proto__", constructor: "x", kind: { constructor: { name: 1 } } });
  });

  it("finds a prototype key under nesting deeper than the stack", () => {
    const deep = `${'{"a":'.repeat(200_000)}{"__proto__":1}${"}".repeat(200_000)}`;
    expect(() => parseJsonBody(deep)).toThrow(/^a\.a\.a.*: the key "__proto__" is not accepted$/);
  });
});
