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
import { decorationKey, isClusterDecoration } from "./decoration-kind.ts";

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
    order = decorationOrder({ name: decorationKey(pd), group: decorationGroup(pd), weight: decorationWeight(pd), creationTimestamp: pd.metadata.creationTimestamp });
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

// Without `exclude` (the hot path) no describing closure is created, and no closure captures a
// loop's variables (the details are written by the functions below): selecting among a
// namespace's decorations allocates nothing for a decoration that does not apply.
function select(pod: Pod, decorations: readonly PodDecoration[], exclude: Exclude | undefined): { apply: PodDecoration[]; warnings: string[] } {
  const namespace = pod.metadata?.namespace ?? DEFAULT_NAMESPACE;
  const labels = labelsAsDecoded(pod.metadata?.labels);
  const recorded = podRevisions(pod);
  const matching: PodDecoration[] = [];
  // Idempotency: recorded decorations, and their groups, are settled on this pod. A recorded
  // decoration's group is known only while it exists in the namespace.
  const recordedNames = recorded.revisions.length === 0 ? undefined : new Set(recorded.revisions.map((entry) => entry.name));
  let settledGroups: Map<string, string> | undefined;
  for (let index = 0; index < decorations.length; index++) {
    const pd = decorations[index]!;
    // A ClusterPodDecoration is given only for the namespaces it selects (the caller's view of the namespace).
    const pdNamespace = pd.metadata.namespace ?? DEFAULT_NAMESPACE;
    if (pdNamespace !== namespace && !isClusterDecoration(pd)) {
      if (exclude !== undefined) exclude(pd, "namespace", inOtherNamespace(pdNamespace, namespace));
      continue;
    }
    if (recordedNames !== undefined) {
      const group = decorationGroup(pd);
      const name = decorationKey(pd);
      if (group !== "" && recordedNames.has(name) && settledGroups?.has(group) !== true) (settledGroups ??= new Map()).set(group, name);
    }
    if (!selectorMatches(pd.spec.selector, labels)) {
      if (exclude !== undefined) exclude(pd, "selector", selectorMismatch(pd.spec.selector));
    } else if (pd.metadata.deletionTimestamp !== undefined) {
      if (exclude !== undefined) exclude(pd, "deleting", beingDeleted(pd.metadata.deletionTimestamp));
    } else {
      matching.push(pd);
    }
  }

  // Exclusivity: within a non-empty group only the highest weight applies (ties all apply).
  let winners: Map<string, GroupWinner> | undefined;
  for (const pd of matching) {
    const group = decorationGroup(pd);
    if (group === "") continue;
    const weight = decorationWeight(pd);
    const best = winners?.get(group);
    if (best === undefined || weight > best.weight) (winners ??= new Map()).set(group, { weight, names: [decorationKey(pd)] });
    else if (weight === best.weight) best.names.push(decorationKey(pd));
  }

  const apply: PodDecoration[] = [];
  for (const pd of matching) {
    const name = decorationKey(pd);
    const group = decorationGroup(pd);
    const winner = group === "" ? undefined : winners?.get(group);
    const settledBy = group === "" ? undefined : settledGroups?.get(group);
    if (recordedNames?.has(name) === true) {
      if (exclude !== undefined) exclude(pd, "already-applied", alreadyRecorded);
    } else if (settledBy !== undefined) {
      if (exclude !== undefined) exclude(pd, "already-applied", groupSettled(group, settledBy));
    } else if (winner !== undefined && decorationWeight(pd) < winner.weight) {
      if (exclude !== undefined) exclude(pd, "group", outweighed(group, decorationWeight(pd), winner));
    } else {
      apply.push(pd);
    }
  }
  return { apply: sortInDecorationOrder(apply, orderOf), warnings: recorded.warnings };
}

interface GroupWinner {
  weight: number;
  names: string[];
}

function inOtherNamespace(pdNamespace: string, namespace: string): () => string {
  return () => `in namespace ${pdNamespace}, the pod is in ${namespace}`;
}

function selectorMismatch(selector: unknown): () => string {
  return () => describeMismatch(selector);
}

function beingDeleted(since: string | undefined): () => string {
  return () => `being deleted since ${since ?? ""}`;
}

const alreadyRecorded = (): string => "the pod already records a revision of it";

function groupSettled(group: string, settledBy: string): () => string {
  return () => `group ${group} is already applied to the pod by ${settledBy}`;
}

function outweighed(group: string, weight: number, winner: GroupWinner): () => string {
  return () => `group ${group}: weight ${weight} loses to weight ${winner.weight} (${winner.names.join(", ")})`;
}
