// The admission handlers `serve` mounts, by webhook name: defined once, so that what the
// tests drive is exactly what the process serves.
import { type PrivilegeChecks, withPrivilegeChecks } from "./decoration-privilege.ts";
import { podMutation, type PodMutationOptions } from "./pod-mutation.ts";
import { defaultClusterPodDecorations, defaultCollaSets, defaultPodDecorations, validateClusterPodDecorations, validateCollaSets, validatePodDecorations } from "./resource-admission.ts";
import { type ClusterPrivilegeChecks, withClusterPrivilegeChecks } from "./cluster-decoration-privilege.ts";
import type { AdmissionHandler, WebhookName } from "./server.ts";

/** Without `privilege` a PodDecoration (or ClusterPodDecoration) is checked structurally only (tests, offline use). */
export function admissionHandlers(pods: PodMutationOptions, privilege?: PrivilegeChecks, clusterPrivilege?: ClusterPrivilegeChecks): Record<WebhookName, AdmissionHandler> {
  return {
    "mutate-pods": podMutation(pods),
    "mutate-poddecorations": defaultPodDecorations,
    "validate-poddecorations": privilege === undefined ? validatePodDecorations : withPrivilegeChecks(validatePodDecorations, privilege),
    "mutate-collasets": defaultCollaSets,
    "validate-collasets": validateCollaSets,
    "mutate-clusterpoddecorations": defaultClusterPodDecorations,
    "validate-clusterpoddecorations": clusterPrivilege === undefined ? validateClusterPodDecorations : withClusterPrivilegeChecks(validateClusterPodDecorations, clusterPrivilege),
  };
}
