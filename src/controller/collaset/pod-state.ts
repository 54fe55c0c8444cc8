// What the CollaSet controller reads off one of its pods: instance id, template revision,
// whether it is terminating, waiting to be replaced, or available (ready and running the
// images its spec names — an in-place update is in progress until the kubelet says so).
import { INSTANCE_ID_LABEL, isPodReady } from "../../decoration/rollout.ts";
import type { Pod } from "../../kube/objects.ts";

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

/** Ready, not terminating, and every container reported runs the image its spec names. */
export function isAvailable(pod: Pod): boolean {
  return !isTerminating(pod) && isReady(pod) && runsSpecImages(pod);
}

/** False while an image change has not reached the node (the in-place update is in progress). */
export function runsSpecImages(pod: Pod): boolean {
  const statuses = pod.status?.containerStatuses;
  if (statuses === undefined) return true;
  const running = new Map(statuses.map((status) => [status.name, status.image]));
  return (pod.spec?.containers ?? []).every((container) => {
    const image = running.get(container.name);
    return image === undefined || sameImage(image, container.image ?? "");
  });
}

/** `nginx:1.27` and `docker.io/library/nginx:1.27` name the same image, as kubelets report either. */
export function sameImage(a: string, b: string): boolean {
  return normalizeImage(a) === normalizeImage(b);
}

function normalizeImage(image: string): string {
  let reference = image;
  const slash = reference.indexOf("/");
  const first = slash < 0 ? "" : reference.slice(0, slash);
  // A first component without '.', ':' or "localhost" is a Docker Hub path, not a registry.
  if (slash < 0 || (!first.includes(".") && !first.includes(":") && first !== "localhost")) {
    reference = `docker.io/${slash < 0 ? "library/" : ""}${reference}`;
  }
  const lastPart = reference.slice(reference.lastIndexOf("/") + 1);
  if (!lastPart.includes(":") && !lastPart.includes("@")) reference += ":latest";
  return reference;
}
