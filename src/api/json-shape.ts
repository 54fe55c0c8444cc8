// Reading fields the schemas keep as they are (a container's probes, a volume's source, an
// affinity term) without trusting their shape: a value of the wrong type reads as absent,
// and the rule that reads it says what it expected.

export type JsonRecord = Record<string, unknown>;

export function asRecord(value: unknown): JsonRecord | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

export function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function isInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value);
}

/** Set, and not null (a null field is an absent one). */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}
