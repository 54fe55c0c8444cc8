// Which of our objects controls another: the controller ownerReference (metav1.GetControllerOf)
// of our group and a given kind. The one definition of "owned by a CollaSet" / "a PodDecoration's".
import { COLLASET_KIND, isOurGroup, POD_DECORATION_KIND } from "./group.ts";

interface OwnerReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

interface Owned<R extends OwnerReference> {
  metadata?: { ownerReferences?: readonly R[] };
}

/** The controller ownerReference, when it names one of our objects of `kind`. */
function controllerOfKind<R extends OwnerReference>(object: Owned<R>, kind: string): R | undefined {
  const owner = object.metadata?.ownerReferences?.find((reference) => reference.controller === true);
  return owner?.kind === kind && isOurGroup(owner.apiVersion) ? owner : undefined;
}

/** The CollaSet controlling a pod or a template revision, if one does. */
export function collaSetOwnerOf<R extends OwnerReference>(object: Owned<R>): R | undefined {
  return controllerOfKind(object, COLLASET_KIND);
}

/** The PodDecoration controlling a revision, if one does. */
export function podDecorationOwnerOf<R extends OwnerReference>(object: Owned<R>): R | undefined {
  return controllerOfKind(object, POD_DECORATION_KIND);
}

/** The workload a pod belongs to: the unit a rollout's maxUnavailable and status count by. */
export interface Workload {
  /** The controller's kind (a ReplicaSet made by a Deployment: Deployment), or "Pod" for pods without a controller. */
  kind: string;
  /** The controller's name; "" for the pods without a controller (one workload per namespace). */
  name: string;
}

/** The label a Deployment's ReplicaSets and their pods carry: the ReplicaSet's name is `<deployment>-<hash>`. */
const POD_TEMPLATE_HASH_LABEL = "pod-template-hash";

interface WorkloadPod {
  metadata?: { labels?: Record<string, string>; ownerReferences?: readonly OwnerReference[] };
}

/**
 * The pod's controller, with a Deployment's ReplicaSets read as the Deployment (its pods of
 * every ReplicaSet are one workload during a Deployment rollout), told by the name the
 * Deployment controller gives them — without reading ReplicaSets.
 */
export function workloadOf(pod: WorkloadPod): Workload {
  const owner = pod.metadata?.ownerReferences?.find((reference) => reference.controller === true);
  if (owner === undefined || owner.kind === undefined || owner.name === undefined) return { kind: "Pod", name: "" };
  const hash = pod.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL];
  if (owner.kind === "ReplicaSet" && owner.apiVersion === "apps/v1" && hash !== undefined && hash !== "" && owner.name.endsWith(`-${hash}`)) {
    return { kind: "Deployment", name: owner.name.slice(0, -hash.length - 1) };
  }
  return { kind: owner.kind, name: owner.name };
}
