// `null` read the way the API server reads it (DESIGN §10): an optional field set to null is
// the field left out. For our own kinds the API server prunes such nulls before defaulting
// (apiextensions-apiserver's PruneNonNullableNullsWithoutDefaults), map entries included; for
// pods it decodes JSON into Go structs, where null is the zero value — absent for objects,
// lists and pointers, "" for a string in a map (`labels: {app: }` in YAML is the label
// `app: ""`). Reading every input through these functions once, at the boundary, means no
// validator or renderer downstream ever has to tell null from absent.
import { cloneJson } from "./json.ts";

/**
 * A copy of JSON data (as `cloneJson` makes it) without the object properties whose value is
 * null, at any depth. Array items are kept: a null list item is not an absent field, and
 * validation says what is wrong with it.
 */
export function withoutNullFields<T>(value: T): T {
  return cloneJson(prune(value, noStringMaps, "") as T);
}

// The string maps of a pod, as paths from the pod; Go decodes a null value in them to "".
const POD_STRING_MAPS = new Set(["metadata.labels", "metadata.annotations", "spec.nodeSelector"]);
const POD_STRING_MAP_PARENTS = new Set(["metadata", "spec"]);
const noStringMaps: ReadonlySet<string> = new Set();

/**
 * A pod as the API server decodes it: null fields absent, null label, annotation and
 * nodeSelector values "". Not a copy: every object and list that holds no null (nor an
 * `undefined`, which the wire leaves out) is the pod's own, so the pod webhook's patch can tell
 * what rendering changed by identity; only the objects on the way to a null are new.
 */
export function podWithoutNullFields<T>(pod: T): T {
  return prune(pod, POD_STRING_MAPS, "") as T;
}

// `value` itself when nothing under it changes, else a new object or list along the changed
// paths (undefined properties dropped and undefined items null, as the wire sees them).
function prune(value: unknown, stringMaps: ReadonlySet<string>, path: string): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let result: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const kept = item === undefined ? null : prune(item, noStringMaps, "");
      if (result === undefined && kept !== item) result = value.slice(0, index);
      result?.push(kept);
    }
    return result ?? value;
  }
  const object = value as Record<string, unknown>;
  const emptyForNull = stringMaps.has(path);
  let result: Record<string, unknown> | undefined;
  for (const key in object) {
    const item = object[key];
    let kept: unknown;
    if (item === undefined || (item === null && !emptyForNull)) {
      kept = DROPPED;
    } else if (item === null) {
      kept = "";
    } else {
      // Paths are only followed while they can still lead to a string map (two levels down).
      const childPath = stringMaps.size === 0 ? "" : path === "" ? key : POD_STRING_MAP_PARENTS.has(path) ? `${path}.${key}` : "";
      kept = prune(item, childPath === "" ? noStringMaps : stringMaps, childPath);
    }
    if (result === undefined && kept !== item) result = entriesBefore(object, key);
    if (result !== undefined && kept !== DROPPED) setOwn(result, key, kept);
  }
  return result ?? value;
}

const DROPPED = Symbol("dropped");

/** A new object with the properties of `object` that come before `key` (kept as they are). */
function entriesBefore(object: Record<string, unknown>, key: string): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const earlier in object) {
    if (earlier === key) break;
    setOwn(result, earlier, object[earlier]);
  }
  return result;
}

function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  // "__proto__" can be a key of parsed JSON; assigning it would replace the prototype.
  if (key === "__proto__") Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}
