// kuperator's replace, decided from cached pods (kube-xset synccontrols/x_replace.go is the
// reference): a pod labelled to-replace gets a surge pod with an instance id of its own, labelled
// with the origin's name (the origin is labelled with the surge pod's id); once the surge pod is
// service-available the origin is deleted, and the pair's labels go. Removing to-replace before
// then cancels: the surge pod is deleted unless it already serves. podUpgradePolicy Replace asks
// for the same with the updated revision (replaced-by-replace-update), and so does a template
// update that reaches a pod being replaced by label, whatever the policy. Pure: sync-plan.ts adds
// the actions to the plan.
import type { Pod as LivePod } from "../../kube/objects.ts";
import { isAvailable } from "../pod-availability.ts";
import { INSTANCE_ID_LABEL, PAIR_NEW_ID_LABEL, PAIR_ORIGIN_NAME_LABEL, REPLACED_BY_UPDATE_LABEL, templateRevisionOf, TO_REPLACE_LABEL } from "./pod-state.ts";

export interface ReplacePairs {
  /** Each origin's surge pod, by the origin's instance id. */
  surgeOf: ReadonlyMap<number, LivePod>;
  /** The instance ids of surge pods: each stands in for its origin's slot, not for one of its own. */
  surgeIds: ReadonlySet<number>;
}

/** Pairs of live pods: a surge pod names its origin, a live pod of the same CollaSet. */
export function replacePairs(live: ReadonlyMap<number, LivePod>): ReplacePairs {
  const idOfName = new Map([...live].map(([id, pod]) => [pod.metadata?.name ?? "", id]));
  const surgeOf = new Map<number, LivePod>();
  const surgeIds = new Set<number>();
  for (const [id, pod] of [...live].sort(([a], [b]) => a - b)) {
    const originName = pod.metadata?.labels?.[PAIR_ORIGIN_NAME_LABEL];
    const originId = originName === undefined ? undefined : idOfName.get(originName);
    if (originId === undefined || originId === id || surgeOf.has(originId) || surgeIds.has(originId) || surgeOf.has(id)) continue;
    surgeOf.set(originId, pod);
    surgeIds.add(id);
  }
  return { surgeOf, surgeIds };
}

export function asksForReplace(pod: LivePod): boolean {
  return pod.metadata?.labels?.[TO_REPLACE_LABEL] !== undefined;
}

/** What to do about one slot's pod and its surge pod. */
export type ReplaceStep =
  | { kind: "none" }
  /** Make the surge pod from this template revision. */
  | { kind: "create-surge"; template: string }
  /** The surge pod serves: the origin goes. */
  | { kind: "remove-origin"; surge: LivePod }
  /** The surge pod goes: the replace was cancelled, or asked for another revision since. */
  | { kind: "remove-surge"; surge: LivePod; reason: string }
  /** The replace makes the slot's newer template revision: a replace by update follows it, one by label becomes one by update. */
  | { kind: "retarget"; template: string };

/** `target`: the template revision the slot should have now. */
export function replaceStep(origin: LivePod, surge: LivePod | undefined, target: string): ReplaceStep {
  const byUpdate = origin.metadata?.labels?.[REPLACED_BY_UPDATE_LABEL];
  if (!asksForReplace(origin)) {
    if (surge === undefined || isAvailable(surge)) return { kind: "none" };
    return { kind: "remove-surge", surge, reason: `the replace of pod ${origin.metadata?.name ?? ""} was cancelled (label ${TO_REPLACE_LABEL} removed)` };
  }
  if (byUpdate !== undefined && byUpdate !== target) return { kind: "retarget", template: target };
  // An update that reaches a pod being replaced by label turns its replace into one by update
  // (kube-xset updateReplaceOriginTarget): a surge pod of the old revision goes, one of the new comes.
  const revision = templateRevisionOf(origin);
  if (byUpdate === undefined && revision !== undefined && revision !== target) return { kind: "retarget", template: target };
  if (surge === undefined) return { kind: "create-surge", template: byUpdate ?? templateRevisionOf(origin) ?? target };
  if (byUpdate !== undefined && templateRevisionOf(surge) !== byUpdate) {
    return { kind: "remove-surge", surge, reason: `it was made of another revision than the update of pod ${origin.metadata?.name ?? ""} now asks for` };
  }
  return isAvailable(surge) ? { kind: "remove-origin", surge } : { kind: "none" };
}

/**
 * The pair labels a live pod should change: an origin names its surge pod's id and nothing once
 * it has none; a pod that is no surge pod (its origin is gone: the replace finished) names no origin.
 */
export function pairLabelChanges(pod: LivePod, id: number, pairs: ReplacePairs): { set: Record<string, string>; remove: string[] } | undefined {
  const labels = pod.metadata?.labels ?? {};
  const set: Record<string, string> = {};
  const remove: string[] = [];
  const surgeId = pairs.surgeOf.get(id)?.metadata?.labels?.[INSTANCE_ID_LABEL];
  if (surgeId !== undefined && labels[PAIR_NEW_ID_LABEL] !== surgeId) set[PAIR_NEW_ID_LABEL] = surgeId;
  if (surgeId === undefined && labels[PAIR_NEW_ID_LABEL] !== undefined) remove.push(PAIR_NEW_ID_LABEL);
  if (!pairs.surgeIds.has(id) && labels[PAIR_ORIGIN_NAME_LABEL] !== undefined) remove.push(PAIR_ORIGIN_NAME_LABEL);
  return Object.keys(set).length === 0 && remove.length === 0 ? undefined : { set, remove };
}
