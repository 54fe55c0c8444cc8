// A limit on how deeply an object nests, checked before anything else walks it: copies,
// comparisons, hashes and schema checks all recurse, and an object nested thousands of levels
// deep (which the API server stores, inside fields it preserves unknown) would overflow the
// stack instead of getting a reason. No Kubernetes object comes near the limit.
import { childPath, type FieldError, indexPath } from "./field-errors.ts";

export const MAX_NESTING_DEPTH = 100;

/** The error for the first place `value` nests deeper than the limit, if there is one. */
export function nestingErrors(value: unknown, basePath: string, limit = MAX_NESTING_DEPTH): FieldError[] {
  if (!nestsDeeperThan(value, limit)) return [];
  const segments: (string | number)[] = [];
  findTooDeep(value, 0, limit, segments);
  // The first levels say where the nesting is; a hundred more `.a` say nothing.
  const shown = segments.slice(0, 12);
  const path = shown.reduce<string>((built, segment) => (typeof segment === "number" ? indexPath(built, segment) : childPath(built, segment)), basePath);
  return [{ path: segments.length > shown.length ? `${path}...` : path, reason: `Invalid value: nests deeper than ${limit} levels` }];
}

// Every pod the webhook admits is walked: iterative (this is the walk that must not recurse)
// and allocation-light, only containers are pushed.
function nestsDeeperThan(root: unknown, limit: number): boolean {
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (depth >= limit) return true;
    if (Array.isArray(value)) {
      for (const item of value as unknown[]) {
        if (typeof item === "object" && item !== null) {
          values.push(item);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in value) {
        const item = (value as Record<string, unknown>)[key];
        if (typeof item === "object" && item !== null) {
          values.push(item);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/** The path, in document order, to the first container at depth `limit`; recurses at most `limit` deep. */
function findTooDeep(value: unknown, depth: number, limit: number, segments: (string | number)[]): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (depth >= limit) return true;
  const children: [string | number, unknown][] = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
  for (const [segment, child] of children) {
    segments.push(segment);
    if (findTooDeep(child, depth + 1, limit, segments)) return true;
    segments.pop();
  }
  return false;
}
