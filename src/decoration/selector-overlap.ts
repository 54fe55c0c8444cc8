// Whether two label selectors can select the same pod: whether some label set satisfies both.
// Requirements on different keys are independent, so the conjunction of two selectors is
// satisfiable exactly when, for every key, what both ask of that key can hold at once.
// As rendered (DESIGN §10): labels decorations set change a pod's labels between rounds of
// selection, so on a key some decoration sets, one selector may be satisfied by the pod's own
// value and the other by a value written later — or the other way round.
import type { LabelSelector } from "../api/label-selector.ts";
import { addDemands, type KeyDemand, keyDemands, type LabelWrites, satisfiable, satisfiedBy, type WrittenValue } from "./label-writes.ts";
import { isValidSelector } from "./selector.ts";

/**
 * True when some pod's labels satisfy both selectors, or — given `writes`, the labels the
 * namespace's decorations can set — when rendering can bring a pod each of them selects at
 * some round. A missing or invalid selector selects no pod (as `selectorMatches` reads it), so
 * it overlaps nothing; `{}` overlaps every valid one.
 */
export function selectorsOverlap(a: LabelSelector | null | undefined, b: LabelSelector | null | undefined, writes?: LabelWrites): boolean {
  if (!isValidSelector(a) || !isValidSelector(b)) return false;
  const both = new Map<string, KeyDemand>();
  addDemands(both, a!);
  addDemands(both, b!);
  const [alone, other] = writes === undefined ? [undefined, undefined] : [keyDemands(a), keyDemands(b)];
  for (const [key, demand] of both) {
    if (satisfiable(demand)) continue;
    const written = writes?.get(key);
    if (written === undefined || !meetThroughWrites(alone!.get(key), other!.get(key), written)) return false;
  }
  return true;
}

/**
 * One selector satisfied by the pod's own value of the key, the other by a value a decoration
 * writes (a key one of them does not read is satisfied either way).
 */
function meetThroughWrites(a: KeyDemand | undefined, b: KeyDemand | undefined, written: ReadonlySet<WrittenValue>): boolean {
  const holds = (demand: KeyDemand | undefined) => demand === undefined || satisfiable(demand);
  if (!holds(a) || !holds(b)) return false;
  const byWrite = (demand: KeyDemand | undefined) => demand === undefined || [...written].some((value) => satisfiedBy(demand, value));
  return byWrite(a) || byWrite(b);
}
