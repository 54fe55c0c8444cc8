// The PodDecoration status the controller wants (DESIGN §2, §5), computed from cached pods.
// Pure: the reconciler compares it with the stored status and writes only a difference.
import type { Condition } from "../../api/kubernetes.ts";
import type { PodDecoration, PodDecorationStatus, PodDecorationTemplate } from "../../api/poddecoration.ts";
import { recordedRevisions } from "../../decoration/recording.ts";
import { isLivePod, isMatchedPod, isPodReady, type PodLike } from "../../decoration/rollout.ts";
import type { Pod } from "../../kube/objects.ts";
import type { IndexBucket, Lister } from "../runtime/cache.ts";
import { exactSelection, podsForSelector, recordingBucket, scanForRecording } from "./pod-indexes.ts";
import { withTransition } from "../conditions.ts";
import { collaSetOwnerOf, workloadOf } from "../../api/owners.ts";
import { workloadKey } from "../workload-rollout/workloads.ts";
import type { WorkloadTally } from "./workload-status.ts";
import type { NamespaceStanding } from "./namespace-standing.ts";
import { revisionDrifts, type RunningPod, type TemplateOf } from "../../decoration/running-revisions.ts";
import { decorationKey, isClusterDecoration } from "../../decoration/decoration-kind.ts";

export interface StatusPod extends PodLike {
  metadata?: PodLike["metadata"] & {
    annotations?: Record<string, string>;
    ownerReferences?: readonly { apiVersion?: string; kind?: string; name?: string; controller?: boolean }[];
  };
  /** What it runs, judged against the revisions it records. */
  spec?: RunningPod["spec"];
}

/**
 * What status.details' per-pod entries may take, in bytes of JSON (estimated). etcd holds at
 * most 1.5 MiB per object: a decoration over tens of thousands of CollaSet pods would make a
 * status no API server can store. Beyond the budget the pod lists are left out (the counts
 * stay) and the PodDetail condition says so.
 */
export const POD_DETAIL_BUDGET_BYTES = 512 * 1024;
/**
 * What the rest of status.details (one entry per CollaSet) and status.workloads (one per
 * workload, with up to 10 blocked pods' reasons) may take, each, in bytes of JSON (estimated):
 * a decoration may select 100,000 pods of as many owners. Beyond it the entries are left out,
 * in order, and counted (omittedDetails, omittedWorkloads); the counts above stay whole. With the
 * pod lists' budget, every status stays under 704 KiB, half etcd's limit.
 */
export const DETAIL_ENTRIES_BUDGET_BYTES = 64 * 1024;
export const WORKLOADS_BUDGET_BYTES = 128 * 1024;
/** The JSON around one details entry without pods: `{"collaSet":"","affectedReplicas":},`. */
const DETAIL_ENTRY_OVERHEAD = 36;
/** The JSON around one entry: `{"name":"","revision":""},`, and `,"escaped":true`. */
const POD_DETAIL_ENTRY_OVERHEAD = 26;
const POD_DETAIL_ESCAPED_BYTES = 15;

export interface StatusInput {
  decoration: PodDecoration;
  /**
   * Pods of the decoration's namespace, at least every one its selector matches (others are
   * skipped). Cached pods, never mutated: what status reads of each is derived once per object.
   */
  pods?: readonly StatusPod[];
  /** Every pod given is of the decoration's namespace and satisfies its selector (the label index answered it exactly). */
  podsSelected?: boolean;
  /** Instead of `pods`: the facts of the pods its selector selects (selectedFacts), live or not. */
  selected?: readonly StatusFacts[];
  updatedRevision: string | undefined;
  collisionCount: number;
  /** The TemplateValid condition as last determined (without times). */
  templateValid: Omit<Condition, "lastTransitionTime" | "observedGeneration">;
  now: string;
  /** Tallies status.workloads when the rollout to pods of other owners runs. */
  workloads?: WorkloadTally | undefined;
  /** Its standing among its namespace's decorations (namespace-standing.ts): more conditions, and Ready False when it is over the limit. */
  standing?: NamespaceStanding | undefined;
  /**
   * A stored revision's template: a pod counts as on a revision only while it runs what the
   * revision gives (running-revisions.ts), as the planners judge it. Absent: records count.
   */
  template?: RecordedTemplateOf | undefined;
  /** Told of every matched pod, in the same pass (a ClusterPodDecoration's per-namespace summary). */
  perPod?: ((facts: StatusFacts, updated: boolean) => void) | undefined;
}

/**
 * A stored revision's template as a pod records it: (the pod's namespace, decoration key,
 * revision). A namespaced decoration's revisions are in the pod's namespace, a cluster one's in
 * the release namespace; a pod may record both kinds.
 */
export type RecordedTemplateOf = (namespace: string, decoration: string, revision: string) => PodDecorationTemplate | undefined;

/** What status reads of a pod: the same for every decoration. */
export interface StatusFacts {
  /** The cached object they were read from. */
  readonly pod: StatusPod;
  readonly name: string;
  readonly namespace: string;
  /** Neither being deleted nor terminal (isLivePod). */
  readonly live: boolean;
  /** Being deleted. */
  readonly deleting: boolean;
  /**
   * The revisions annotation as decoration name, revision, name, revision…; null when the pod
   * has none (it escaped the webhook). One flat list: read for every pod of every decoration,
   * it is one object in memory where a Map is several.
   */
  readonly recorded: readonly string[] | null;
  readonly ready: boolean;
  /** The controlling CollaSet's name, and `namespace/name` (how a ClusterPodDecoration's details name it). */
  readonly collaSet: string | undefined;
  readonly namespacedCollaSet: string | undefined;
  /** Its workload's key: a CollaSet's, or another owner's (the rollout to pods of other owners). */
  readonly workload: string;
  /**
   * The decorations whose recorded revision it does not run (driftedDecorations), once every
   * template that needs was stored: a ControllerRevision's data never changes under its name,
   * so the answer stands while the pod object does.
   */
  drifted: ReadonlySet<string> | undefined;
}

// At 100,000 pods a decoration change re-reads tens of thousands of pods: reading their
// conditions and owners again for every decoration, every pass, was most of the status work.
// Keyed by the cached object: a changed pod is a new object, so its facts are derived afresh.
const factsByPod = new WeakMap<StatusPod, StatusFacts>();

// Strings many pods share (namespaces, CollaSets, workload keys, decoration keys, revisions), one
// object each: a pass compares them by pointer and reads one place in memory, where each pod's
// own copy (parsed from its annotation, built from its owner) is another object to reach. Bounded:
// once full it starts again, which costs only the sharing.
const sharedStrings = new Map<string, string>();
const SHARED_STRINGS_LIMIT = 100_000;

function shared(value: string): string {
  const known = sharedStrings.get(value);
  if (known !== undefined) return known;
  if (sharedStrings.size >= SHARED_STRINGS_LIMIT) sharedStrings.clear();
  sharedStrings.set(value, value);
  return value;
}

export function statusFacts(pod: StatusPod): StatusFacts {
  let facts = factsByPod.get(pod);
  if (facts === undefined) {
    const namespace = shared(pod.metadata?.namespace ?? "");
    const owner = collaSetOwnerOf(pod)?.name;
    const collaSet = owner === undefined ? undefined : shared(owner);
    const recorded = recordedRevisions(pod);
    facts = {
      pod,
      name: pod.metadata?.name ?? "",
      namespace,
      live: isLivePod(pod),
      deleting: pod.metadata?.deletionTimestamp != null,
      recorded: recorded === null ? null : [...recorded].flat().map(shared),
      ready: isPodReady(pod),
      collaSet,
      namespacedCollaSet: collaSet === undefined ? undefined : shared(`${namespace}/${collaSet}`),
      workload: shared(workloadKey(namespace, workloadOf(pod))),
      drifted: undefined,
    };
    factsByPod.set(pod, facts);
  }
  return facts;
}

/**
 * The facts of the pods in an index bucket (pod-indexes.ts), held by the bucket until it changes.
 * A status pass after a spec change reads every pod the decoration selects: at 100,000 pods,
 * reaching each cached pod object again (for its facts, its namespace) was most of it — memory
 * latency, not work. An array of facts is read in order; a pod event makes only its buckets
 * derive theirs anew.
 */
export function bucketFacts(bucket: IndexBucket<StatusPod> | undefined): readonly StatusFacts[] {
  if (bucket === undefined) return [];
  return (bucket.held ??= Array.from(bucket.objects, statusFacts)) as readonly StatusFacts[];
}

/** The facts of the pods a decoration's selector selects in its namespace (some perhaps not live: status skips those). */
export function selectedFacts(pods: Lister<Pod>, decoration: PodDecoration): readonly StatusFacts[] {
  const exact = exactSelection(pods, decoration);
  if (exact !== undefined) return bucketFacts(exact.bucket);
  const selectable = podsForSelector(pods, decoration);
  // Pods it does not match are not live, or not selected: status skips both.
  return (selectable.selected ? selectable.pods : selectable.pods.filter((pod) => isMatchedPod(decoration, pod))).map(statusFacts);
}

/** The facts of the pods recording decoration `key` (decoration-kind.ts) in `namespace`, or in every namespace. */
export function recordingFacts(pods: Lister<Pod>, namespace: string | undefined, key: string): readonly StatusFacts[] {
  const recording = recordingBucket(pods, namespace, key);
  return recording === undefined ? scanForRecording(pods, namespace, key).map(statusFacts) : bucketFacts(recording.bucket);
}

const NONE: ReadonlySet<string> = new Set();

/** The decorations whose recorded revision the pod does not run (in any part: running-revisions.ts). */
export function driftedDecorations(facts: StatusFacts, recordedTemplate: RecordedTemplateOf): ReadonlySet<string> {
  if (facts.drifted !== undefined) return facts.drifted;
  const recorded = facts.recorded;
  if (recorded === null || recorded.length === 0) return NONE;
  const template: TemplateOf = (decoration, revision) => recordedTemplate(facts.namespace, decoration, revision);
  const revisions = new Map<string, string>();
  let complete = true;
  for (let index = 0; index < recorded.length; index += 2) {
    revisions.set(recorded[index]!, recorded[index + 1]!);
    if (template(recorded[index]!, recorded[index + 1]!) === undefined) complete = false;
  }
  const drifts = revisionDrifts(facts.pod, revisions, template);
  const drifted = drifts.size === 0 ? NONE : new Set(drifts.keys());
  if (complete) facts.drifted = drifted;
  return drifted;
}

/** The revision of decoration `name` the pod records, if any. */
export function recordedRevision(facts: StatusFacts, name: string): string | undefined {
  const recorded = facts.recorded;
  if (recorded === null) return undefined;
  for (let index = 0; index < recorded.length; index += 2) if (recorded[index] === name) return recorded[index + 1];
  return undefined;
}

export function desiredStatus(input: StatusInput): PodDecorationStatus {
  const { decoration } = input;
  // The decoration as pods record it (decoration-kind.ts); a cluster one's CollaSets are of many namespaces.
  const name = shared(decorationKey(decoration));
  const updatedRevision = input.updatedRevision === undefined ? undefined : shared(input.updatedRevision);
  const fleet = isClusterDecoration(decoration);
  let matched = 0;
  let injected = 0;
  let updated = 0;
  let updatedReady = 0;
  const details = new Map<string, { affectedReplicas: number; pods: { name: string; revision?: string; escaped?: boolean }[] }>();
  const listPods = decoration.spec.disablePodDetail !== true;
  let detailBytes = 0;
  let detailPods = 0;

  // Pods the selector selects are matched when live, unless the decoration goes.
  const selected = decoration.metadata.deletionTimestamp != null ? [] : input.selected ?? (input.podsSelected === true ? (input.pods ?? []).map(statusFacts) : (input.pods ?? []).filter((pod) => isMatchedPod(decoration, pod)).map(statusFacts));
  for (const facts of selected) {
    if (!facts.live) continue;
    matched++;
    const { name: podName, recorded, ready, collaSet, workload } = facts;
    const revision = recordedRevision(facts, name);
    if (revision !== undefined) injected++;
    // On the updated revision: recorded, and run (DESIGN §10: what pods run is what counts).
    const isUpdated = revision !== undefined && revision === updatedRevision && (input.template === undefined || !driftedDecorations(facts, input.template).has(name));
    if (isUpdated) {
      updated++;
      if (ready) updatedReady++;
    }
    input.workloads?.matched(workload, podName, isUpdated);
    input.perPod?.(facts, isUpdated);
    if (collaSet !== undefined) {
      const detailKey = fleet ? facts.namespacedCollaSet! : collaSet;
      let detail = details.get(detailKey);
      if (detail === undefined) details.set(detailKey, (detail = { affectedReplicas: 0, pods: [] }));
      detail.affectedReplicas++;
      detailPods++;
      if (listPods && detailBytes <= POD_DETAIL_BUDGET_BYTES) {
        // Escaped: the pod was admitted without any decision about decorations (webhook bypassed).
        const entry: { name: string; revision?: string; escaped?: boolean } = { name: podName };
        if (revision !== undefined) entry.revision = revision;
        if (recorded === null) entry.escaped = true;
        detail.pods.push(entry);
        detailBytes += POD_DETAIL_ENTRY_OVERHEAD + entry.name.length + (revision?.length ?? 0) + (entry.escaped === true ? POD_DETAIL_ESCAPED_BYTES : 0);
      }
    }
  }

  const previousCurrent = decoration.status?.currentRevision;
  const currentRevision = updatedRevision !== undefined && updated === matched ? updatedRevision : previousCurrent;
  const templateValid = input.templateValid;
  const overLimit = input.standing?.overLimit;
  const ready: Omit<Condition, "lastTransitionTime"> = overLimit !== undefined
    ? { type: "Ready", status: "False", reason: "OverNamespaceLimit", message: overLimit }
    : updatedRevision === undefined
    ? { type: "Ready", status: "False", reason: "RevisionPending", message: "the updated revision is not stored yet" }
    : templateValid.status === "False"
      ? { type: "Ready", status: "False", reason: "TemplateInvalid", message: "the template renders pods the API server rejects" }
      : { type: "Ready", status: "True", reason: updated === matched ? "RolloutComplete" : "RolloutInProgress", message: `${updated} of ${matched} matched pods are on ${updatedRevision}` };

  const withinBudget = detailBytes <= POD_DETAIL_BUDGET_BYTES;
  const podDetail: Omit<Condition, "lastTransitionTime">[] = listPods && !withinBudget
    ? [{ type: "PodDetail", status: "False", reason: "TooManyPods", message: `the ${detailPods} CollaSet pods' entries would exceed the ${POD_DETAIL_BUDGET_BYTES / 1024} KiB status.details may take; per-pod entries are left out (set spec.disablePodDetail to say so yourself)` }]
    : [];
  const workloadStatuses = withinBytes(input.workloads?.statuses() ?? [], WORKLOADS_BUDGET_BYTES, (workload) => JSON.stringify(workload).length + 1);
  const workloads = {
    ...(workloadStatuses.kept.length === 0 ? {} : { workloads: workloadStatuses.kept }),
    ...(workloadStatuses.omitted === 0 ? {} : { omittedWorkloads: workloadStatuses.omitted }),
  };
  const detailEntries = withinBytes(
    [...details.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    DETAIL_ENTRIES_BUDGET_BYTES,
    ([collaSet, detail]) => DETAIL_ENTRY_OVERHEAD + collaSet.length + String(detail.affectedReplicas).length,
  );
  const generation = decoration.metadata.generation;
  // Capped like the pod lists: what is left out is counted, and said.
  const workloadDetail: Omit<Condition, "lastTransitionTime">[] = workloadStatuses.omitted > 0
    ? [{ type: "WorkloadDetail", status: "False", reason: "TooManyWorkloads", message: `the entries of ${workloadStatuses.kept.length + workloadStatuses.omitted} workloads would exceed the ${WORKLOADS_BUDGET_BYTES / 1024} KiB status.workloads may take; the first ${workloadStatuses.kept.length} are listed, status.omittedWorkloads counts the rest` }]
    : [];
  const conditions = [ready, templateValid, ...podDetail, ...workloadDetail, ...(input.standing?.conditions ?? [])].map((condition) => withTransition(condition, decoration.status?.conditions, input.now, generation));
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    ...(currentRevision === undefined ? {} : { currentRevision }),
    ...(updatedRevision === undefined ? {} : { updatedRevision }),
    collisionCount: input.collisionCount,
    matchedPods: matched,
    injectedPods: injected,
    updatedPods: updated,
    updatedReadyPods: updatedReady,
    updatedAvailablePods: updatedReady,
    details: detailEntries.kept.map(([collaSet, detail]) => ({
      collaSet,
      affectedReplicas: detail.affectedReplicas,
      ...(!listPods || !withinBudget ? {} : { pods: detail.pods.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) }),
    })),
    ...(detailEntries.omitted === 0 ? {} : { omittedDetails: detailEntries.omitted }),
    ...workloads,
    conditions,
  };
}

/** The first entries whose estimated sizes fit in `budget` bytes, and how many did not. */
function withinBytes<T>(entries: readonly T[], budget: number, bytes: (entry: T) => number): { kept: T[]; omitted: number } {
  let used = 0;
  let count = 0;
  while (count < entries.length) {
    used += bytes(entries[count]!);
    if (used > budget) break;
    count++;
  }
  return { kept: count === entries.length ? [...entries] : entries.slice(0, count), omitted: entries.length - count };
}
