// Which decoration revisions each pod of a CollaSet should carry (DESIGN §5): every decoration
// of the namespace plans its own rollout over all the pods it matches (bare and Deployment
// pods included, as its status counts them), and the CollaSet's slots take their share. Then
// exclusivity: within a group only the highest weight among the decorations with a target.
// A pod to create has only its template's labels: the labels its decorations set select
// further decorations, as the engine selects them (DESIGN §3 chains), within the same rounds.
// Pure: the controller feeds it cached objects.
import { decorationGroup, decorationWeight, type PodDecoration } from "../api/poddecoration.ts";
import type { Labels } from "../api/label-selector.ts";
import { isMatchedPod, isPodReady, planRollout, type PodLike, type RolloutPod } from "../decoration/rollout.ts";
import { selectorMatches } from "../decoration/selector.ts";
import { DEFAULT_MAX_SELECTION_ROUNDS } from "../decoration/engine-bounds.ts";
import { renderMetadata } from "../decoration/parts/metadata.ts";
import { decorationLabelKey } from "../decoration/recording.ts";
import { orderOf } from "../decoration/selection.ts";
import { sortInDecorationOrder } from "../decoration/order.ts";
import { decorationKey, isClusterDecoration } from "../decoration/decoration-kind.ts";

/** A place for one pod of the CollaSet: a live pod, one being replaced, or one to create. */
export interface Slot {
  /** Unique among the slots and the namespace's pods: the pod name, or a placeholder for a new pod. */
  name: string;
  labels: Labels;
  ready: boolean;
  /** Decoration name → revision the slot's pod records now (empty for a new pod). */
  current: ReadonlyMap<string, string>;
  /** A pod to create (the new-pod policy decides where it stands in a partition). */
  isNew?: boolean;
}

export interface DecorationTargetsInput<P extends PodLike> {
  namespace: string;
  decorations: readonly PodDecoration[];
  /** The decoration's updated revision, or undefined when it cannot be resolved (its pods then keep what they have). */
  updatedRevision: (decoration: PodDecoration) => string | undefined;
  /** For a decoration, the other pods of the namespace it may match (not the slots' own), with what they record. */
  otherPods: (decoration: PodDecoration) => readonly P[];
  recorded: (pod: P) => ReadonlyMap<string, string> | null;
  slots: readonly Slot[];
  /** Rounds of selection a new pod's labels are given (DESIGN §10); the engine's default when absent. */
  maxSelectionRounds?: number;
  /**
   * Whether a decoration selects a pod (default isMatchedPod: in its namespace). A
   * ClusterPodDecoration's rollout plans over its pods of every namespace it selects (DESIGN §12),
   * which `otherPods` then gives.
   */
  matched?: (decoration: PodDecoration, pod: P) => boolean;
  /** A namespace's labels, for a ClusterPodDecoration's namespace canary. */
  namespaceLabels?: (namespace: string) => Labels | undefined;
  /**
   * Whether a decoration a slot's pod records that is not among `decorations` stays as it is: a
   * ClusterPodDecoration whose namespaceSelector no longer selects the namespace (DESIGN §12,
   * labelled out: existing pods keep what they have).
   */
  keeps?: (key: string) => boolean;
}

/** Slot name → decoration name → target revision. Decorations a slot should not carry are absent. */
export function decorationTargets<P extends PodLike>(input: DecorationTargetsInput<P>): Map<string, Map<string, string>> {
  let slots = input.slots;
  let targets = targetsOf(input, slots);
  const rounds = input.maxSelectionRounds ?? DEFAULT_MAX_SELECTION_ROUNDS;
  for (let round = 1; round < rounds; round++) {
    let relabelled = false;
    slots = slots.map((slot, index) => {
      if (slot.isNew !== true) return slot;
      const labels = labelsRendered(input.slots[index]!.labels, targets.get(slot.name), input.decorations);
      if (sameLabels(labels, slot.labels)) return slot;
      relabelled = true;
      return { ...slot, labels };
    });
    if (!relabelled) break;
    targets = targetsOf(input, slots);
  }
  return targets;
}

/** A new pod's labels once its target decorations are rendered: their metadata labels and revision labels, in rendering order. */
function labelsRendered(labels: Labels, targets: ReadonlyMap<string, string> | undefined, decorations: readonly PodDecoration[]): Labels {
  if (targets === undefined || targets.size === 0) return labels;
  const metadata: { labels?: Record<string, string> } = { labels: { ...labels } };
  const chosen = sortInDecorationOrder(decorations.filter((decoration) => targets.has(decorationKey(decoration))), orderOf);
  for (const decoration of chosen) {
    renderMetadata(metadata, (decoration.spec.template?.metadata ?? []).filter((patch) => patch.patchPolicy !== "MergePatchJson"), () => undefined);
  }
  for (const [name, revision] of targets) metadata.labels![decorationLabelKey(name)] = revision;
  return metadata.labels!;
}

function sameLabels(a: Labels, b: Labels): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

function targetsOf<P extends PodLike>(input: DecorationTargetsInput<P>, slots: readonly Slot[]): Map<string, Map<string, string>> {
  const candidates = new Map<string, { decoration: PodDecoration; revision: string }[]>(slots.map((slot) => [slot.name, []]));
  for (const decoration of input.decorations) {
    if ((decoration.metadata.namespace ?? "") !== input.namespace || decoration.metadata.deletionTimestamp != null) continue;
    const name = decorationKey(decoration);
    const selected = slots.filter((slot) => selectorMatches(decoration.spec.selector, slot.labels));
    if (selected.length === 0) continue;
    const updated = input.updatedRevision(decoration);
    if (updated === undefined) {
      for (const slot of selected) {
        const kept = slot.current.get(name);
        if (kept !== undefined) candidates.get(slot.name)?.push({ decoration, revision: kept });
      }
      continue;
    }
    // A cluster decoration plans over pods of several namespaces: each is known by namespace and name.
    const fleet = isClusterDecoration(decoration);
    const rolloutName = (namespace: string, pod: string) => (fleet ? `${namespace}\0${pod}` : pod);
    const matched = input.matched ?? isMatchedPod;
    const rolloutPods: RolloutPod[] = [];
    // Only a partition counts other pods: without one, each pod's target is its own.
    const others = decoration.spec.updateStrategy?.rollingUpdate?.partition === undefined ? [] : input.otherPods(decoration);
    for (const pod of others) {
      if (!matched(decoration, pod)) continue;
      const namespace = pod.metadata?.namespace ?? "";
      rolloutPods.push({ name: rolloutName(namespace, pod.metadata?.name ?? ""), labels: pod.metadata?.labels ?? {}, ready: isPodReady(pod), current: input.recorded(pod)?.get(name), ...(fleet ? { namespaceLabels: input.namespaceLabels?.(namespace) } : {}) });
    }
    const ownLabels = fleet ? input.namespaceLabels?.(input.namespace) : undefined;
    for (const slot of selected) rolloutPods.push({ name: rolloutName(input.namespace, slot.name), labels: slot.labels, ready: slot.ready, current: slot.current.get(name), isNew: slot.isNew === true, ...(fleet ? { namespaceLabels: ownLabels } : {}) });
    const plan = planRollout(decoration, updated, rolloutPods, decoration.status?.currentRevision);
    for (const slot of selected) {
      const target = plan.get(rolloutName(input.namespace, slot.name));
      if (target !== undefined) candidates.get(slot.name)?.push({ decoration, revision: target });
    }
  }

  const targets = new Map<string, Map<string, string>>();
  const slotsByName = new Map(slots.map((slot) => [slot.name, slot]));
  for (const [slot, list] of candidates) {
    const best = new Map<string, number>();
    for (const { decoration } of list) {
      const group = decorationGroup(decoration);
      if (group !== "") best.set(group, Math.max(best.get(group) ?? Number.NEGATIVE_INFINITY, decorationWeight(decoration)));
    }
    const chosen = new Map<string, string>();
    for (const { decoration, revision } of list) {
      const group = decorationGroup(decoration);
      if (group === "" || decorationWeight(decoration) >= (best.get(group) ?? Number.NEGATIVE_INFINITY)) chosen.set(decorationKey(decoration), revision);
    }
    if (input.keeps !== undefined) {
      for (const [key, revision] of slotsByName.get(slot)?.current ?? []) if (!chosen.has(key) && input.keeps(key)) chosen.set(key, revision);
    }
    targets.set(slot, chosen);
  }
  return targets;
}

