// A limit on how deeply an object nests, checked before anything else walks it: copies,
// comparisons, hashes and schema checks all recurse, and an object nested thousands of levels
// deep (which the API server stores, inside fields it preserves unknown) would overflow the
// stack instead of getting a reason. No Kubernetes object comes near the limit.
import { childPath, type FieldError, indexPath } from "./field-errors.ts";

export const MAX_NESTING_DEPTH = 100;

/** The error for the first place `value` nests deeper than the limit, if there is one. */
export function nestingErrors(value: unknown, basePath: string, limit = MAX_NESTING_DEPTH): FieldError[] {
  interface Frame {
    value: unknown;
    depth: number;
    parent: Frame | undefined;
    segment: string | number | undefined;
  }
  // Iterative on purpose: this is the one walk that must not recurse.
  const stack: Frame[] = [{ value, depth: 0, parent: undefined, segment: undefined }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const current = frame.value;
    if (typeof current !== "object" || current === null) continue;
    if (frame.depth >= limit) return [{ path: pathOf(frame, basePath), reason: `Invalid value: nests deeper than ${limit} levels` }];
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) stack.push({ value: current[index], depth: frame.depth + 1, parent: frame, segment: index });
    } else {
      for (const [key, child] of Object.entries(current)) stack.push({ value: child, depth: frame.depth + 1, parent: frame, segment: key });
    }
  }
  return [];

  function pathOf(frame: Frame, base: string): string {
    const segments: (string | number)[] = [];
    for (let at: Frame | undefined = frame; at?.segment !== undefined; at = at.parent) segments.push(at.segment);
    // The first levels say where the nesting is; a hundred more `.a` say nothing.
    const shown = segments.reverse().slice(0, 12);
    const path = shown.reduce<string>((built, segment) => (typeof segment === "number" ? indexPath(built, segment) : childPath(built, segment)), base);
    return segments.length > shown.length ? `${path}...` : path;
  }
}
