// admissionregistration.k8s.io/v1: the Mutating- and ValidatingWebhookConfigurations. Live
// `explain` reads the pod webhook's scope from them; `serve` keeps them pointing at itself
// (creates or replaces them for a URL outside a cluster, patches their caBundle inside one).
import {
  AdmissionregistrationV1Api,
  type KubeConfig,
  type V1MutatingWebhookConfiguration,
  type V1ValidatingWebhookConfiguration,
} from "@kubernetes/client-node";
import { fieldManager, type JsonPatchOperation } from "./patch.ts";
import { toPlain, toWire, type Plain } from "./plain.ts";
import { apiClient } from "./api-client.ts";

export type MutatingWebhookConfiguration = Plain<V1MutatingWebhookConfiguration>;
export type ValidatingWebhookConfiguration = Plain<V1ValidatingWebhookConfiguration>;

export interface WebhookConfigurationByKind {
  MutatingWebhookConfiguration: MutatingWebhookConfiguration;
  ValidatingWebhookConfiguration: ValidatingWebhookConfiguration;
}

export type WebhookConfigurationKind = keyof WebhookConfigurationByKind;
export type WebhookConfiguration = WebhookConfigurationByKind[WebhookConfigurationKind];

/** Either configuration by kind and name; create and replace take the kind from the object. */
export interface WebhookConfigurations {
  get<K extends WebhookConfigurationKind>(kind: K, name: string): Promise<WebhookConfigurationByKind[K]>;
  create(configuration: WebhookConfiguration): Promise<WebhookConfiguration>;
  /** A whole-object replace, guarded by the object's metadata.resourceVersion when it has one. */
  replace(configuration: WebhookConfiguration): Promise<WebhookConfiguration>;
  jsonPatch(kind: WebhookConfigurationKind, name: string, operations: readonly JsonPatchOperation[]): Promise<WebhookConfiguration>;
}

export interface AdmissionClient {
  webhookConfigurations: WebhookConfigurations;
}

export function admissionClient(config: KubeConfig): AdmissionClient {
  const api = apiClient(config, AdmissionregistrationV1Api);
  const mutating = (configuration: WebhookConfiguration): configuration is MutatingWebhookConfiguration => kindOf(configuration) === "MutatingWebhookConfiguration";
  const get = async (kind: WebhookConfigurationKind, name: string): Promise<WebhookConfiguration> =>
    kind === "MutatingWebhookConfiguration" ? toPlain(await api.readMutatingWebhookConfiguration({ name })) : toPlain(await api.readValidatingWebhookConfiguration({ name }));
  return {
    webhookConfigurations: {
      get,
      async create(configuration) {
        return mutating(configuration)
          ? toPlain(await api.createMutatingWebhookConfiguration({ body: toWire<V1MutatingWebhookConfiguration>(configuration), fieldManager }))
          : toPlain(await api.createValidatingWebhookConfiguration({ body: toWire<V1ValidatingWebhookConfiguration>(configuration), fieldManager }));
      },
      async replace(configuration) {
        const name = configuration.metadata?.name ?? "";
        return mutating(configuration)
          ? toPlain(await api.replaceMutatingWebhookConfiguration({ name, body: toWire<V1MutatingWebhookConfiguration>(configuration), fieldManager }))
          : toPlain(await api.replaceValidatingWebhookConfiguration({ name, body: toWire<V1ValidatingWebhookConfiguration>(configuration), fieldManager }));
      },
      async jsonPatch(kind, name, operations) {
        return kind === "MutatingWebhookConfiguration"
          ? toPlain(await api.patchMutatingWebhookConfiguration({ name, body: [...operations], fieldManager }))
          : toPlain(await api.patchValidatingWebhookConfiguration({ name, body: [...operations], fieldManager }));
      },
    },
  };
}

function kindOf(configuration: WebhookConfiguration): WebhookConfigurationKind {
  if (configuration.kind === "MutatingWebhookConfiguration" || configuration.kind === "ValidatingWebhookConfiguration") return configuration.kind;
  throw new Error(`not a webhook configuration kind: ${String(configuration.kind)}`);
}
