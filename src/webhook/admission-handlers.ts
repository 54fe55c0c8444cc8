// The admission handlers `serve` mounts, by webhook name: defined once, so that what the
// tests drive is exactly what the process serves.
import { type PrivilegeChecks, withPrivilegeChecks } from "./decoration-privilege.ts";
import { podMutation, type PodMutationOptions } from "./pod-mutation.ts";
import { defaultCollaSets, defaultOperationJobs, defaultPodDecorations, defaultPodTransitionRules, validateCollaSets, validateOperationJobs, validatePodDecorations, validatePodTransitionRules } from "./resource-admission.ts";
import type { AdmissionHandler, WebhookName } from "./server.ts";

/** Without `privilege` a PodDecoration is checked structurally only (tests, offline use). */
export function admissionHandlers(pods: PodMutationOptions, privilege?: PrivilegeChecks): Record<WebhookName, AdmissionHandler> {
  return {
    "mutate-pods": podMutation(pods),
    "mutate-poddecorations": defaultPodDecorations,
    "validate-poddecorations": privilege === undefined ? validatePodDecorations : withPrivilegeChecks(validatePodDecorations, privilege),
    "mutate-collasets": defaultCollaSets,
    "validate-collasets": validateCollaSets,
    "mutate-podtransitionrules": defaultPodTransitionRules,
    "validate-podtransitionrules": validatePodTransitionRules,
    "mutate-operationjobs": defaultOperationJobs,
    "validate-operationjobs": validateOperationJobs,
  };
}
