// ControllerRevision objects for any owner (PodDecoration now, CollaSet templates later):
// name, labels, data, revision number and the controller ownerReference that lets the
// garbage collector remove a decoration's history with it.
import type { ControllerRevision } from "../kube/objects.ts";
import { boundedLabelValue, revisionName } from "./name.ts";

export const REVISION_HASH_LABEL = "controller.kubernetes.io/hash";
export const POD_DECORATION_NAME_LABEL = "poddecoration.kusionstack.io/name";
/** On a ClusterPodDecoration's revisions (in the release namespace), its name. */
export const CLUSTER_POD_DECORATION_NAME_LABEL = "pod-decorator.io/cluster-poddecoration";

export interface RevisionOwner {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
}

export interface ControllerRevisionInput {
  owner: RevisionOwner;
  /** The label naming the owner, e.g. POD_DECORATION_NAME_LABEL. */
  ownerLabelKey: string;
  data: unknown;
  hash: string;
  revision: number;
  /** Put before the owner's name in the revision's (a ClusterPodDecoration's `cpd-`). */
  namePrefix?: string | undefined;
}

export function buildControllerRevision(input: ControllerRevisionInput): ControllerRevision {
  const { owner } = input;
  return {
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: {
      name: revisionName(`${input.namePrefix ?? ""}${owner.name}`, input.hash),
      namespace: owner.namespace,
      labels: { [input.ownerLabelKey]: boundedLabelValue(owner.name), [REVISION_HASH_LABEL]: input.hash },
      ownerReferences: [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true }],
    },
    data: input.data,
    revision: input.revision,
  };
}
