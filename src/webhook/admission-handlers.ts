// The admission handlers `serve` mounts, by webhook name: defined once, so that what the
// tests drive is exactly what the process serves.
import type { KubernetesVersion } from "../api/kubernetes-versions.ts";
import { type PrivilegeChecks, withPrivilegeChecks } from "./decoration-privilege.ts";
import { podMutation, type PodMutationOptions } from "./pod-mutation.ts";
import { defaultCollaSets, defaultPodDecorations, validateCollaSets, validatePodDecorations } from "./resource-admission.ts";
import type { AdmissionHandler, WebhookName } from "./server.ts";
import { withVersionGates } from "./version-gates.ts";

/**
 * Without `privilege` a PodDecoration is checked structurally only (tests, offline use); with
 * `kubernetesVersion` (the API server's, as serve last read it) also against what that version
 * can honour.
 */
export function admissionHandlers(pods: PodMutationOptions, privilege?: PrivilegeChecks, kubernetesVersion?: () => KubernetesVersion | undefined): Record<WebhookName, AdmissionHandler> {
  const structural = kubernetesVersion === undefined ? validatePodDecorations : withVersionGates(validatePodDecorations, kubernetesVersion);
  return {
    "mutate-pods": podMutation(pods),
    "mutate-poddecorations": defaultPodDecorations,
    "validate-poddecorations": privilege === undefined ? structural : withPrivilegeChecks(structural, privilege),
    "mutate-collasets": defaultCollaSets,
    "validate-collasets": validateCollaSets,
  };
}
