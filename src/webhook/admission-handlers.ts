// The admission handlers `serve` mounts, by webhook name: defined once, so that what the
// tests drive is exactly what the process serves.
import type { KubernetesVersion } from "../api/kubernetes-versions.ts";
import { type PrivilegeChecks, withPrivilegeChecks } from "./decoration-privilege.ts";
import { podMutation, type PodMutationOptions } from "./pod-mutation.ts";
import { defaultClusterPodDecorations, defaultCollaSets, defaultOperationJobs, defaultPodDecorations, defaultPodTransitionRules, validateClusterPodDecorations, validateCollaSets, validateOperationJobs, validatePodDecorations, validatePodTransitionRules } from "./resource-admission.ts";
import { type ClusterPrivilegeChecks, withClusterPrivilegeChecks } from "./cluster-decoration-privilege.ts";
import type { AdmissionHandler, WebhookName } from "./server.ts";
import { withVersionGates } from "./version-gates.ts";
import { CLUSTER_POD_DECORATION_KIND } from "../api/group.ts";

/**
 * Without `privilege` a PodDecoration (or ClusterPodDecoration) is checked structurally only
 * (tests, offline use); with `kubernetesVersion` (the API server's, as serve last read it) also
 * against what that version can honour.
 */
export function admissionHandlers(pods: PodMutationOptions, privilege?: PrivilegeChecks, clusterPrivilege?: ClusterPrivilegeChecks, kubernetesVersion?: () => KubernetesVersion | undefined): Record<WebhookName, AdmissionHandler> {
  const structural = kubernetesVersion === undefined ? validatePodDecorations : withVersionGates(validatePodDecorations, kubernetesVersion);
  const clusterStructural = kubernetesVersion === undefined ? validateClusterPodDecorations : withVersionGates(validateClusterPodDecorations, kubernetesVersion, CLUSTER_POD_DECORATION_KIND);
  return {
    "mutate-pods": podMutation(pods),
    "mutate-poddecorations": defaultPodDecorations,
    "validate-poddecorations": privilege === undefined ? structural : withPrivilegeChecks(structural, privilege),
    "mutate-collasets": defaultCollaSets,
    "validate-collasets": validateCollaSets,
    "mutate-clusterpoddecorations": defaultClusterPodDecorations,
    "validate-clusterpoddecorations": clusterPrivilege === undefined ? clusterStructural : withClusterPrivilegeChecks(clusterStructural, clusterPrivilege),
    "mutate-podtransitionrules": defaultPodTransitionRules,
    "validate-podtransitionrules": validatePodTransitionRules,
    "mutate-operationjobs": defaultOperationJobs,
    "validate-operationjobs": validateOperationJobs,
  };
}
