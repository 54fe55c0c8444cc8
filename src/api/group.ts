// The API group our kinds are served under: KusionStack's, so its manifests apply unchanged.
// The one definition of the group, its version and the kinds; everything else imports these.
export const GROUP = "apps.kusionstack.io";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;

export const COLLASET_KIND = "CollaSet";
export const POD_DECORATION_KIND = "PodDecoration";
export const RESOURCE_CONTEXT_KIND = "ResourceContext";
export const PODTRANSITIONRULE_KIND = "PodTransitionRule";
export const OPERATIONJOB_KIND = "OperationJob";

/**
 * The group of the kinds the project adds of its own (ClusterPodDecoration, DESIGN §12): not
 * KusionStack's, where a kind of ours could collide with one of theirs.
 */
export const OWN_GROUP = "pod-decorator.io";
export const OWN_API_VERSION = `${OWN_GROUP}/${VERSION}`;
export const CLUSTER_POD_DECORATION_KIND = "ClusterPodDecoration";

/** Whether an apiVersion (`group/version`) is of our group, at any version. */
export function isOurGroup(apiVersion: string | undefined): boolean {
  return (apiVersion ?? "").startsWith(`${GROUP}/`);
}
