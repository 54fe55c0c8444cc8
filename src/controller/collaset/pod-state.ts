// What the CollaSet controller reads off one of its pods: instance id, template revision,
// whether it is terminating, waiting to be replaced, or available (ready and running the
// images its spec names — an in-place update is in progress until the kubelet says so).
import { INSTANCE_ID_LABEL, isPodReady } from "../../decoration/rollout.ts";
import type { Pod } from "../../kube/objects.ts";
import { sameImage } from "../../api/image-reference.ts";
import { inLifecycle } from "../lifecycle/pod-ops-lifecycle.ts";

export { INSTANCE_ID_LABEL };
/** The template revision a pod was made from (the label StatefulSets and KusionStack use). */
export const TEMPLATE_REVISION_LABEL = "controller-revision-hash";
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

export function isTerminating(pod: Pod): boolean {
  return pod.metadata?.deletionTimestamp != null;
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

/**
 * Ready, not terminating, not in a PodOpsLifecycle operation (out of traffic, or about to be),
 * and every container reported runs the image its spec names.
 */
export function isAvailable(pod: Pod): boolean {
  return !isTerminating(pod) && isReady(pod) && !inLifecycle(pod) && runsSpecImages(pod);
}

/**
 * False while an image change has not reached the node (the in-place update is in progress):
 * a container or native sidecar whose status reports another image than its spec names.
 */
export function runsSpecImages(pod: Pod): boolean {
  const runs = (containers: readonly { name: string; image?: string }[], statuses: readonly { name: string; image: string }[] | undefined) => {
    const running = new Map((statuses ?? []).map((status) => [status.name, status.image]));
    return containers.every((container) => {
      const image = running.get(container.name);
      return image === undefined || sameImage(image, container.image ?? "");
    });
  };
  const nativeSidecars = (pod.spec?.initContainers ?? []).filter((container) => container.restartPolicy === "Always");
  return runs(pod.spec?.containers ?? [], pod.status?.containerStatuses) && runs(nativeSidecars, pod.status?.initContainerStatuses);
}
