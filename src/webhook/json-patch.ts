// The one place a before/after pair becomes the JSON Patch a mutating webhook returns.
import jsonpatch from "fast-json-patch";
import { cloneJson } from "../api/json.ts";

export type JsonPatch = jsonpatch.Operation[];

/**
 * Both sides are normalised to what the wire carries first: a property set to `undefined`
 * would otherwise become an unappliable `replace`.
 */
export function createJsonPatch(before: unknown, after: unknown): JsonPatch {
  return jsonpatch.compare(cloneJson<object>(before ?? {}), cloneJson<object>(after ?? {}));
}
