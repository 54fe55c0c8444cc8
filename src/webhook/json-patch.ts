// The one place a before/after pair becomes the JSON Patch a mutating webhook returns.
import jsonpatch from "fast-json-patch";

export type JsonPatch = jsonpatch.Operation[];

/**
 * Both sides go through JSON first: a property set to `undefined` would otherwise
 * become an unappliable `replace`, and class instances or Dates would not compare.
 */
export function createJsonPatch(before: unknown, after: unknown): JsonPatch {
  return jsonpatch.compare(toJsonValue(before), toJsonValue(after));
}

function toJsonValue(value: unknown): object {
  return JSON.parse(JSON.stringify(value ?? {})) as object;
}
