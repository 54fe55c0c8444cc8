// Which pods leave a CollaSet (scaleStrategy.podToExclude, the to-exclude label) and which join it
// (scaleStrategy.podToInclude), decided as kuperator decides (kube-xset synccontrols/sync_control.go
// dealIncludeExcludeTargets and SyncTargets, synccontrols/inexclude.go AllowResourceExclude /
// AllowResourceInclude, synccontrols/x_scale.go excludeTarget / includeTarget):
// - a name in both lists, or asked to leave by label and listed to join, does neither (an Event);
// - a pod leaves only if it carries kusionstack.io/control: "true" and this CollaSet is its
//   controller, and so does each claim its volumes name (a claim that is not there is skipped);
// - a pod joins only if it carries the control label, no other object controls it, and the same
//   holds for its claims; kube-utils' ref manager adopts only what the selector matches and what is
//   not being deleted, so those are refusals too (kuperator skips them without a word);
// - a pod to delete or in a replace (to-replace, replace-pair-origin-name, replace-pair-new-id)
//   leaves once that is over; until then it is not scaled in (x_scale.go getTargetsToDelete).
// Refusals are reported, never dropped in silence. Pure: in-exclude-writes.ts carries it out.
import type { CollaSet } from "../../api/collaset.ts";
import { collaSetOwnerOf } from "../../api/owners.ts";
import { parseLabelSelector } from "../../api/label-selector.ts";
import { controllerOf, type KubeObject, type PersistentVolumeClaim, type Pod } from "../../kube/objects.ts";
import { CONTROL_LABEL } from "../lifecycle/pod-ops-lifecycle.ts";
import { isTerminating } from "../pod-availability.ts";
import { ORPHANED_LABEL } from "./claims.ts";
import { PAIR_NEW_ID_LABEL, PAIR_ORIGIN_NAME_LABEL, TO_DELETE_LABEL, TO_EXCLUDE_LABEL, TO_REPLACE_LABEL } from "./pod-state.ts";

export interface InExcludeInput {
  collaSet: CollaSet;
  /** The pods the CollaSet controls, terminating ones included. */
  owned: readonly Pod[];
  /** A pod of the CollaSet's namespace by name (the cache). */
  pod: (name: string) => Pod | undefined;
  /** A claim of the CollaSet's namespace by name (the cache). */
  claim: (name: string) => PersistentVolumeClaim | undefined;
  /** Instance ids a joining pod may not take (the CollaSet's pods', and other owners' in a shared context). */
  occupied: ReadonlySet<number>;
}

export interface Leaving {
  pod: Pod;
  /** Its claims the CollaSet controls: they leave with it. */
  claims: PersistentVolumeClaim[];
}

export interface Joining extends Leaving {
  instanceId: number;
}

export interface Refusal {
  /** The pod refused, when there is one to report on too. */
  pod?: Pod;
  reason: "ExcludeNotAllowed" | "IncludeNotAllowed" | "DupExIncludedTarget";
  message: string;
}

export interface InExcludePlan {
  exclude: Leaving[];
  include: Joining[];
  /** Pods asked to leave that wait for their deletion or replace to finish: none of them is scaled in. */
  waiting: Set<string>;
  refusals: Refusal[];
}

export function planInExclude(input: InExcludeInput): InExcludePlan {
  const { collaSet } = input;
  const scale = collaSet.spec.scaleStrategy;
  const ownedNames = new Set(input.owned.map((pod) => pod.metadata?.name ?? ""));
  const byName = new Map(input.owned.map((pod) => [pod.metadata?.name ?? "", pod]));
  const excludeNames = new Set(input.owned.filter((pod) => pod.metadata?.labels?.[TO_EXCLUDE_LABEL] !== undefined).map((pod) => pod.metadata?.name ?? ""));
  const unownedExclude = new Set<string>();
  for (const name of scale?.podToExclude ?? []) (ownedNames.has(name) ? excludeNames : unownedExclude).add(name);
  const includeNames: string[] = [];
  const both = new Set<string>();
  for (const name of scale?.podToInclude ?? []) {
    if (excludeNames.delete(name) || unownedExclude.has(name)) both.add(name);
    else if (!ownedNames.has(name) && !includeNames.includes(name)) includeNames.push(name);
  }

  const plan: InExcludePlan = { exclude: [], include: [], waiting: new Set(), refusals: [] };
  if (both.size > 0) plan.refusals.push({ reason: "DupExIncludedTarget", message: `pods ${[...both].sort().join(", ")} are both to exclude and to include: neither is done` });

  const toDelete = new Set(scale?.podToDelete ?? []);
  const uid = collaSet.metadata.uid;
  for (const name of [...excludeNames].sort()) {
    const pod = byName.get(name)!;
    if (isTerminating(pod)) continue;
    if (toDelete.has(name) || pod.metadata?.labels?.[TO_DELETE_LABEL] !== undefined || duringReplace(pod)) {
      plan.waiting.add(name);
      continue;
    }
    // A claim an earlier, half-done exclusion let go goes on leaving.
    const claims = podClaims(pod, input.claim).filter((claim) => controllerOf(claim) !== undefined || claim.metadata?.labels?.[ORPHANED_LABEL] === undefined);
    const refusal = excludeRefusal(pod, uid, "it") ?? firstOf(claims.map((claim) => excludeRefusal(claim, uid, `its claim ${claim.metadata?.name ?? ""}`)));
    if (refusal !== undefined) plan.refusals.push({ pod, reason: "ExcludeNotAllowed", message: `pod ${name} may not leave: ${refusal}` });
    else plan.exclude.push({ pod, claims });
  }

  const free = freeIds(input.occupied);
  const selector = parseLabelSelector(collaSet.spec.selector);
  for (const name of includeNames) {
    const pod = input.pod(name);
    const claims = pod === undefined ? [] : podClaims(pod, input.claim);
    const refusal = pod === undefined
      ? "there is no such pod"
      : includeRefusal(pod, collaSet, selector, "it") ?? firstOf(claims.map((claim) => includeRefusal(claim, collaSet, selector, `its claim ${claim.metadata?.name ?? ""}`)));
    if (refusal !== undefined) plan.refusals.push({ ...(pod === undefined ? {} : { pod }), reason: "IncludeNotAllowed", message: `pod ${name} may not join: ${refusal}` });
    else plan.include.push({ pod: pod!, claims, instanceId: free.next().value });
  }
  return plan;
}

/** A pod in a replace, as origin, surge pod or one asked to be replaced (kube-xset targetDuringReplace). */
function duringReplace(pod: Pod): boolean {
  const labels = pod.metadata?.labels ?? {};
  return labels[TO_REPLACE_LABEL] !== undefined || labels[PAIR_ORIGIN_NAME_LABEL] !== undefined || labels[PAIR_NEW_ID_LABEL] !== undefined;
}

/** The claims the pod's volumes name that exist. */
function podClaims(pod: Pod, claim: (name: string) => PersistentVolumeClaim | undefined): PersistentVolumeClaim[] {
  return (pod.spec?.volumes ?? []).flatMap((volume) => {
    const name = volume.persistentVolumeClaim?.claimName;
    const found = name === undefined ? undefined : claim(name);
    return found === undefined ? [] : [found];
  });
}

function firstOf(reasons: readonly (string | undefined)[]): string | undefined {
  return reasons.find((reason) => reason !== undefined);
}

/** AllowResourceExclude. */
function excludeRefusal(object: KubeObject, uid: string | undefined, what: string): string | undefined {
  const labels = object.metadata?.labels ?? {};
  if (labels[CONTROL_LABEL] !== "true") return `${what} is not controlled by kusionstack system (label ${CONTROL_LABEL}: "true" missing)`;
  const controller = controllerOf(object);
  if (controller?.uid !== uid) return `${what} is not controlled by this CollaSet`;
  return undefined;
}

/** AllowResourceInclude, plus what kube-utils' ref manager needs to adopt: the selector matches, not being deleted. */
function includeRefusal(object: KubeObject, collaSet: CollaSet, selector: ReturnType<typeof parseLabelSelector>, what: string): string | undefined {
  const labels = object.metadata?.labels ?? {};
  if (labels[CONTROL_LABEL] !== "true") return `${what} is not controlled by kusionstack system (label ${CONTROL_LABEL}: "true" missing)`;
  const controller = controllerOf(object);
  const ours = collaSetOwnerOf(object);
  if (controller !== undefined && (ours === undefined || ours.name !== collaSet.metadata.name)) return `${what} is controlled by ${controller.kind ?? ""} ${controller.name ?? ""}`;
  if (!selector.ok || !selector.matches(labels)) return `${what} does not match the CollaSet's selector`;
  if (object.metadata?.deletionTimestamp != null) return `${what} is being deleted`;
  return undefined;
}

function* freeIds(occupied: ReadonlySet<number>): Generator<number, never> {
  for (let id = 0; ; id++) if (!occupied.has(id)) yield id;
}
