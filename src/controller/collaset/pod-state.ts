// What the CollaSet controller reads off one of its pods: instance id, template revision,
// whether it is waiting to be replaced, ready or scheduled (availability: ../pod-availability.ts),
// and the labels with which kuperator's users ask for an operation on a pod.
import { INSTANCE_ID_LABEL, isPodReady } from "../../decoration/rollout.ts";
import type { Pod } from "../../kube/objects.ts";
import { isTerminating } from "../pod-availability.ts";

export { INSTANCE_ID_LABEL };
/** The template revision a pod was made from (the label StatefulSets and KusionStack use). */
export const TEMPLATE_REVISION_LABEL = "controller-revision-hash";
/** kube-api's PodDeletionIndicationLabelKey: any value asks for the pod to be deleted (and, while replicas stays, recreated). */
export const TO_DELETE_LABEL = "collaset.kusionstack.io/to-delete";
/** kube-api's CollaSetUpdateIndicateLabelKey: with rollingUpdate.byLabel, only pods carrying it take a new template revision. */
export const UPDATE_INCLUDED_LABEL = "collaset.kusionstack.io/update-included";
/** kube-api's PodReplaceIndicationLabelKey: any value asks for a surge pod first, then the pod's removal. */
export const TO_REPLACE_LABEL = "collaset.kusionstack.io/to-replace";
/** kube-api's PodReplaceByReplaceUpdateLabelKey: the template revision a replace asked by podUpgradePolicy Replace makes. */
export const REPLACED_BY_UPDATE_LABEL = "collaset.kusionstack.io/replaced-by-replace-update";
/** kube-api's PodExcludeIndicationLabelKey: any value asks for the pod (and its claims) to leave the CollaSet, as scaleStrategy.podToExclude does. */
export const TO_EXCLUDE_LABEL = "collaset.kusionstack.io/to-exclude";
/** kube-api's PodReplacePairOriginName, on the surge pod: the name of the pod it replaces. */
export const PAIR_ORIGIN_NAME_LABEL = "collaset.kusionstack.io/replace-pair-origin-name";
/** kube-api's PodReplacePairNewId, on the pod being replaced: the instance id of its surge pod. */
export const PAIR_NEW_ID_LABEL = "collaset.kusionstack.io/replace-pair-new-id";
/**
 * Holds a pod deleted for recreation until its replacement exists, so the decisions it carries
 * (the decoration revisions a held-back pod keeps) survive a controller restart in between.
 */
export const RECREATE_FINALIZER = "collaset.kusionstack.io/recreate";

export function instanceIdOf(pod: Pod): number | undefined {
  const value = pod.metadata?.labels?.[INSTANCE_ID_LABEL];
  return value !== undefined && /^(0|[1-9]\d{0,8})$/.test(value) ? Number(value) : undefined;
}

export function templateRevisionOf(pod: Pod): string | undefined {
  return pod.metadata?.labels?.[TEMPLATE_REVISION_LABEL];
}

export function isAwaitingReplacement(pod: Pod): boolean {
  return isTerminating(pod) && (pod.metadata?.finalizers ?? []).includes(RECREATE_FINALIZER);
}

export function isReady(pod: Pod): boolean {
  return isPodReady(pod);
}

/** Bound to a node: condition PodScheduled=True (what KusionStack counts as scheduled). */
export function isScheduled(pod: Pod): boolean {
  return pod.status?.conditions?.some((condition) => condition.type === "PodScheduled" && condition.status === "True") ?? false;
}
