// The admission handlers `serve` mounts, by webhook name: defined once, so that what the
// tests drive is exactly what the process serves.
import { podMutation, type PodMutationOptions } from "./pod-mutation.ts";
import { defaultCollaSets, defaultPodDecorations, validateCollaSets, validatePodDecorations } from "./resource-admission.ts";
import type { AdmissionHandler, WebhookName } from "./server.ts";

export function admissionHandlers(pods: PodMutationOptions): Record<WebhookName, AdmissionHandler> {
  return {
    "mutate-pods": podMutation(pods),
    "mutate-poddecorations": defaultPodDecorations,
    "validate-poddecorations": validatePodDecorations,
    "mutate-collasets": defaultCollaSets,
    "validate-collasets": validateCollaSets,
  };
}
