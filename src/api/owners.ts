// Which of our objects controls another: the controller ownerReference (metav1.GetControllerOf)
// of our group and a given kind. The one definition of "owned by a CollaSet" / "a PodDecoration's".
import { CLUSTER_POD_DECORATION_KIND, COLLASET_KIND, isOurGroup, OWN_GROUP, POD_DECORATION_KIND } from "./group.ts";

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

/** The ClusterPodDecoration controlling a revision (of the project's own group), if one does. */
export function clusterPodDecorationOwnerOf<R extends OwnerReference>(object: Owned<R>): R | undefined {
  const owner = object.metadata?.ownerReferences?.find((reference) => reference.controller === true);
  return owner?.kind === CLUSTER_POD_DECORATION_KIND && (owner.apiVersion ?? "").startsWith(`${OWN_GROUP}/`) ? owner : undefined;
}

/** The workload a pod belongs to: the unit a rollout's maxUnavailable and status count by. */
export interface Workload {
  /** The controller's kind (a ReplicaSet made by a Deployment: Deployment), or "Pod" for a pod without a controller. */
  kind: string;
  /** The controller's name; a pod without a controller is a workload of its own, under its own name. */
  name: string;
}

/** A workload as the rollout keys it: which controller, not only its kind and name. */
export interface WorkloadIdentity extends Workload {
  /**
   * The controller's UID, so that a pod naming another's controller by kind and name never joins
   * its workload; "" for a Deployment (read from its ReplicaSets' names: its pods of every
   * ReplicaSet are one workload) and for a pod without a controller.
   */
  uid: string;
}

/** The label a Deployment's ReplicaSets and their pods carry: the ReplicaSet's name is `<deployment>-<hash>`. */
const POD_TEMPLATE_HASH_LABEL = "pod-template-hash";

interface WorkloadPod {
  metadata?: { name?: string | undefined; labels?: Record<string, string>; ownerReferences?: readonly OwnerReference[] };
}

/**
 * The pod's controller, with a Deployment's ReplicaSets read as the Deployment (its pods of
 * every ReplicaSet are one workload during a Deployment rollout), told by the name the
 * Deployment controller gives them — without reading ReplicaSets. A pod without a controller
 * is its own workload: one unready bare pod must not hold back every other's rollout.
 */
export function workloadOf(pod: WorkloadPod): WorkloadIdentity {
  const owner = pod.metadata?.ownerReferences?.find((reference) => reference.controller === true);
  if (owner === undefined || owner.kind === undefined || owner.name === undefined) return { kind: "Pod", name: pod.metadata?.name ?? "", uid: "" };
  const hash = pod.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL];
  if (owner.kind === "ReplicaSet" && owner.apiVersion === "apps/v1" && hash !== undefined && hash !== "" && owner.name.endsWith(`-${hash}`)) {
    return { kind: "Deployment", name: owner.name.slice(0, -hash.length - 1), uid: "" };
  }
  return { kind: owner.kind, name: owner.name, uid: owner.uid ?? "" };
}
