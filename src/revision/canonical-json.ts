// The one serialisation revision hashes are computed from. Object keys are sorted at every
// level, so the same content hashes the same in any process on any machine no matter how it
// was built or parsed; anything that is not plain JSON is refused rather than guessed at.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Canonical JSON text: sorted keys, no whitespace, `undefined` properties omitted. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalize(value, "$"));
}

function canonicalize(value: unknown, path: string): JsonValue {
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`${path}: ${value} has no JSON representation`);
    return value;
  }
  if (Array.isArray(value)) return value.map((item, index) => (item === undefined ? null : canonicalize(item, `${path}[${index}]`)));
  if (typeof value === "object") {
    const prototype = Object.getPrototypeOf(value) as unknown;
    // A Date or a client-library model object would hash differently from the same data read as JSON.
    if (prototype !== Object.prototype && prototype !== null) throw new TypeError(`${path}: only plain JSON can be hashed, got ${value.constructor.name}`);
    const result: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value).sort()) {
      const child = (value as Record<string, unknown>)[key];
      if (child !== undefined) result[key] = canonicalize(child, `${path}.${key}`);
    }
    return result;
  }
  throw new TypeError(`${path}: ${typeof value} has no JSON representation`);
}
