// The pod-decorator Mutating/ValidatingWebhookConfigurations: their defaults, and the
// two ways this process keeps them pointing at itself — creating them for a URL
// (outside a cluster) or patching only the caBundle of the chart's (inside one).
import type {
  AdmissionregistrationV1Api,
  V1MutatingWebhook,
  V1MutatingWebhookConfiguration,
  V1ValidatingWebhook,
  V1ValidatingWebhookConfiguration,
  AdmissionregistrationV1WebhookClientConfig as WebhookClientConfig,
} from "@kubernetes/client-node";
import { webhookPaths, type WebhookName } from "./server.ts";

export const webhookConfigurationName = "pod-decorator";
export const injectionLabel = "poddecoration.kusionstack.io/injection";

export interface WebhookConfigurationOptions {
  /** Either a base URL (https://127.0.0.1:PORT) or the in-cluster Service. */
  target: { url: string } | { service: { namespace: string; name: string; port: number } };
  caBundlePem: string;
  /** The controller's own namespace, never decorated. */
  ownNamespace?: string;
  failurePolicy?: "Fail" | "Ignore";
  timeoutSeconds?: number;
}

const systemNamespaces = ["kube-system", "kube-public", "kube-node-lease"];

function clientConfig(options: WebhookConfigurationOptions, webhook: WebhookName): WebhookClientConfig {
  const caBundle = Buffer.from(options.caBundlePem).toString("base64");
  const path = webhookPaths[webhook];
  if ("url" in options.target) return { url: `${options.target.url.replace(/\/+$/, "")}${path}`, caBundle };
  return { service: { ...options.target.service, path }, caBundle };
}

function common(options: WebhookConfigurationOptions) {
  return {
    admissionReviewVersions: ["v1"] as string[],
    sideEffects: "None",
    matchPolicy: "Equivalent",
    timeoutSeconds: options.timeoutSeconds ?? 5,
    failurePolicy: options.failurePolicy ?? "Fail",
  } satisfies Partial<V1MutatingWebhook & V1ValidatingWebhook>;
}

function kusionRule(resource: "poddecorations" | "collasets") {
  return { apiGroups: ["apps.kusionstack.io"], apiVersions: ["v1alpha1"], operations: ["CREATE", "UPDATE"], resources: [resource], scope: "Namespaced" };
}

export function mutatingWebhookConfiguration(options: WebhookConfigurationOptions): V1MutatingWebhookConfiguration {
  const excluded = [...systemNamespaces, ...(options.ownNamespace === undefined ? [] : [options.ownNamespace])];
  const webhooks: V1MutatingWebhook[] = [
    {
      name: "pods.pod-decorator.kusionstack.io",
      clientConfig: clientConfig(options, "mutate-pods"),
      rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"], scope: "Namespaced" }],
      namespaceSelector: {
        matchExpressions: [
          { key: "kubernetes.io/metadata.name", operator: "NotIn", values: excluded },
          { key: injectionLabel, operator: "NotIn", values: ["disabled"] },
        ],
      },
      reinvocationPolicy: "IfNeeded",
      ...common(options),
    },
    {
      name: "poddecorations.pod-decorator.kusionstack.io",
      clientConfig: clientConfig(options, "mutate-poddecorations"),
      rules: [kusionRule("poddecorations")],
      reinvocationPolicy: "Never",
      ...common(options),
    },
    {
      name: "collasets.pod-decorator.kusionstack.io",
      clientConfig: clientConfig(options, "mutate-collasets"),
      rules: [kusionRule("collasets")],
      reinvocationPolicy: "Never",
      ...common(options),
    },
  ];
  return { apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration", metadata: { name: webhookConfigurationName }, webhooks };
}

export function validatingWebhookConfiguration(options: WebhookConfigurationOptions): V1ValidatingWebhookConfiguration {
  const webhooks: V1ValidatingWebhook[] = [
    { name: "poddecorations.pod-decorator.kusionstack.io", clientConfig: clientConfig(options, "validate-poddecorations"), rules: [kusionRule("poddecorations")], ...common(options) },
    { name: "collasets.pod-decorator.kusionstack.io", clientConfig: clientConfig(options, "validate-collasets"), rules: [kusionRule("collasets")], ...common(options) },
  ];
  return { apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingWebhookConfiguration", metadata: { name: webhookConfigurationName }, webhooks };
}

/** Creates both configurations, or replaces them when they exist (outside a cluster). */
export async function applyWebhookConfigurations(api: AdmissionregistrationV1Api, options: WebhookConfigurationOptions): Promise<void> {
  const mutating = mutatingWebhookConfiguration(options);
  const validating = validatingWebhookConfiguration(options);
  await upsert(
    () => api.readMutatingWebhookConfiguration({ name: webhookConfigurationName }),
    (resourceVersion) => api.replaceMutatingWebhookConfiguration({ name: webhookConfigurationName, body: withVersion(mutating, resourceVersion) }),
    () => api.createMutatingWebhookConfiguration({ body: mutating }),
  );
  await upsert(
    () => api.readValidatingWebhookConfiguration({ name: webhookConfigurationName }),
    (resourceVersion) => api.replaceValidatingWebhookConfiguration({ name: webhookConfigurationName, body: withVersion(validating, resourceVersion) }),
    () => api.createValidatingWebhookConfiguration({ body: validating }),
  );
}

/**
 * Inside a cluster the chart owns the configurations; this process only sets the CA
 * bundle of each webhook (a JSON Patch per webhook, leaving every other field alone).
 */
export async function patchCaBundles(api: AdmissionregistrationV1Api, caBundlePem: string, name = webhookConfigurationName): Promise<void> {
  const caBundle = Buffer.from(caBundlePem).toString("base64");
  const patchFor = (count: number) =>
    Array.from({ length: count }, (_, index) => ({ op: "add", path: `/webhooks/${index}/clientConfig/caBundle`, value: caBundle }));
  const mutating = await api.readMutatingWebhookConfiguration({ name });
  await api.patchMutatingWebhookConfiguration({ name, body: patchFor(mutating.webhooks?.length ?? 0) });
  const validating = await api.readValidatingWebhookConfiguration({ name });
  await api.patchValidatingWebhookConfiguration({ name, body: patchFor(validating.webhooks?.length ?? 0) });
}

function withVersion<T extends { metadata?: { resourceVersion?: string } }>(object: T, resourceVersion: string | undefined): T {
  return { ...object, metadata: { ...object.metadata, ...(resourceVersion === undefined ? {} : { resourceVersion }) } };
}

async function upsert(
  read: () => Promise<{ metadata?: { resourceVersion?: string } }>,
  replace: (resourceVersion: string | undefined) => Promise<unknown>,
  create: () => Promise<unknown>,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const current = await read().catch((error: unknown) => {
        if (statusCode(error) === 404) return undefined;
        throw error;
      });
      if (current === undefined) await create();
      else await replace(current.metadata?.resourceVersion);
      return;
    } catch (error) {
      // Another replica wrote in between: read again and retry.
      if (attempt < 5 && (statusCode(error) === 409 || statusCode(error) === 404)) continue;
      throw error;
    }
  }
}

function statusCode(error: unknown): number | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "number" ? error.code : undefined;
}
