// Which of a namespace's decorations apply to a pod, in which order, and why the others do
// not (DESIGN §3): namespace, selector and deletion first; then exclusivity within groups,
// decided over every matching decoration; then idempotency, which skips every decoration the
// pod already records and every other member of its group.
import { podWithoutNullFields } from "../api/null-fields.ts";
import type { Pod } from "../api/pod.ts";
import { decorationGroup, decorationWeight, type PodDecoration } from "../api/poddecoration.ts";
import { type DecorationOrder, decorationOrder, sortInDecorationOrder } from "./order.ts";
import { podRevisions } from "./recording.ts";
import { selectorMatches } from "./selector.ts";

export type ExclusionReason = "namespace" | "selector" | "deleting" | "group" | "already-applied";

export interface Exclusion {
  decoration: PodDecoration;
  reason: ExclusionReason;
  /** One sentence for people (`explain`, warnings). */
  detail: string;
}

export interface Selection {
  /** The decorations to render, in rendering order. */
  apply: PodDecoration[];
  /** Every other decoration given, with why it does not apply, in rendering order. */
  excluded: Exclusion[];
  /** Problems with the pod's revisions annotation. */
  warnings: string[];
}

function describeMismatch(selector: unknown): string {
  return selector == null ? "no selector: a decoration without one selects no pod" : `selector ${JSON.stringify(selector)} does not match the pod's labels`;
}

/** A pod's labels as the API server decodes them: a null value is the empty string. Copies only when it must. */
function labelsAsDecoded(labels: Record<string, string> | null | undefined): Record<string, string> {
  if (labels == null) return {};
  for (const key in labels) if ((labels[key] as string | null) === null) return podWithoutNullFields({ metadata: { labels } }).metadata.labels;
  return labels;
}

/** Objects without `metadata.namespace` (offline manifests) are in `default`, as kubectl would put them. */
export const DEFAULT_NAMESPACE = "default";

// Decorations from caches are immutable, so their parsed order is computed once per object.
const orders = new WeakMap<PodDecoration, DecorationOrder>();

export function orderOf(pd: PodDecoration): DecorationOrder {
  let order = orders.get(pd);
  if (order === undefined) {
    order = decorationOrder({ name: pd.metadata.name ?? "", group: decorationGroup(pd), weight: decorationWeight(pd), creationTimestamp: pd.metadata.creationTimestamp });
    orders.set(pd, order);
  }
  return order;
}

export function selectDecorations(pod: Pod, decorations: readonly PodDecoration[]): Selection {
  const excluded: Exclusion[] = [];
  const { apply, warnings } = select(pod, decorations, (decoration, reason, describe) => excluded.push(exclusion(decoration, reason, describe)));
  return { apply, excluded: sortInDecorationOrder(excluded, (exclusion) => orderOf(exclusion.decoration)), warnings };
}

type Exclude = (decoration: PodDecoration, reason: ExclusionReason, describe: () => string) => void;

// The detail is written on first read: admission never reads it, and describing 45
// non-matching selectors for every pod would cost more than selecting.
function exclusion(decoration: PodDecoration, reason: ExclusionReason, describe: () => string): Exclusion {
  let detail: string | undefined;
  return {
    decoration,
    reason,
    get detail() {
      return (detail ??= describe());
    },
  };
}

/** Selection without the exclusions: the webhook's hot path. */
export function selectApplicable(pod: Pod, decorations: readonly PodDecoration[]): Omit<Selection, "excluded"> {
  return select(pod, decorations, undefined);
}

// Without `exclude` (the hot path), `exclude?.(…)` does not even create the describing closures.
function select(pod: Pod, decorations: readonly PodDecoration[], exclude: Exclude | undefined): { apply: PodDecoration[]; warnings: string[] } {
  const namespace = pod.metadata?.namespace ?? DEFAULT_NAMESPACE;
  const labels = labelsAsDecoded(pod.metadata?.labels);
  const sameNamespace: PodDecoration[] = [];
  const matching: PodDecoration[] = [];
  for (const pd of decorations) {
    const pdNamespace = pd.metadata.namespace ?? DEFAULT_NAMESPACE;
    if (pdNamespace !== namespace) {
      exclude?.(pd, "namespace", () => `in namespace ${pdNamespace}, the pod is in ${namespace}`);
      continue;
    }
    sameNamespace.push(pd);
    if (!selectorMatches(pd.spec.selector, labels)) exclude?.(pd, "selector", () => describeMismatch(pd.spec.selector));
    else if (pd.metadata.deletionTimestamp !== undefined) exclude?.(pd, "deleting", () => `being deleted since ${pd.metadata.deletionTimestamp ?? ""}`);
    else matching.push(pd);
  }

  // Exclusivity: within a non-empty group only the highest weight applies (ties all apply).
  const winners = new Map<string, { weight: number; names: string[] }>();
  for (const pd of matching) {
    const group = decorationGroup(pd);
    if (group === "") continue;
    const weight = decorationWeight(pd);
    const best = winners.get(group);
    if (best === undefined || weight > best.weight) winners.set(group, { weight, names: [pd.metadata.name ?? ""] });
    else if (weight === best.weight) best.names.push(pd.metadata.name ?? "");
  }

  // Idempotency: recorded decorations, and their groups, are settled on this pod. A recorded
  // decoration's group is known only while it exists in the namespace.
  const recorded = podRevisions(pod);
  const recordedNames = new Set(recorded.revisions.map((entry) => entry.name));
  const settledGroups = new Map<string, string>();
  if (recordedNames.size > 0) {
    for (const pd of sameNamespace) {
      const group = decorationGroup(pd);
      const name = pd.metadata.name ?? "";
      if (group !== "" && recordedNames.has(name) && !settledGroups.has(group)) settledGroups.set(group, name);
    }
  }

  const apply: PodDecoration[] = [];
  for (const pd of matching) {
    const name = pd.metadata.name ?? "";
    const group = decorationGroup(pd);
    const winner = group === "" ? undefined : winners.get(group);
    if (recordedNames.has(name)) {
      exclude?.(pd, "already-applied", () => "the pod already records a revision of it");
    } else if (settledGroups.has(group)) {
      exclude?.(pd, "already-applied", () => `group ${group} is already applied to the pod by ${settledGroups.get(group) ?? ""}`);
    } else if (winner !== undefined && decorationWeight(pd) < winner.weight) {
      exclude?.(pd, "group", () => `group ${group}: weight ${decorationWeight(pd)} loses to weight ${winner.weight} (${winner.names.join(", ")})`);
    } else {
      apply.push(pd);
    }
  }
  return { apply: sortInDecorationOrder(apply, orderOf), warnings: recorded.warnings };
}
