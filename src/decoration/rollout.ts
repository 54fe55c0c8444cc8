// Which revision of one decoration each matched pod should carry (DESIGN §5). Pure: the
// PodDecoration controller reports it in status, the CollaSet controller acts on it, and the
// pod webhook asks it for a pod being created.
//
// - no rollingUpdate: every matched pod moves to the updated revision;
// - rollingUpdate.selector: pods it selects move, the others keep what they have; with a
//   partition P as well, the last P of the selected pods (in update order) keep theirs too;
// - rollingUpdate.partition P: pods in update order (already updated, then new pods, then not
//   ready, then CollaSet instance id, then name); all but the last P move, the last P keep
//   what they have. Pods already updated come first, so lowering P only ever extends the
//   updated set.
//
// New pods (the new-pod policy, updateStrategy.newPodRevision): the partition's count is the
// same either way; the policy decides whether new pods are the first to move (Updated, the
// default) or the first to be held back (Current), and a held-back new pod, having nothing to
// keep, gets the decoration's current revision.
import type { NEW_POD_REVISIONS} from "../api/poddecoration.ts";
import { type PodDecoration } from "../api/poddecoration.ts";
import type { Labels, LabelSelector } from "../api/label-selector.ts";
import { selectorMatches } from "./selector.ts";

export type NewPodRevision = (typeof NEW_POD_REVISIONS)[number];

export const INSTANCE_ID_LABEL = "collaset.kusionstack.io/instance-id";

/** What the planner needs to know about one pod. */
export interface RolloutPod {
  name: string;
  labels: Labels;
  ready: boolean;
  /** The revision of this decoration the pod records now, if any. */
  current: string | undefined;
  /** A pod about to be created (a CollaSet slot to fill). */
  isNew?: boolean;
  /** Its namespace's labels: what a ClusterPodDecoration's namespace canary selects by. */
  namespaceLabels?: Labels | undefined;
}

/**
 * The rollout's canary (DESIGN §5, §12): `rollingUpdate.selector` over the pod's labels and, for
 * a ClusterPodDecoration, `rollingUpdate.namespaceSelector` over its namespace's labels; a pod
 * either does not select keeps what it has.
 */
function inCanary(decoration: PodDecoration, labels: Labels, namespaceLabels: Labels | undefined): boolean {
  const { selector, namespaceSelector } = canaryOf(decoration);
  if (selector !== undefined && !selectorMatches(selector, labels)) return false;
  if (namespaceSelector !== undefined && !selectorMatches(namespaceSelector, namespaceLabels ?? {})) return false;
  return true;
}

function hasCanary(decoration: PodDecoration): boolean {
  const { selector, namespaceSelector } = canaryOf(decoration);
  return selector !== undefined || namespaceSelector !== undefined;
}

/** The rolling update's selectors; a ClusterPodDecoration's has the namespace canary too. */
export function canaryOf(decoration: PodDecoration): { selector?: LabelSelector | undefined; namespaceSelector?: LabelSelector | undefined } {
  return decoration.spec.updateStrategy?.rollingUpdate ?? {};
}

export interface PodLike {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: string | null } | undefined;
  status?: { phase?: string; conditions?: readonly { type?: string; status?: string }[] } | undefined;
}

/** Selected by the decoration, in its namespace, not terminal and not being deleted. */
export function isMatchedPod(decoration: PodDecoration, pod: PodLike): boolean {
  const metadata = pod.metadata ?? {};
  if ((metadata.namespace ?? "") !== (decoration.metadata.namespace ?? "")) return false;
  return isLivePod(pod) && decoration.metadata.deletionTimestamp == null && selectorMatches(decoration.spec.selector, metadata.labels);
}

/** Neither being deleted nor terminal: a pod a decoration may count as matched. */
export function isLivePod(pod: PodLike): boolean {
  if (pod.metadata?.deletionTimestamp != null) return false;
  const phase = pod.status?.phase;
  return phase !== "Succeeded" && phase !== "Failed";
}

export function isPodReady(pod: PodLike): boolean {
  return pod.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") ?? false;
}

/**
 * The target revision of every given (matched) pod, by pod name: the updated revision, or the
 * pod's current one (undefined: it keeps having none). A held-back new pod gets
 * `currentRevision`, the decoration's status.currentRevision, when there is one.
 */
export function planRollout(decoration: PodDecoration, updatedRevision: string, pods: readonly RolloutPod[], currentRevision?: string): Map<string, string | undefined> {
  const rollingUpdate = decoration.spec.updateStrategy?.rollingUpdate;
  const options = { newPods: newPodRevisionOf(decoration), currentRevision };
  if (!hasCanary(decoration)) return partitionTargets(pods, updatedRevision, rollingUpdate?.partition ?? 0, options);
  // The canary picks the candidates; the others keep what they have. With a partition too,
  // it holds back that many of the candidates (KusionStack ignores the partition then).
  const targets = new Map<string, string | undefined>();
  const candidates: RolloutPod[] = [];
  for (const pod of pods) {
    if (inCanary(decoration, pod.labels, pod.namespaceLabels)) candidates.push(pod);
    else targets.set(pod.name, keptBy(pod, currentRevision));
  }
  for (const [name, target] of partitionTargets(candidates, updatedRevision, rollingUpdate?.partition ?? 0, options)) targets.set(name, target);
  return targets;
}

export function newPodRevisionOf(decoration: Pick<PodDecoration, "spec">): NewPodRevision {
  return decoration.spec.updateStrategy?.newPodRevision ?? "Updated";
}

export interface PartitionOptions {
  /** Whether new pods are the first to move (Updated) or the first to be held back (Current). */
  newPods?: NewPodRevision;
  /** What a held-back new pod gets, having nothing of its own to keep. */
  currentRevision?: string | undefined;
}

/**
 * Partition semantics shared by decorations and CollaSet templates: pods in update order, all
 * but the last `partition` move to the updated revision, the last keep their current one.
 */
export function partitionTargets(pods: readonly RolloutPod[], updatedRevision: string, partition: number, options: PartitionOptions = {}): Map<string, string | undefined> {
  const targets = new Map<string, string | undefined>();
  const ordered = updateOrder(pods, updatedRevision, options.newPods);
  const moving = Math.max(0, ordered.length - Math.max(0, partition));
  ordered.forEach((pod, index) => targets.set(pod.name, index < moving ? updatedRevision : keptBy(pod, options.currentRevision)));
  return targets;
}

/** The pods in the order a partition moves them: the first `length - partition` move. */
export function updateOrder<T extends RolloutPod>(pods: readonly T[], updatedRevision: string, newPods: NewPodRevision = "Updated"): T[] {
  const newLast = newPods === "Current";
  return [...pods].sort((a, b) => compareUpdateOrder(a, b, updatedRevision, newLast));
}

/** Why a matched pod has the target it has: what `explain` reports, from the planner's own rules. */
export type RolloutStanding =
  | { target: string; held: undefined }
  | { target: string | undefined; held: { by: "canary-selector" } }
  | { target: string | undefined; held: { by: "partition"; partition: number; position: number; candidates: number } };

/**
 * The target of every given (matched) pod and, for each held back from the updated revision,
 * by what: outside the rollout's selector, or by the partition at a position (1-based, in
 * update order) among the candidates. One plan for all of them, as planRollout makes it.
 */
export function rolloutStandings(decoration: PodDecoration, updatedRevision: string, pods: readonly RolloutPod[], currentRevision?: string): Map<string, RolloutStanding> {
  const plan = planRollout(decoration, updatedRevision, pods, currentRevision);
  const rollingUpdate = decoration.spec.updateStrategy?.rollingUpdate;
  const candidates = hasCanary(decoration) ? pods.filter((pod) => inCanary(decoration, pod.labels, pod.namespaceLabels)) : pods;
  const positions = new Map(updateOrder(candidates, updatedRevision, newPodRevisionOf(decoration)).map((pod, index) => [pod.name, index + 1]));
  const standings = new Map<string, RolloutStanding>();
  for (const pod of pods) {
    const target = plan.get(pod.name);
    const position = positions.get(pod.name);
    standings.set(pod.name, target === updatedRevision
      ? { target, held: undefined }
      : position === undefined
        ? { target, held: { by: "canary-selector" } }
        : { target, held: { by: "partition", partition: rollingUpdate?.partition ?? 0, position, candidates: candidates.length } });
  }
  return standings;
}

/** What a held-back pod carries: its own revision, or for a new pod the current one. */
function keptBy(pod: RolloutPod, currentRevision: string | undefined): string | undefined {
  return pod.isNew === true ? (pod.current ?? currentRevision) : pod.current;
}

/**
 * Whether a pod being created that a decoration matches (one no controller plans: the pod
 * webhook's) moves to the updated revision or is held back. Without a CollaSet's plan, the
 * partition's arithmetic alone decides, from the decoration's status counts: the pod moves
 * exactly when the rollout has fewer than (matched + 1 − partition) pods updated, so it never
 * overshoots; the policy cannot choose an existing pod instead, so it does not change the
 * answer.
 */
export function newPodMoves(decoration: PodDecoration, updatedRevision: string, labels: Labels, namespaceLabels?: Labels): boolean {
  const rollingUpdate = decoration.spec.updateStrategy?.rollingUpdate;
  if (rollingUpdate === undefined) return true;
  if (!inCanary(decoration, labels, namespaceLabels)) return false;
  const partition = rollingUpdate.partition;
  if (partition === undefined) return true;
  const status = decoration.status ?? {};
  const matched = status.matchedPods ?? 0;
  // Counts of another updated revision (the spec just changed) say nothing about this one.
  const updated = status.updatedRevision === updatedRevision ? (status.updatedPods ?? 0) : 0;
  return updated < matched + 1 - partition;
}

function compareUpdateOrder(a: RolloutPod, b: RolloutPod, updatedRevision: string, newLast: boolean): number {
  const updated = Number(b.current === updatedRevision) - Number(a.current === updatedRevision);
  if (updated !== 0) return updated;
  const created = Number(b.isNew === true) - Number(a.isNew === true);
  if (created !== 0) return newLast ? -created : created;
  const notReady = Number(!b.ready) - Number(!a.ready);
  if (notReady !== 0) return notReady;
  const ids = compareInstanceIds(a.labels[INSTANCE_ID_LABEL], b.labels[INSTANCE_ID_LABEL]);
  if (ids !== 0) return ids;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Numeric ids first, in numeric order; pods without one (not CollaSet pods) after them. */
function compareInstanceIds(a: string | undefined, b: string | undefined): number {
  const numberA = a === undefined || !/^\d+$/.test(a) ? undefined : Number(a);
  const numberB = b === undefined || !/^\d+$/.test(b) ? undefined : Number(b);
  if (numberA === undefined || numberB === undefined) return Number(numberA === undefined) - Number(numberB === undefined);
  return numberA - numberB;
}
