// The one normalisation at the client boundary: @kubernetes/client-node hands back class
// instances with Date timestamps (and items without kind/apiVersion), watch streams hand back
// raw JSON. Everything past src/kube sees only the raw-JSON shape, so objects compare, hash
// and patch the same whichever way they arrived.
import { V1MicroTime } from "@kubernetes/client-node";
import { formatTime } from "./timestamps.ts";

/** A client-node model type as it looks on the wire: Dates become RFC 3339 strings. */
export type Plain<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Plain<U>[]
    : T extends object
      ? { [K in keyof T]: Plain<T[K]> }
      : T;

interface AttributeType {
  name: string;
  baseName: string;
}

interface ModelClass {
  getAttributeTypeMap(): readonly AttributeType[];
}

function modelClassOf(value: object): ModelClass | undefined {
  const constructor = (value as { constructor?: unknown }).constructor;
  if (typeof constructor !== "function" || constructor === Object) return undefined;
  const candidate = constructor as unknown as Partial<ModelClass>;
  return typeof candidate.getAttributeTypeMap === "function" ? (candidate as ModelClass) : undefined;
}

function plainValue(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  // MicroTime fields keep their six fractional digits; metav1.Time is whole seconds.
  if (value instanceof V1MicroTime) return value.toISOString();
  if (value instanceof Date) return formatTime(value.getTime());
  if (Array.isArray(value)) return value.map(plainValue);
  const source = value as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  // Generated models rename a few wire fields (`_continue`, `$ref`, …); the map restores them.
  const renames = new Map<string, string>();
  for (const attribute of modelClassOf(value)?.getAttributeTypeMap() ?? []) renames.set(attribute.name, attribute.baseName);
  for (const [key, field] of Object.entries(source)) {
    if (field === undefined) continue;
    result[renames.get(key) ?? key] = plainValue(field);
  }
  return result;
}

/** Deep copy into plain JSON: no class instances, no Dates, no undefined properties. */
export function toPlain<T>(value: T): Plain<T> {
  return plainValue(value) as Plain<T>;
}

/** List items come without kind/apiVersion; give them back what a watch event would carry. */
export function listItems<T>(list: { items: readonly T[] }, apiVersion: string, kind: string): (Plain<T> & { apiVersion: string; kind: string })[] {
  return list.items.map((item) => ({ ...toPlain(item), apiVersion, kind }));
}

/**
 * Hands a plain object to a generated client method typed with Dates. Safe because the
 * generated serializer passes string timestamps through unchanged.
 */
export function toWire<T>(value: Plain<T>): T {
  return value as unknown as T;
}
