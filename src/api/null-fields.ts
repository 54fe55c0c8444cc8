// `null` read the way the API server reads it (DESIGN §10): an optional field set to null is
// the field left out. For our own kinds the API server prunes such nulls before defaulting
// (apiextensions-apiserver's PruneNonNullableNullsWithoutDefaults), map entries included; for
// pods it decodes JSON into Go structs, where null is the zero value — absent for objects,
// lists and pointers, "" for a string in a map (`labels: {app: }` in YAML is the label
// `app: ""`). Reading every input through these functions once, at the boundary, means no
// validator or renderer downstream ever has to tell null from absent.

/**
 * A copy of JSON data (as `cloneJson` makes it) without the object properties whose value is
 * null, at any depth. Array items are kept: a null list item is not an absent field, and
 * validation says what is wrong with it.
 */
export function withoutNullFields<T>(value: T): T {
  return prune(value, noStringMaps, "") as T;
}

// The string maps of a pod, as paths from the pod; Go decodes a null value in them to "".
const POD_STRING_MAPS = new Set(["metadata.labels", "metadata.annotations", "spec.nodeSelector"]);
const POD_STRING_MAP_PARENTS = new Set(["metadata", "spec"]);
const noStringMaps: ReadonlySet<string> = new Set();

/** A pod as the API server decodes it: null fields absent, null label, annotation and nodeSelector values "". */
export function podWithoutNullFields<T>(pod: T): T {
  return prune(pod, POD_STRING_MAPS, "") as T;
}

// A copy in the manner of cloneJson (what the wire sees: undefined properties dropped,
// undefined items null, no negative zero), without the null properties.
function prune(value: unknown, stringMaps: ReadonlySet<string>, path: string): unknown {
  if (typeof value === "number") return value === 0 ? 0 : value;
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => (item === undefined ? null : prune(item, noStringMaps, "")));
  const emptyForNull = stringMaps.has(path);
  const result: Record<string, unknown> = {};
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    let kept: unknown;
    if (item === undefined) continue;
    if (item === null) {
      if (!emptyForNull) continue;
      kept = "";
    } else {
      // Paths are only followed while they can still lead to a string map (two levels down).
      const childPath = stringMaps.size === 0 ? "" : path === "" ? key : POD_STRING_MAP_PARENTS.has(path) ? `${path}.${key}` : "";
      kept = prune(item, childPath === "" ? noStringMaps : stringMaps, childPath);
    }
    // "__proto__" can be a key of parsed JSON; assigning it would replace the prototype.
    if (key === "__proto__") Object.defineProperty(result, key, { value: kept, enumerable: true, writable: true, configurable: true });
    else result[key] = kept;
  }
  return result;
}
