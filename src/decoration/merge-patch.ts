// JSON Merge Patch (RFC 7386), for annotation values (DESIGN §3): any JSON value patches any
// other; a patch that is not an object replaces the target, an object patch merges into it.

export type JsonObject = { [key: string]: unknown };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Applies `patch` to `target` per RFC 7386; returns a new value and touches neither input. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return patch;
  const result: JsonObject = {};
  if (isJsonObject(target)) for (const [key, value] of Object.entries(target)) defineOwn(result, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else defineOwn(result, key, applyMergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value));
  }
  return result;
}

// Parsed JSON may carry a "__proto__" key; plain assignment would change the prototype instead.
function defineOwn(object: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}
