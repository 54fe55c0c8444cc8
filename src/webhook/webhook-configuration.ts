// The pod-decorator Mutating/ValidatingWebhookConfigurations: their defaults, and the
// two ways this process keeps them pointing at itself — creating them for a URL
// (outside a cluster) or patching only the caBundle of the chart's (inside one).
import type {
  V1MutatingWebhook,
  V1ValidatingWebhook,
  AdmissionregistrationV1WebhookClientConfig as WebhookClientConfig,
} from "@kubernetes/client-node";
import type { MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookConfiguration, WebhookConfigurationKind, WebhookConfigurations } from "../kube/admission.ts";
import { withoutTrailingSlashes } from "../kube/base-url.ts";
import { isAlreadyExists, isConflict, isNotFound } from "../kube/errors.ts";
import { webhookPaths, type WebhookName } from "./server.ts";
import { GROUP, OWN_GROUP, VERSION } from "../api/group.ts";
import { admissionScope, type AdmissionScopeOptions } from "../decoration/admission-scope.ts";

export const webhookConfigurationName = "pod-decorator";

export interface WebhookConfigurationOptions {
  /** Either a base URL (https://127.0.0.1:PORT) or the in-cluster Service. */
  target: { url: string } | { service: { namespace: string; name: string; port: number } };
  caBundlePem: string;
  /** Which pods the pod webhook is called for (the release namespace among those excluded). */
  scope: AdmissionScopeOptions;
  failurePolicy?: "Fail" | "Ignore";
  timeoutSeconds?: number;
}

function clientConfig(options: WebhookConfigurationOptions, webhook: WebhookName): WebhookClientConfig {
  const caBundle = Buffer.from(options.caBundlePem).toString("base64");
  const path = webhookPaths[webhook];
  if ("url" in options.target) return { url: `${withoutTrailingSlashes(options.target.url)}${path}`, caBundle };
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

function kusionRule(resource: string) {
  return { apiGroups: [GROUP], apiVersions: [VERSION], operations: ["CREATE", "UPDATE"], resources: [resource], scope: "Namespaced" };
}

type ResourceName = "poddecorations" | "clusterpoddecorations" | "collasets" | "podtransitionrules" | "operationjobs";

/** The defaulting and validation webhooks of our kinds, in the order the chart declares them. */
const RESOURCE_WEBHOOKS: readonly { name: string; resource: ResourceName; rule: ReturnType<typeof kusionRule> }[] = [
  { name: "poddecorations.pod-decorator.kusionstack.io", resource: "poddecorations", rule: kusionRule("poddecorations") },
  {
    name: "clusterpoddecorations.pod-decorator.io",
    resource: "clusterpoddecorations",
    rule: { apiGroups: [OWN_GROUP], apiVersions: [VERSION], operations: ["CREATE", "UPDATE"], resources: ["clusterpoddecorations"], scope: "Cluster" },
  },
  { name: "collasets.pod-decorator.kusionstack.io", resource: "collasets", rule: kusionRule("collasets") },
  { name: "podtransitionrules.pod-decorator.kusionstack.io", resource: "podtransitionrules", rule: kusionRule("podtransitionrules") },
  { name: "operationjobs.pod-decorator.kusionstack.io", resource: "operationjobs", rule: kusionRule("operationjobs") },
];

/**
 * Writes to one of our kinds being deleted never reach the webhooks: removing a
 * finalizer must work while no replica answers, or deleting one would hang (DESIGN §10).
 */
const notBeingDeleted = { name: "not-being-deleted", expression: "!has(object.metadata.deletionTimestamp)" };

export function mutatingWebhookConfiguration(options: WebhookConfigurationOptions): MutatingWebhookConfiguration {
  const webhooks: V1MutatingWebhook[] = [
    {
      name: "pods.pod-decorator.kusionstack.io",
      clientConfig: clientConfig(options, "mutate-pods"),
      rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"], scope: "Namespaced" }],
      ...admissionScope(options.scope),
      // A re-invocation could not tell the bookkeeping this webhook wrote from a pod author's.
      reinvocationPolicy: "Never",
      ...common(options),
    },
    ...RESOURCE_WEBHOOKS.map(({ name, resource, rule }): V1MutatingWebhook => ({ name, clientConfig: clientConfig(options, `mutate-${resource}`), rules: [rule], matchConditions: [notBeingDeleted], reinvocationPolicy: "Never", ...common(options) })),
  ];
  return { apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration", metadata: { name: webhookConfigurationName }, webhooks };
}

export function validatingWebhookConfiguration(options: WebhookConfigurationOptions): ValidatingWebhookConfiguration {
  const webhooks = RESOURCE_WEBHOOKS.map(({ name, resource, rule }): V1ValidatingWebhook => ({ name, clientConfig: clientConfig(options, `validate-${resource}`), rules: [rule], matchConditions: [notBeingDeleted], ...common(options) }));
  return { apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingWebhookConfiguration", metadata: { name: webhookConfigurationName }, webhooks };
}

/** Creates both configurations, or replaces them when they exist (outside a cluster). */
export async function applyWebhookConfigurations(configurations: WebhookConfigurations, options: WebhookConfigurationOptions): Promise<void> {
  for (const configuration of [mutatingWebhookConfiguration(options), validatingWebhookConfiguration(options)]) await upsert(configurations, configuration);
}

/** Creates one of the two configurations (outside a cluster, when it went missing). */
export async function createWebhookConfiguration(configurations: WebhookConfigurations, kind: WebhookConfigurationKind, options: WebhookConfigurationOptions): Promise<void> {
  await configurations.create(kind === "MutatingWebhookConfiguration" ? mutatingWebhookConfiguration(options) : validatingWebhookConfiguration(options));
}

async function upsert(configurations: WebhookConfigurations, configuration: WebhookConfiguration): Promise<void> {
  const name = configuration.metadata?.name ?? "";
  for (let attempt = 0; ; attempt++) {
    try {
      const current = await configurations.get(configuration.kind as WebhookConfigurationKind, name).catch((error: unknown) => {
        if (isNotFound(error)) return undefined;
        throw error;
      });
      const resourceVersion = current?.metadata?.resourceVersion;
      if (current === undefined) await configurations.create(configuration);
      else await configurations.replace({ ...configuration, metadata: { ...configuration.metadata, ...(resourceVersion === undefined ? {} : { resourceVersion }) } });
      return;
    } catch (error) {
      // Another replica wrote (or deleted) in between: read again and retry.
      if (attempt < 5 && (isConflict(error) || isNotFound(error) || isAlreadyExists(error))) continue;
      throw error;
    }
  }
}
