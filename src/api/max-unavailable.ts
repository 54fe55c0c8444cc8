// `maxUnavailable` (Kubernetes' IntOrString: a count, or a percentage of a workload's pods), the
// one reading of it for CollaSets and for decoration rollouts to pods of other owners.
import { type FieldError, invalidError } from "./field-errors.ts";

export function validateMaxUnavailable(value: number | string, path: string): FieldError[] {
  if (typeof value === "number") return value >= 1 ? [] : [invalidError(path, value, "must be greater than or equal to 1")];
  const match = /^(\d+)%$/.exec(value);
  if (match === null) return [invalidError(path, value, "a string must be a percentage like '25%'")];
  const percent = Number(match[1]);
  if (percent < 1 || percent > 100) return [invalidError(path, value, "must be between 1% and 100%")];
  return [];
}

/** An integer, or a percentage of `pods` rounded down; at least 1 so an update can progress. */
export function resolveMaxUnavailable(value: number | string | undefined, pods: number): number {
  if (value === undefined) return 1;
  if (typeof value === "number") return Math.max(1, Math.floor(value));
  const percent = /^(\d+)%$/.exec(value);
  if (percent === null) return 1;
  return Math.max(1, Math.floor((pods * Number(percent[1])) / 100));
}
