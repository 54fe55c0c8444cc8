// admissionregistration.k8s.io/v1 reads: the MutatingWebhookConfiguration whose scope
// (namespaceSelector, objectSelector, matchConditions) decides which pods the webhook sees.
import { AdmissionregistrationV1Api, type KubeConfig, type V1MutatingWebhookConfiguration } from "@kubernetes/client-node";
import { toPlain, type Plain } from "./plain.ts";

export type MutatingWebhookConfiguration = Plain<V1MutatingWebhookConfiguration>;

export interface AdmissionClient {
  mutatingWebhookConfigurations: { get(name: string): Promise<MutatingWebhookConfiguration> };
}

export function admissionClient(config: KubeConfig): AdmissionClient {
  const api = config.makeApiClient(AdmissionregistrationV1Api);
  return {
    mutatingWebhookConfigurations: {
      async get(name) {
        return toPlain(await api.readMutatingWebhookConfiguration({ name }));
      },
    },
  };
}
