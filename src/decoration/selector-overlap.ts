// Whether two label selectors can select the same pod: whether some label set satisfies both.
// Requirements on different keys are independent, so the conjunction of two selectors is
// satisfiable exactly when, for every key, what both ask of that key can hold at once.
import type { LabelSelector } from "../api/label-selector.ts";
import { isValidSelector } from "./selector.ts";

/** What the requirements of both selectors ask of one label key, together. */
interface KeyDemand {
  /** The key must be present (matchLabels, In, Exists). */
  present: boolean;
  /** The key must be absent (DoesNotExist). */
  absent: boolean;
  /** The values it may have: the intersection of matchLabels and every In; undefined for any. */
  allowed: Set<string> | undefined;
  /** The values it may not have (NotIn). */
  forbidden: Set<string>;
}

/**
 * True when some pod's labels satisfy both selectors. A missing or invalid selector selects no
 * pod (as `selectorMatches` reads it), so it overlaps nothing; `{}` overlaps every valid one.
 */
export function selectorsOverlap(a: LabelSelector | null | undefined, b: LabelSelector | null | undefined): boolean {
  if (!isValidSelector(a) || !isValidSelector(b)) return false;
  const demands = new Map<string, KeyDemand>();
  const demandOf = (key: string): KeyDemand => {
    let demand = demands.get(key);
    if (demand === undefined) demands.set(key, (demand = { present: false, absent: false, allowed: undefined, forbidden: new Set() }));
    return demand;
  };
  for (const selector of [a, b] as LabelSelector[]) {
    for (const [key, value] of Object.entries(selector.matchLabels ?? {})) allow(demandOf(key), [value]);
    for (const requirement of selector.matchExpressions ?? []) {
      const demand = demandOf(requirement.key);
      switch (requirement.operator) {
        case "In":
          allow(demand, requirement.values ?? []);
          break;
        case "NotIn":
          for (const value of requirement.values ?? []) demand.forbidden.add(value);
          break;
        case "Exists":
          demand.present = true;
          break;
        case "DoesNotExist":
          demand.absent = true;
          break;
      }
    }
  }
  for (const demand of demands.values()) if (!satisfiable(demand)) return false;
  return true;
}

function allow(demand: KeyDemand, values: readonly string[]): void {
  demand.present = true;
  const previous = demand.allowed;
  demand.allowed = previous === undefined ? new Set(values) : new Set(values.filter((value) => previous.has(value)));
}

function satisfiable(demand: KeyDemand): boolean {
  if (demand.absent) return !demand.present;
  // Absent satisfies NotIn alone; present with no listed values leaves infinitely many others.
  if (demand.allowed === undefined) return true;
  for (const value of demand.allowed) if (!demand.forbidden.has(value)) return true;
  return false;
}
