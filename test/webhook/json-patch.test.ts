// createJsonPatch: the patch turns the first value into the second, always; and it names only
// what changed, so a value the decorations left alone is never written back (DESIGN §10).
import fc from "fast-check";
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import { createJsonPatch } from "../../src/webhook/json-patch.ts";

const wire = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

/** The patch applied as the API server receives it: as JSON text (it shares the `after` value's parts, -0 included). */
function applied(before: unknown, patch: unknown[]): unknown {
  return jsonpatch.applyPatch(structuredClone(before), wire(patch) as jsonpatch.Operation[], true, false).newDocument;
}

// fast-json-patch, which applies the patches here, cannot add an own "__proto__" key (the API
// server can: to it, that is a key like any other).
const json = (maxDepth: number) => fc.jsonValue({ maxDepth }).filter((value) => !JSON.stringify(value).includes("__proto__"));

// Lists of named objects (containers), of objects without names, of scalars; maps; scalars.
const named = fc.uniqueArray(fc.record({ name: fc.constantFrom("a", "b", "c", "d", "e", "f"), image: fc.constantFrom("x:1", "x:2"), env: fc.uniqueArray(fc.record({ name: fc.constantFrom("A", "B", "C"), value: fc.constantFrom("1", "2") }), { selector: (variable) => variable.name, maxLength: 3 }) }, { requiredKeys: ["name"] }), { selector: (container) => container.name, maxLength: 5 });
const document = fc.record({
  metadata: fc.record({ labels: fc.dictionary(fc.constantFrom("app", "a/b", "x~y"), fc.constantFrom("1", "2")), note: json(2) }, { requiredKeys: [] }),
  spec: fc.record({
    containers: named,
    tolerations: fc.array(fc.record({ key: fc.constantFrom("k1", "k2"), operator: fc.constantFrom("Exists", "Equal"), value: fc.constantFrom("v", "w") }, { requiredKeys: ["key"] }), { maxLength: 4 }),
    args: fc.array(fc.constantFrom("--a", "--b", "--a"), { maxLength: 4 }),
    other: json(3),
  }, { requiredKeys: [] }),
}, { requiredKeys: [] });

describe("createJsonPatch", () => {
  it("turns any document into any other", () => {
    fc.assert(fc.property(document, document, (before, after) => {
      expect(applied(before, createJsonPatch(before, after))).toEqual(wire(after));
    }), { numRuns: 1000 });
  });

  it("turns a document into an edit of itself, whatever the edit", () => {
    fc.assert(fc.property(document, named, fc.nat(), (before, inserted, at) => {
      const after = structuredClone(before);
      const containers = (after.spec ??= {}).containers ?? [];
      const fresh = inserted.filter((container) => !containers.some((existing) => existing.name === container.name));
      containers.splice(at % (containers.length + 1), 0, ...fresh);
      after.spec.containers = containers;
      expect(applied(before, createJsonPatch(before, after))).toEqual(wire(after));
    }), { numRuns: 500 });
  });

  it("inserts a sidecar with one add, leaving the containers after it out of the patch", () => {
    const before = { spec: { containers: [{ name: "app", image: "app:1", env: [{ name: "N", value: "9223372036854775807" }] }, { name: "metrics", image: "m:1" }] } };
    const after = structuredClone(before);
    after.spec.containers.splice(0, 0, { name: "proxy", image: "proxy:1", env: [] });
    after.spec.containers.push({ name: "logger", image: "log:1", env: [] });
    after.spec.containers[1]!.env!.push({ name: "LOG_DIR", value: "/var/log" });
    expect(createJsonPatch(before, after)).toEqual([
      { op: "add", path: "/spec/containers/0", value: { name: "proxy", image: "proxy:1", env: [] } },
      { op: "add", path: "/spec/containers/1/env/1", value: { name: "LOG_DIR", value: "/var/log" } },
      { op: "add", path: "/spec/containers/3", value: { name: "logger", image: "log:1", env: [] } },
    ]);
  });

  it("escapes keys as JSON pointers, drops undefined like the wire, and is empty for equal documents", () => {
    expect(createJsonPatch({ metadata: { labels: { a: "1" } } }, { metadata: { labels: { a: "1", "x/y~z": "2", gone: undefined } } })).toEqual([
      { op: "add", path: "/metadata/labels/x~1y~0z", value: "2" },
    ]);
    expect(createJsonPatch({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual([]);
  });

  it("replaces a list whose surviving elements changed order", () => {
    const before = { containers: [{ name: "a" }, { name: "b" }] };
    const after = { containers: [{ name: "b" }, { name: "a" }] };
    expect(createJsonPatch(before, after)).toEqual([{ op: "replace", path: "/containers", value: after.containers }]);
  });
});
