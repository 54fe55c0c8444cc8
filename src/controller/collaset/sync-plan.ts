// One CollaSet's next steps (DESIGN §5, §6), decided from cached pods alone: the slots
// (instance ids) it has, which to add or remove, and for each live pod the template and
// decoration revisions it should be made of — then which pods to update now, in place or by
// recreation, within the maxUnavailable budget. Pure: the reconciler carries the actions out.
import { recreatesAlways, type CollaSet } from "../../api/collaset.ts";
import { resolveMaxUnavailable } from "../../api/max-unavailable.ts";
import type { Pod } from "../../api/pod.ts";
import type { Pod as LivePod } from "../../kube/objects.ts";
import { DecorationError } from "../../decoration/decoration-error.ts";
import { recordedRevisions } from "../../decoration/recording.ts";
import { revisionDrifts } from "../../decoration/running-revisions.ts";
import { partitionTargets } from "../../decoration/rollout.ts";
import type { Slot } from "../decoration-targets.ts";
import { operationInProgress, orderForUpdate, planDeletionSteps, planUpdateSteps, type LifecycleSettings, type PodChange, type PodDeletion, type UpdateStep } from "../update-steps.ts";
import { instanceIdOf, isAwaitingReplacement, isReady, INSTANCE_ID_LABEL, PAIR_ORIGIN_NAME_LABEL, REPLACED_BY_UPDATE_LABEL, templateRevisionOf, TO_DELETE_LABEL, TO_REPLACE_LABEL, UPDATE_INCLUDED_LABEL } from "./pod-state.ts";
import { asksForReplace, pairLabelChanges, replacePairs, replaceStep } from "./replace-plan.ts";
import { inLifecycle, lifecycleLabel, lifecycleTime } from "../lifecycle/pod-ops-lifecycle.ts";
import { isAvailable, isTerminating } from "../pod-availability.ts";
import { podUpdate, type PodUpdate } from "../pod-update.ts";
import { sameRevisions, slotPod, type PodRevisions, type RevisionSources } from "./slot-pod.ts";
import { holdsInstanceId, isPersistentSequence } from "./naming.ts";

export type Action = UpdateStep<
  /** `replacing`: the pod deleted for recreation it stands in for; `surgeFor`: the pod it replaces (to-replace). */
  | { kind: "create"; instanceId: number; pod: Pod; replacing?: LivePod; surgeFor?: LivePod }
  /** `releaseClaims`: the instance's claims go with it (a replace's pods, as kube-xset deletes them). */
  | { kind: "delete"; pod: LivePod; reason: string; releaseClaims?: boolean }
  /** Gives an owned pod without a usable instance id (made by hand, or a duplicate) a free one. */
  | { kind: "label"; pod: LivePod; instanceId: number }
  | { kind: "recreate"; pod: LivePod; replacement: Pod; reason: string }
  /** Lets a pod deleted for recreation go: its replacement exists, or it is not needed. */
  | { kind: "release"; pod: LivePod }
  /** kuperator's operation labels: a replace asked for by an update, and a replace pair's names. */
  | { kind: "relabel"; pod: LivePod; set: Record<string, string>; remove: string[]; reason: string }
>;

export interface SyncPlan {
  actions: Action[];
  /** Pods that cannot be updated as the spec asks (InPlaceOnly and a change that needs recreation). */
  blocked: string[];
  /** Pods waiting for a revision to show in the cache; its arrival syncs again. */
  waiting: string[];
  /** PodOpsLifecycle steps waiting longer than stuckAfterMs (also in `blocked`). */
  stuck: string[];
  /** Live pods whose update is held by more than their turn, by pod name: what the decorations' status reports. */
  held: Map<string, { reason: "InPlaceOnly" | "LifecycleStuck"; message: string }>;
  /** Sync again after this long: a drain delay ends, or a waiting step becomes stuck. */
  retryInMs?: number;
}

export interface SyncInput {
  collaSet: CollaSet;
  /** The template revision of the current spec, stored. */
  updatedRevision: string;
  /** status.currentRevision: what a new pod held back by the template partition is made of. */
  currentRevision: string | undefined;
  /** The CollaSet's pods (controller ownerReference), terminating ones included. */
  pods: readonly LivePod[];
  sources: RevisionSources;
  /** Decoration targets for the slots (see decoration-targets.ts). */
  decorationTargets(slots: readonly Slot[]): Map<string, Map<string, string>>;
  lifecycle?: LifecycleSettings;
  /** Now, for the time labels kuperator's operation labels carry. */
  nowMs: number;
  /** Instance ids other CollaSets hold in a shared ResourceContext (scaleStrategy.context). */
  reservedIds?: ReadonlySet<number>;
  /** Pods asked to leave the CollaSet that wait for their replace or deletion (in-exclude.ts). */
  excluding?: ReadonlySet<string>;
}

interface PlannedSlot {
  instanceId: number;
  /** The live pod, the pod awaiting replacement or (PersistentSequence) going, or none for a slot to fill. */
  pod: LivePod | undefined;
  kind: "live" | "replacing" | "leaving" | "new";
  slot: Slot;
  /** Its pod drifted from a revision it records in images, labels or annotations: put back in place. */
  drifted?: boolean;
}

export function planSync(input: SyncInput): SyncPlan {
  const { collaSet } = input;
  const paused = collaSet.spec.paused === true;
  const actions: Action[] = [];
  const blocked: string[] = [];
  const waiting: string[] = [];
  const stuck: string[] = [];
  const held: SyncPlan["held"] = new Map();
  const retries: number[] = [];
  // One delay before operating (DESIGN §6): the CollaSet's operationDelaySeconds when it sets one, else the drain delay.
  const operationDelaySeconds = collaSet.spec.updateStrategy?.operationDelaySeconds;
  const lifecycle = input.lifecycle === undefined ? undefined : { ...input.lifecycle, ...(operationDelaySeconds === undefined ? {} : { operationDelayMs: operationDelaySeconds * 1000 }) };
  const result = (): SyncPlan => {
    const retryInMs = retries.length === 0 ? undefined : Math.max(100, Math.min(...retries));
    return { actions, blocked, waiting, stuck, held, ...(retryInMs === undefined ? {} : { retryInMs }) };
  };

  const live = new Map<number, LivePod>();
  const replacing = new Map<number, LivePod>();
  // PersistentSequence (naming.ts): a pod being deleted holds its slot, whose next pod takes its name once it is gone.
  const persistent = isPersistentSequence(collaSet);
  const leaving = new Map<number, LivePod>();
  const occupied = new Set<number>([...input.pods.filter((pod) => holdsInstanceId(collaSet, pod)).map(instanceIdOf).filter((id) => id !== undefined), ...(input.reservedIds ?? [])]);
  const unlabelled: LivePod[] = [];
  for (const pod of [...input.pods].sort(byPreference)) {
    const id = instanceIdOf(pod);
    if (isAwaitingReplacement(pod)) {
      if (id === undefined || replacing.has(id)) actions.push({ kind: "release", pod });
      else replacing.set(id, pod);
    } else if (!isTerminating(pod)) {
      if (id === undefined || live.has(id)) unlabelled.push(pod);
      else live.set(id, pod);
    } else if (persistent && id !== undefined && !leaving.has(id)) {
      leaving.set(id, pod);
    }
  }
  // No pod is deleted for lack of an id: it gets one, and is counted from the next sync on.
  if (unlabelled.length > 0) {
    const free = freeIds(occupied, unlabelled.length);
    return { actions: [...actions, ...unlabelled.map((pod, index) => ({ kind: "label" as const, pod, instanceId: free[index]! }))], blocked, waiting, stuck, held };
  }
  for (const [id, pod] of replacing) {
    if (live.has(id)) {
      actions.push({ kind: "release", pod });
      replacing.delete(id);
    }
  }
  if (persistent) {
    // Its replacement cannot exist while it does (one name): no pod waits for one.
    for (const [id, pod] of replacing) {
      actions.push({ kind: "release", pod });
      if (!leaving.has(id)) leaving.set(id, pod);
    }
    replacing.clear();
    for (const id of live.keys()) leaving.delete(id);
  }

  // Pods to delete go through PodOpsLifecycle's scale-in operation first, when it is on.
  const deletions: PodDeletion<Action>[] = [];
  const remove = (pod: LivePod, reason: string, releaseClaims = false) => void deletions.push({ pod, step: { kind: "delete", pod, reason, ...(releaseClaims ? { releaseClaims } : {}) } });
  // A surge pod (to-replace) stands in for its origin's slot until the origin goes.
  const pairs = replacePairs(live);
  const deleteSlotPod = (id: number, pod: LivePod, reason: string) => {
    remove(pod, reason);
    const surge = pairs.surgeOf.get(id);
    if (surge !== undefined) remove(surge, `the pod it replaces, ${pod.metadata?.name ?? ""}, is deleted`);
  };

  // Scaling: podToDelete and the to-delete label first (while replicas stays, new pods take their
  // places), then the highest instance ids; new pods take the smallest free ids. A surge pod named
  // for deletion goes once its replace is over (as kuperator waits for it).
  const ids = new Set([...[...live.keys()].filter((id) => !pairs.surgeIds.has(id)), ...replacing.keys(), ...leaving.keys()]);
  const replicas = collaSet.spec.replicas ?? 0;
  if (!paused) {
    const toDelete = new Set(collaSet.spec.scaleStrategy?.podToDelete ?? []);
    for (const id of ids) {
      const pod = live.get(id);
      if (pod === undefined) continue;
      const labelled = pod.metadata?.labels?.[TO_DELETE_LABEL] !== undefined;
      if (!labelled && !toDelete.has(pod.metadata?.name ?? "")) continue;
      deleteSlotPod(id, pod, labelled ? `it carries the label ${TO_DELETE_LABEL}` : "it is listed in scaleStrategy.podToDelete");
      ids.delete(id);
    }
    // Pods asked to leave come first and are not scaled in: each holds back one scale-in until it
    // has left (kube-xset getTargetsToDelete), and so does a slot whose surge pod is asked to leave.
    const excluding = (id: number) => [live.get(id), pairs.surgeOf.get(id)].some((pod) => input.excluding?.has(pod?.metadata?.name ?? "") === true);
    // Then pods already leaving traffic for a scale-in (kube-xset's deletion order), then the highest ids.
    const scalingIn = (id: number) => live.get(id)?.metadata?.labels?.[lifecycleLabel("operationType")] === "scale-in";
    const surplus = [...ids].sort((a, b) => Number(excluding(b)) - Number(excluding(a)) || Number(scalingIn(b)) - Number(scalingIn(a)) || b - a).slice(0, Math.max(0, ids.size - replicas));
    for (const id of surplus) {
      if (excluding(id)) continue;
      const pod = live.get(id);
      if (pod !== undefined) deleteSlotPod(id, pod, `scaling in to ${replicas} replicas`);
      else if (replacing.has(id)) actions.push({ kind: "release", pod: replacing.get(id)! });
      ids.delete(id);
    }
  }
  const slots: PlannedSlot[] = [];
  const templateLabels = collaSet.spec.template.metadata?.labels ?? {};
  for (const id of [...ids].sort((a, b) => a - b)) {
    const pod = live.get(id) ?? replacing.get(id) ?? leaving.get(id)!;
    const kind = live.has(id) ? "live" : replacing.has(id) ? "replacing" : "leaving";
    // A pod awaiting its replacement stands for it, with what it carries and as ready as it
    // is: counting it ready would put the other not-ready pods ahead of it in update order,
    // and the rollout would move on to them and recreate them too, without end.
    // What the pod records counts only where its parts agree (running-revisions.ts); a drift in
    // images, labels or annotations keeps the record, and the update below puts it back in place.
    const recorded = recordedRevisions(pod) ?? new Map<string, string>();
    const drifts = revisionDrifts(pod, recorded, (name, revision) => input.sources.decoration(name, revision)?.template);
    const current = new Map([...recorded].filter(([name]) => drifts.get(name)?.inPlace !== false));
    const drifted = [...drifts].some(([, drift]) => drift.inPlace);
    slots.push({ instanceId: id, pod, kind, drifted, slot: { name: pod.metadata?.name ?? "", labels: pod.metadata?.labels ?? {}, ready: isReady(pod), current } });
  }
  if (!paused) {
    for (const id of freeIds(occupied, replicas - slots.length)) {
      occupied.add(id);
      slots.push({ instanceId: id, pod: undefined, kind: "new", slot: { name: `new pod ${id}`, labels: { ...templateLabels, [INSTANCE_ID_LABEL]: String(id) }, ready: false, current: new Map(), isNew: true } });
    }
  }

  // Targets: the template by the CollaSet's own partition (or, byLabel, to the pods labelled for
  // it), decorations by theirs. A slot held back keeps its revision; one held back with none (a
  // pod that joined by podToInclude) keeps having none, as kube-xset holds any pod the partition
  // covers: it is recreated only once the rollout reaches it.
  const templateTargets: ReadonlyMap<string, string | undefined> = collaSet.spec.updateStrategy?.rollingUpdate?.byLabel === undefined
    ? partitionTargets(
      slots.map(({ slot, pod }) => ({ name: slot.name, labels: slot.labels, ready: slot.ready, current: pod === undefined ? undefined : templateRevisionOf(pod) })),
      input.updatedRevision,
      collaSet.spec.updateStrategy?.rollingUpdate?.byPartition?.partition ?? 0,
    )
    : new Map(slots.flatMap(({ slot, pod }) => (slot.labels[UPDATE_INCLUDED_LABEL] !== undefined ? [] : [[slot.name, pod === undefined ? undefined : templateRevisionOf(pod)] as const])));
  const decorationTargets = input.decorationTargets(slots.map(({ slot }) => slot));
  const desired = (planned: PlannedSlot): PodRevisions => {
    const held = templateTargets.has(planned.slot.name);
    const target = templateTargets.get(planned.slot.name);
    return {
      // KEEPS_NONE: a live pod held back with no template revision stays as it is.
      template: target ?? (held && planned.kind === "live" ? KEEPS_NONE : undefined) ?? (held || planned.kind === "new" ? input.currentRevision : undefined) ?? input.updatedRevision,
      decorations: decorationTargets.get(planned.slot.name) ?? new Map(),
    };
  };

  for (const planned of slots.filter((item) => item.kind === "replacing" || item.kind === "new")) {
    const revisions = desired(planned);
    const pod = renderSlot(collaSet, planned.instanceId, revisions, input.sources, blocked, `instance ${planned.instanceId}`, lifecycle !== undefined);
    if (pod === null) continue;
    if (pod === undefined) waiting.push(`instance ${planned.instanceId}: ${missingRevision(revisions)}`);
    else actions.push({ kind: "create", instanceId: planned.instanceId, pod, ...(planned.pod === undefined ? {} : { replacing: planned.pod }) });
  }
  /** kuperator's replace for each slot's pod (replace-plan.ts), and the pair labels kept true. */
  function planReplaces(): void {
    const relabels = new Map<LivePod, { set: Record<string, string>; remove: string[]; reasons: string[] }>();
    const relabel = (pod: LivePod, set: Record<string, string>, remove: string[], reason: string) => {
      const entry = relabels.get(pod) ?? { set: {}, remove: [], reasons: [] };
      Object.assign(entry.set, set);
      entry.remove.push(...remove);
      entry.reasons.push(reason);
      relabels.set(pod, entry);
    };
    for (const [id, pod] of live) {
      const changes = pairLabelChanges(pod, id, pairs);
      if (changes !== undefined) relabel(pod, changes.set, changes.remove, "its replace pair changed");
    }
    for (const planned of slots) {
      if (planned.kind !== "live") continue;
      const origin = planned.pod!;
      const revisions = desired(planned);
      const step = replaceStep(origin, pairs.surgeOf.get(planned.instanceId), revisions.template === KEEPS_NONE ? (input.currentRevision ?? input.updatedRevision) : revisions.template);
      const name = origin.metadata?.name ?? "";
      switch (step.kind) {
        case "none":
          break;
        case "create-surge": {
          const [id] = freeIds(occupied, 1);
          const surge = renderSlot(collaSet, id!, { template: step.template, decorations: revisions.decorations }, input.sources, blocked, `the pod to replace ${name}`, lifecycle !== undefined);
          if (surge === null) break;
          if (surge === undefined) {
            waiting.push(`the pod to replace ${name}: ${missingRevision({ template: step.template, decorations: revisions.decorations })}`);
            break;
          }
          occupied.add(id!);
          surge.metadata!.labels![PAIR_ORIGIN_NAME_LABEL] = name;
          actions.push({ kind: "create", instanceId: id!, pod: surge, surgeFor: origin });
          break;
        }
        case "remove-origin":
          remove(origin, `replaced by pod ${step.surge.metadata?.name ?? ""}, which serves`, true);
          break;
        case "remove-surge":
          remove(step.surge, step.reason, true);
          break;
        case "retarget":
          relabel(origin, { [REPLACED_BY_UPDATE_LABEL]: step.template }, [], `its replace now makes revision ${step.template}`);
          break;
      }
    }
    for (const [pod, { set, remove, reasons }] of relabels) actions.push({ kind: "relabel", pod, set, remove, reason: reasons.join("; ") });
  }

  if (!paused) planReplaces();
  const lifecycleSteps = (changes: PodChange<Action>[], maxUnavailable: number, unavailable: number) => {
    const deleting = new Set(deletions.map((deletion) => deletion.pod));
    // Surge pods too: their gate goes True and they become service-available like any pod.
    const pods = [...slots.flatMap((slot) => (slot.kind === "live" ? [slot.pod!] : [])), ...pairs.surgeOf.values()].filter((pod) => !deleting.has(pod));
    for (const planned of [planUpdateSteps<Action>({ changes: changes.filter((change) => !deleting.has(change.pod)), pods, maxUnavailable, unavailable, lifecycle }), planDeletionSteps(deletions, lifecycle)]) {
      actions.push(...planned.steps);
      const messages = planned.stuck.map((entry) => entry.message);
      stuck.push(...messages);
      blocked.push(...messages);
      for (const entry of planned.stuck) held.set(entry.pod.metadata?.name ?? "", { reason: "LifecycleStuck", message: entry.message });
      retries.push(...planned.retries);
    }
    return result();
  };
  if (paused) return lifecycleSteps([], 0, 0);

  // Updates within the budget; updating a pod that is unavailable anyway costs nothing. A pod being
  // replaced is left to its replace; podUpgradePolicy Replace asks for one (a surge pod of the
  // new revision first), as many at once as the budget allows surge pods not serving yet.
  const maxUnavailable = resolveMaxUnavailable(collaSet.spec.updateStrategy?.rollingUpdate?.maxUnavailable, replicas);
  let surgeBudget = maxUnavailable - [...pairs.surgeOf.values()].filter((surge) => !isAvailable(surge)).length;
  const unavailable = slots.filter((planned) => planned.kind !== "live" || !isAvailable(planned.pod!)).length;
  const policy = collaSet.spec.updateStrategy?.podUpgradePolicy ?? "InPlaceIfPossible";
  const candidates = orderForUpdate(slots.filter((planned) => planned.kind === "live").map((planned) => ({ planned, pod: planned.pod!, available: isAvailable(planned.pod!) })));
  const changes: PodChange<Action>[] = [];
  for (const { planned, pod, available } of candidates) {
    const target = desired(planned);
    const current: PodRevisions = { template: templateRevisionOf(pod) ?? "", decorations: planned.slot.current };
    if (sameRevisions(current, target) && planned.drifted !== true) {
      // The update the label asked for is done (kuperator's update WhenFinish removes it).
      if (pod.metadata?.labels?.[UPDATE_INCLUDED_LABEL] !== undefined && !inLifecycle(pod)) actions.push({ kind: "relabel", pod, set: {}, remove: [UPDATE_INCLUDED_LABEL], reason: "its update is done" });
      continue;
    }
    if (asksForReplace(pod) || pairs.surgeOf.has(planned.instanceId)) continue;
    // Held back with no template revision to keep: nothing to render it from until the rollout reaches it.
    if (target.template === KEEPS_NONE) continue;
    if (policy === "Replace") {
      if (surgeBudget-- <= 0) continue;
      actions.push({ kind: "relabel", pod, set: { [TO_REPLACE_LABEL]: lifecycleTime(input.nowMs), [REPLACED_BY_UPDATE_LABEL]: target.template }, remove: [], reason: "podUpgradePolicy is Replace" });
      continue;
    }
    // An operation in progress finishes before the pod is looked at again.
    if (lifecycle !== undefined && operationInProgress(pod)) continue;
    const to = renderSlot(collaSet, planned.instanceId, target, input.sources, blocked, `pod ${pod.metadata?.name ?? ""}`, lifecycle !== undefined);
    if (to === null) continue;
    if (to === undefined) {
      waiting.push(`pod ${pod.metadata?.name ?? ""}: ${missingRevision(target)}`);
      continue;
    }
    // What the pod records, rendered for comparison; unrenderable reads like a revision no longer stored.
    const from = renderSlot(collaSet, planned.instanceId, current, input.sources, [], "", lifecycle !== undefined) ?? undefined;
    // A pod that joined (podToInclude) records no template revision: nothing to compare, so recreated, as kuperator does.
    const update: PodUpdate = current.template === ""
      ? { kind: "recreate", reason: "it records no template revision of the CollaSet" }
      : podUpdate(pod, from, to);
    if (update.kind === "recreate" && policy === "InPlaceOnly") {
      const message = `pod ${pod.metadata?.name ?? ""}: podUpgradePolicy is InPlaceOnly, but ${update.reason}`;
      blocked.push(message);
      held.set(pod.metadata?.name ?? "", { reason: "InPlaceOnly", message });
      continue;
    }
    changes.push({
      pod,
      available,
      change: update.kind === "in-place" && !recreatesAlways(policy)
        ? { kind: "in-place", operations: update.operations }
        : { kind: "replace", step: { kind: "recreate", pod, replacement: to, reason: update.kind === "recreate" ? update.reason : `podUpgradePolicy is ${policy}` } },
    });
  }
  return lifecycleSteps(changes, maxUnavailable, unavailable);
}

/**
 * The slot's pod; undefined while a revision it is made of is not stored yet; null when a
 * decoration cannot be rendered into it (the reason goes to `blocked`: the pod is neither
 * created nor updated to something the API server would refuse).
 */
function renderSlot(collaSet: CollaSet, instanceId: number, revisions: PodRevisions, sources: RevisionSources, blocked: string[], what: string, lifecycle: boolean): Pod | undefined | null {
  try {
    return slotPod(collaSet, instanceId, revisions, sources, { lifecycle });
  } catch (error) {
    if (!(error instanceof DecorationError)) throw error;
    blocked.push(`${what}: ${error.message}`);
    return null;
  }
}


/** The template "revision" of a live pod held back that records none: it is left as it is. */
const KEEPS_NONE = "";

/** The `count` smallest ids not in `occupied`. */
function freeIds(occupied: ReadonlySet<number>, count: number): number[] {
  const ids: number[] = [];
  for (let id = 0; ids.length < count; id++) if (!occupied.has(id)) ids.push(id);
  return ids;
}

function missingRevision(revisions: PodRevisions): string {
  const decorations = [...revisions.decorations].map(([name, revision]) => `${name}@${revision}`).join(", ");
  return `waiting for the revisions it is made of to be stored (template ${revisions.template}${decorations === "" ? "" : `; decorations ${decorations}`})`;
}

/** Of two pods with one instance id, the one to keep: the available, then the older one. */
function byPreference(a: LivePod, b: LivePod): number {
  const available = Number(isAvailable(b)) - Number(isAvailable(a));
  if (available !== 0) return available;
  const [x, y] = [a.metadata?.creationTimestamp ?? "", b.metadata?.creationTimestamp ?? ""];
  if (x !== y) return x < y ? -1 : 1;
  const [m, n] = [a.metadata?.name ?? "", b.metadata?.name ?? ""];
  return m < n ? -1 : m > n ? 1 : 0;
}
