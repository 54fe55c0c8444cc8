// The one place a before/after pair becomes the JSON Patch (RFC 6902) a mutating webhook
// returns. The patch names only what changed: an element inserted into a list is an `add` at
// its index, not a rewrite of every element after it. That keeps the answer small for a large
// pod, and it keeps every value the decorations did not change out of the patch, so the API
// server keeps it exactly as it was sent (a value is never re-serialised, e.g. an int64 that
// JavaScript numbers cannot hold).
//
// Lists are aligned by what identifies their elements: `name` (containers, volumes, env),
// `mountPath` (volume mounts), else the element's whole value. A list whose elements cannot be
// told apart that way, or whose surviving elements changed order, is replaced as a whole. A
// part both sides share (the same object, as a rendered pod shares what rendering left alone
// with the pod) is equal and not walked.

import { pointerSegment } from "../api/json-pointer.ts";

export type JsonPatchOperation =
  | { op: "add"; path: string; value: unknown }
  | { op: "replace"; path: string; value: unknown }
  | { op: "remove"; path: string };

export type JsonPatch = JsonPatchOperation[];

type Json = unknown;

export function createJsonPatch(before: unknown, after: unknown): JsonPatch {
  const operations: JsonPatch = [];
  diffValue(wire(before ?? {}), wire(after ?? {}), ROOT, operations);
  return operations;
}

/** A JSON pointer, built as the walk goes down: only what is not shared is walked. */
type Path = string;

const ROOT: Path = "";

function child(parent: Path, segment: string | number): Path {
  return `${parent}/${escape(segment)}`;
}

function escape(segment: string | number): string {
  return typeof segment === "number" ? String(segment) : pointerSegment(segment);
}

/** What the wire carries in place of a value: `undefined` list items become null. */
function wire(value: Json): Json {
  return value === undefined ? null : value;
}

function isObject(value: Json): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A value for the patch. Not a copy: the patch shares the `after` value's parts, and is meant
 * to be serialised (JSON.stringify writes an `undefined` item as null and leaves an `undefined`
 * property out, as the wire does); deep-copying every added value was a tenth of the pod
 * webhook's work.
 */
function copy(value: Json): Json {
  return wire(value);
}

function diffValue(before: Json, after: Json, path: Path, operations: JsonPatch): void {
  if (before === after) return;
  if (isObject(before) && isObject(after)) diffObject(before, after, path, operations);
  else if (Array.isArray(before) && Array.isArray(after)) diffList(before, after, path, operations);
  else if (!sameJson(before, after)) operations.push({ op: "replace", path: path, value: copy(after) });
}

function diffObject(before: Record<string, Json>, after: Record<string, Json>, path: Path, operations: JsonPatch): void {
  for (const key in before) {
    if (before[key] !== undefined && (!Object.hasOwn(after, key) || after[key] === undefined)) operations.push({ op: "remove", path: child(path, key) });
  }
  for (const key in after) {
    const value = after[key];
    if (value === undefined) continue;
    const previous = before[key];
    if (previous === value) continue;
    if (!Object.hasOwn(before, key) || previous === undefined) operations.push({ op: "add", path: child(path, key), value: copy(value) });
    else diffValue(previous, value, child(path, key), operations);
  }
}

type Identify = (element: Json) => string | undefined;

const keyedBy = (field: string): Identify => (element) => (isObject(element) && typeof element[field] === "string" ? element[field] : undefined);
const byValue: Identify = (element) => JSON.stringify(wire(element));
const IDENTITIES = [keyedBy("name"), keyedBy("mountPath"), byValue] as const;

function diffList(before: readonly Json[], after: readonly Json[], path: Path, operations: JsonPatch): void {
  for (const identify of IDENTITIES) {
    const oldIds = before.map(identify);
    const newIds = after.map(identify);
    if (oldIds.includes(undefined) || newIds.includes(undefined)) continue;
    // The common case, cheaply: the same elements in the same places, some appended or removed at the end.
    const common = Math.min(oldIds.length, newIds.length);
    let same = 0;
    while (same < common && oldIds[same] === newIds[same]) same++;
    if (same === common) {
      for (let index = 0; index < common; index++) if (before[index] !== after[index]) diffValue(before[index], after[index], child(path, index), operations);
      for (let index = before.length - 1; index >= common; index--) operations.push({ op: "remove", path: child(path, index) });
      for (let index = common; index < after.length; index++) operations.push({ op: "add", path: child(path, index), value: copy(after[index]) });
      return;
    }
    const aligned = alignedOperations(before, after, oldIds as string[], newIds as string[], path);
    if (aligned === "ambiguous") continue;
    if (aligned !== "reordered") {
      operations.push(...aligned);
      return;
    }
    break;
  }
  if (!sameJson(before, after)) operations.push({ op: "replace", path: path, value: copy(after) });
}

/**
 * Removes what is gone, adds what is new, and diffs what stayed, in one pass: indexes are those
 * of the list as the operations before have left it. "ambiguous" when an identity repeats,
 * "reordered" when survivors changed order.
 */
function alignedOperations(before: readonly Json[], after: readonly Json[], oldIds: readonly string[], newIds: readonly string[], path: Path): JsonPatch | "ambiguous" | "reordered" {
  const kept = new Set(newIds);
  const existed = new Set(oldIds);
  if (kept.size !== newIds.length || existed.size !== oldIds.length) return "ambiguous";
  const operations: JsonPatch = [];
  let cursor = 0;
  let index = 0;
  for (const [position, id] of newIds.entries()) {
    while (cursor < oldIds.length && !kept.has(oldIds[cursor]!)) {
      operations.push({ op: "remove", path: child(path, index) });
      cursor++;
    }
    if (cursor < oldIds.length && oldIds[cursor] === id) {
      diffValue(before[cursor], after[position], child(path, index), operations);
      cursor++;
    } else if (existed.has(id)) {
      return "reordered";
    } else {
      operations.push({ op: "add", path: child(path, index), value: copy(after[position]) });
    }
    index++;
  }
  for (; cursor < oldIds.length; cursor++) operations.push({ op: "remove", path: child(path, index) });
  return operations;
}

function sameJson(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
