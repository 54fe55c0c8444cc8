// The pod webhook carries what it does not know through untouched (DESIGN §10): fields of a
// newer Kubernetes, values of enums newer than this code, fields nobody has heard of. Generated
// pods get such fields at random places; the answer must be an admission whose patch, once the
// fields are taken out again, gives exactly what the same pod without them gets — and every
// field that survives (its holder was not replaced by a decoration) keeps its value.
import fc from "fast-check";
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import type { Pod } from "../../src/api/pod.ts";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { withoutNullFields } from "../../src/api/null-fields.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustNobody } from "../../src/webhook/requester-trust.ts";
import { decorations as decorationsArbitrary, pod as podArbitrary } from "../decoration/arbitraries.ts";

type Json = unknown;

// Unknown keys are unique per insertion, so every occurrence in an answer is one we put there.
const MARKER = "x-future-";

/** A value a newer API might carry: enum-like strings, numbers, nested objects and lists. */
const futureValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom("Lt", "Gt", "WhenNewer", "NoExecuteAfterDrain", "RestartContainer", ""),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
).map((value) => JSON.parse(JSON.stringify(value)) as Json); // as the wire carries it: no -0

// Maps of strings, where a new key is a label or an annotation, not a field.
const STRING_MAPS = new Set(["labels", "annotations", "nodeSelector"]);

/** Paths of every object (not list, not map of strings) inside value. */
function objectPaths(value: Json, path: (string | number)[] = [], into: (string | number)[][] = []): (string | number)[][] {
  if (Array.isArray(value)) value.forEach((item, index) => objectPaths(item, [...path, index], into));
  else if (typeof value === "object" && value !== null) {
    if (!STRING_MAPS.has(String(path.at(-1)))) into.push(path);
    for (const [key, item] of Object.entries(value)) objectPaths(item, [...path, key], into);
  }
  return into;
}

function at(root: Json, path: readonly (string | number)[]): Record<string, Json> {
  return path.reduce<Json>((node, key) => (node as Record<string | number, Json>)[key], root) as Record<string, Json>;
}

function withFutureFields(pod: Pod, insertions: readonly { at: number; value: Json }[]): { pod: Pod; inserted: Map<string, Json> } {
  // Not structuredClone: generated pods share instances (two `emptyDir: {}`), which it keeps shared.
  const copy = JSON.parse(JSON.stringify(pod)) as Pod;
  const paths = objectPaths(copy);
  const inserted = new Map<string, Json>();
  insertions.forEach((insertion, index) => {
    const key = `${MARKER}${index}`;
    at(copy, paths[insertion.at % paths.length]!)[key] = insertion.value;
    inserted.set(key, insertion.value);
  });
  return { pod: copy, inserted };
}

/** Removes every marker key, returning what each one held, wherever it was. */
function takeOutFutureFields(value: Json, found: Map<string, Json[]> = new Map()): Map<string, Json[]> {
  if (Array.isArray(value)) for (const item of value) takeOutFutureFields(item, found);
  else if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) {
      if (key.startsWith(MARKER)) {
        found.set(key, [...(found.get(key) ?? []), (value as Record<string, Json>)[key]]);
        delete (value as Record<string, Json>)[key];
      } else takeOutFutureFields((value as Record<string, Json>)[key], found);
    }
  }
  return found;
}

function admitted(decorations: readonly PodDecoration[], pod: Pod): Pod {
  const handler = podMutation({
    source: { decorations: (namespace) => decorations.filter((pd) => pd.metadata.namespace === namespace), revisionData: () => undefined },
    // A decoration that cannot go into the pod leaves it undecorated: the property is about the
    // pod's own fields, with or without it.
    onDecorationError: "admit",
    trustRequester: trustNobody,
  });
  const decision = handler({ uid: "u", kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE", namespace: "shop", object: structuredClone(pod) });
  expect(decision.response.allowed).toBe(true);
  const patch = decision.response.patch === undefined ? [] : (JSON.parse(Buffer.from(decision.response.patch, "base64").toString()) as jsonpatch.Operation[]);
  return jsonpatch.applyPatch(structuredClone(pod), patch, true, false).newDocument;
}

describe("fields the pod webhook does not know", () => {
  it("are carried through untouched, and change nothing it renders", () => {
    let survived = 0;
    fc.assert(
      fc.property(podArbitrary, decorationsArbitrary, fc.array(fc.record({ at: fc.nat(), value: futureValue }), { minLength: 1, maxLength: 8 }), (pod, decorations, insertions) => {
        const future = withFutureFields(pod, insertions);
        const withFields = admitted(decorations, future.pod);
        const found = takeOutFutureFields(withFields);
        expect(withFields).toEqual(admitted(decorations, pod));
        for (const [key, values] of found) {
          // A field survives with its holder or goes with it (replaced by a decoration); it is
          // never altered. Where the decoration rewrites a list (node selector requirements
          // copied into several ANDed terms, or collapsed when equal), the holders it writes are
          // copies of the pod as the API server reads it: the field is carried without the nulls
          // inside it, which is how the API server reads it too.
          const inserted = future.inserted.get(key);
          for (const value of values) expect([inserted, withoutNullFields(inserted)]).toContainEqual(value);
          survived++;
        }
      }),
      { numRuns: 300, ...(process.env.PROPERTY_SEED === undefined ? {} : { seed: Number(process.env.PROPERTY_SEED) }) },
    );
    // Most holders survive rendering: the property was about something.
    expect(survived).toBeGreaterThan(300);
  });
});
