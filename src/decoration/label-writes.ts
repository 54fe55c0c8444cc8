// The labels decorations can put on a pod, and what that can do to selectors (DESIGN §3, §10):
// labels decide selection, so a decoration's labels can make another select a pod (a chain:
// selection-chains.ts) and can make two selectors meet on one pod that no pod's own labels
// satisfy both of (out-ranking as rendered: selector-overlap.ts). Pure.
import type { LabelSelector } from "../api/label-selector.ts";
import type { MetadataPatch, PodDecoration } from "../api/poddecoration.ts";
import { decorationLabelKey } from "./recording.ts";
import { decorationKey } from "./decoration-kind.ts";
import { isValidSelector } from "./selector.ts";

/** A label value a decoration sets, or ANY_VALUE for one not known in advance (a revision's name). */
export const ANY_VALUE = Symbol("any label value");
export type WrittenValue = string | typeof ANY_VALUE;

/** Label key → the values decorations may set it to. */
export type LabelWrites = ReadonlyMap<string, ReadonlySet<WrittenValue>>;

/**
 * The labels rendering `decoration` sets on a pod it applies to: its template's labels (under
 * Retain and Overwrite; MergePatchJson renders no labels) and the label recording its revision.
 */
export function labelsSetBy(decoration: PodDecoration): [string, WrittenValue][] {
  const set: [string, WrittenValue][] = [];
  const patches = decoration.spec.template?.metadata;
  if (Array.isArray(patches)) {
    for (const patch of patches as readonly (MetadataPatch | null)[]) {
      if (typeof patch !== "object" || patch === null || patch.patchPolicy === "MergePatchJson") continue;
      for (const [key, value] of Object.entries(patch.labels ?? {})) if (typeof value === "string") set.push([key, value]);
    }
  }
  set.push([decorationLabelKey(decorationKey(decoration)), ANY_VALUE]);
  return set;
}

/** Every label the decorations can set, with its values. */
export function labelWrites(decorations: readonly PodDecoration[]): LabelWrites {
  const writes = new Map<string, Set<WrittenValue>>();
  for (const decoration of decorations) {
    if (decoration.metadata.deletionTimestamp != null) continue;
    for (const [key, value] of labelsSetBy(decoration)) {
      let values = writes.get(key);
      if (values === undefined) writes.set(key, (values = new Set()));
      values.add(value);
    }
  }
  return writes;
}

/** What one selector asks of one label key. */
export interface KeyDemand {
  /** The key must be present (matchLabels, In, Exists). */
  present: boolean;
  /** The key must be absent (DoesNotExist). */
  absent: boolean;
  /** The values it may have: the intersection of matchLabels and every In; undefined for any. */
  allowed: Set<string> | undefined;
  /** The values it may not have (NotIn). */
  forbidden: Set<string>;
}

/** What a valid selector asks of each key it reads (an invalid or missing one selects nothing: undefined). */
export function keyDemands(selector: LabelSelector | null | undefined): Map<string, KeyDemand> | undefined {
  if (!isValidSelector(selector)) return undefined;
  const demands = new Map<string, KeyDemand>();
  addDemands(demands, selector!);
  return demands;
}

/** Adds what `selector` asks to `demands` (the conjunction, key by key). */
export function addDemands(demands: Map<string, KeyDemand>, selector: LabelSelector): void {
  const demandOf = (key: string): KeyDemand => {
    let demand = demands.get(key);
    if (demand === undefined) demands.set(key, (demand = { present: false, absent: false, allowed: undefined, forbidden: new Set() }));
    return demand;
  };
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

function allow(demand: KeyDemand, values: readonly string[]): void {
  demand.present = true;
  const previous = demand.allowed;
  demand.allowed = previous === undefined ? new Set(values) : new Set(values.filter((value) => previous.has(value)));
}

/** Whether some label value (or its absence) satisfies the demand. */
export function satisfiable(demand: KeyDemand): boolean {
  if (demand.absent) return !demand.present;
  // Absent satisfies NotIn alone; present with no listed values leaves infinitely many others.
  if (demand.allowed === undefined) return true;
  for (const value of demand.allowed) if (!demand.forbidden.has(value)) return true;
  return false;
}

/** Whether the key set to `value` satisfies the demand (ANY_VALUE: to some value). */
export function satisfiedBy(demand: KeyDemand, value: WrittenValue): boolean {
  if (demand.absent) return false;
  if (value === ANY_VALUE) return satisfiable({ ...demand, present: true });
  return (demand.allowed === undefined || demand.allowed.has(value)) && !demand.forbidden.has(value);
}

/** Whether the key set to `value` makes the demand fail (ANY_VALUE: to some value it may take). */
export function brokenBy(demand: KeyDemand, value: WrittenValue): boolean {
  if (demand.absent) return true;
  // A value not known in advance breaks whatever asks for more than the key's presence.
  if (value === ANY_VALUE) return demand.allowed !== undefined || demand.forbidden.size > 0;
  return (demand.allowed !== undefined && !demand.allowed.has(value)) || demand.forbidden.has(value);
}
