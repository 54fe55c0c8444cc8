// The order decorations are rendered in (DESIGN §3): group ascending with ungrouped first,
// weight ascending, creation time ascending, name ascending, then kind — a PodDecoration before a
// ClusterPodDecoration of the same name (DESIGN §12). Later ones render on top.
import { isClusterKey, nameOfKey } from "./decoration-kind.ts";

export interface DecorationOrderKey {
  /** The decoration's key (decoration-kind.ts): its name, and its kind. */
  name: string;
  group: string;
  weight: number;
  /** RFC 3339; a missing timestamp (a manifest not yet created) sorts first. */
  creationTimestamp?: string | undefined;
}

/** An order key with its timestamp parsed, ready for comparison. */
export interface DecorationOrder {
  name: string;
  cluster: boolean;
  group: string;
  weight: number;
  created: number;
}

export function decorationOrder(key: DecorationOrderKey): DecorationOrder {
  return { name: nameOfKey(key.name), cluster: isClusterKey(key.name), group: key.group, weight: key.weight, created: timestampMillis(key.creationTimestamp) };
}

export function compareDecorationOrder(a: DecorationOrder, b: DecorationOrder): number {
  return compareStrings(a.group, b.group) || a.weight - b.weight || compareNumbers(a.created, b.created) || compareStrings(a.name, b.name) || Number(a.cluster) - Number(b.cluster);
}

/** A sorted copy of `items`; each item's order is computed once. */
export function sortInDecorationOrder<T>(items: readonly T[], orderOf: (item: T) => DecorationOrder): T[] {
  if (items.length < 2) return [...items];
  const keyed = items.map((item) => ({ item, order: orderOf(item) }));
  // Usually in order already (selection hands rendering its decorations sorted): no sort then.
  let sorted = true;
  for (let index = 1; index < keyed.length && sorted; index++) sorted = compareDecorationOrder(keyed[index - 1]!.order, keyed[index]!.order) <= 0;
  if (!sorted) keyed.sort((a, b) => compareDecorationOrder(a.order, b.order));
  return keyed.map(({ item }) => item);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareNumbers(a: number, b: number): number {
  return a === b ? 0 : a < b ? -1 : 1;
}

// Every pod a decoration renders into sorts it by the same timestamp: each is parsed once.
// Bounded, so that a long-lived webhook seeing decorations come and go cannot grow it without limit.
const parsedTimestamps = new Map<string, number>();
const TIMESTAMPS_KEPT = 4096;

function timestampMillis(timestamp: string | undefined): number {
  if (timestamp === undefined) return Number.NEGATIVE_INFINITY;
  let millis = parsedTimestamps.get(timestamp);
  if (millis === undefined) {
    if (parsedTimestamps.size >= TIMESTAMPS_KEPT) parsedTimestamps.clear();
    const parsed = Date.parse(timestamp);
    millis = Number.isNaN(parsed) ? Number.NEGATIVE_INFINITY : parsed;
    parsedTimestamps.set(timestamp, millis);
  }
  return millis;
}
