// Keeps the API server trusting this process (DESIGN §10), continuously rather than only at a
// certificate renewal: every pass (every 10 s, and at once after a change of certificate)
// - the shared CA Secret (self-signed mode): deleted or made unusable → written back from the CA
//   the replicas serve with; replaced by another valid CA → that CA is adopted (a rotation);
// - the caBundle of every webhook of our configurations: removed or changed → set back;
// - outside a cluster, the configurations themselves: deleted → created again.
// Each repair is logged and recorded as a Warning Event on the object repaired.
import type { Logger } from "pino";
import type { EventType } from "../controller/runtime/event-recorder.ts";
import type { WebhookConfiguration, WebhookConfigurationKind, WebhookConfigurations } from "../kube/admission.ts";
import { isAlreadyExists, isNotFound, statusMessage } from "../kube/errors.ts";
import type { KubeObject, Secret } from "../kube/objects.ts";
import type { ResourceClient } from "../kube/resource-client.ts";
import type { SelfSignedCertificates } from "./serving-certificates.ts";
import { caFromSecret, caSecret } from "./shared-ca.ts";

/** The two configurations, read and patched by name (a JSON Patch). */
export type ConfigurationStore = Pick<WebhookConfigurations, "get" | "jsonPatch">;

/** What a repair is recorded as: its Event's reason and its metric's label. */
export const TRUST_REPAIR_REASONS = ["CABundleRestored", "CASecretRestored", "WebhookConfigurationRestored"] as const;
export type TrustRepairReason = (typeof TRUST_REPAIR_REASONS)[number];

const KINDS: readonly WebhookConfigurationKind[] = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"];

export interface EventSink {
  record(object: KubeObject, type: EventType, reason: string, message: string): void;
}

export interface WebhookTrustOptions {
  configurations: ConfigurationStore;
  configurationName: string;
  /** The PEM the configurations must trust; undefined when it is not ours to set (cert-manager's injector, the chart's values). */
  caBundle: () => string | undefined;
  /** Outside a cluster this process made the configurations: makes the missing one again. */
  recreate?: (kind: WebhookConfigurationKind) => Promise<void>;
  /**
   * Which webhooks are this process's to keep (default: all). Outside a cluster only those still
   * calling its URL: another process may have taken the configurations over.
   */
  owns?: (clientConfig: { url?: string }) => boolean;
  /** Self-signed in a cluster: the Secret every replica's CA comes from. */
  caSecret?: {
    secrets: Pick<ResourceClient<Secret>, "get" | "create" | "replace">;
    namespace: string;
    name: string;
    certificates: SelfSignedCertificates;
  };
  events: EventSink;
  /** Counts each repair by reason (the metric the caBundle-repair alert reads). */
  onRepair?: (reason: TrustRepairReason) => void;
  logger: Logger;
}

/**
 * One pass; returns what it repaired (empty when all was in place). Throws on API errors (the
 * caller retries). The first pass of a process sets what a chart leaves empty: `starting`
 * says so, and its repairs are logged but not recorded as Warning Events.
 */
export async function reconcileWebhookTrust(options: WebhookTrustOptions, starting = false): Promise<string[]> {
  const reporting = starting ? { ...options, events: { record: () => undefined }, onRepair: undefined } : options;
  const repaired: string[] = [];
  if (options.caSecret !== undefined) repaired.push(...(await reconcileCaSecret(reporting, options.caSecret)));
  const pem = options.caBundle();
  if (pem === undefined) return repaired;
  const caBundle = Buffer.from(pem).toString("base64");
  for (const kind of KINDS) repaired.push(...(await reconcileConfiguration(reporting, kind, caBundle)));
  return repaired;
}

async function reconcileCaSecret(options: WebhookTrustOptions, store: NonNullable<WebhookTrustOptions["caSecret"]>): Promise<string[]> {
  const { secrets, namespace, name, certificates } = store;
  const own = certificates.authority();
  let secret: Secret | undefined;
  try {
    secret = await secrets.get(namespace, name);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  if (secret === undefined) {
    try {
      const created = await secrets.create(caSecret(namespace, name, own));
      return [repair(options, created, "CASecretRestored", `Secret ${namespace}/${name} was missing; written back with the CA the webhooks serve from`)];
    } catch (error) {
      // Another replica wrote it back first: the next pass reads it.
      if (isAlreadyExists(error)) return [];
      throw error;
    }
  }
  const found = await caFromSecret(secret);
  if ("invalid" in found) {
    const body = caSecret(namespace, name, own);
    // Replaced, not re-created: a stale resourceVersion (another replica repaired it) fails with a conflict.
    body.metadata = { ...secret.metadata, ...body.metadata, resourceVersion: secret.metadata?.resourceVersion };
    const restored = await secrets.replace(body);
    return [repair(options, restored, "CASecretRestored", `Secret ${namespace}/${name} ${found.invalid}; written back with the CA the webhooks serve from`)];
  }
  if (found.ca.certPem === own.certPem) return [];
  // A valid CA that is not ours: someone rotated it. Every replica adopts what the Secret holds.
  await certificates.useAuthority(found.ca);
  options.logger.info({ secret: `${namespace}/${name}` }, "the webhook CA Secret holds a new CA; serving certificates are issued from it now");
  options.events.record(secret, "Normal", "CAAdopted", `the CA in Secret ${namespace}/${name} changed; serving certificates are issued from the new one`);
  return [`adopted the CA in Secret ${namespace}/${name}`];
}

async function reconcileConfiguration(options: WebhookTrustOptions, kind: WebhookConfigurationKind, caBundle: string): Promise<string[]> {
  const name = options.configurationName;
  let configuration: WebhookConfiguration;
  try {
    configuration = await options.configurations.get(kind, name);
  } catch (error) {
    if (!isNotFound(error) || options.recreate === undefined) throw error;
    await options.recreate(kind);
    return [repair(options, { apiVersion: "admissionregistration.k8s.io/v1", kind, metadata: { name } }, "WebhookConfigurationRestored", `${kind} ${name} was missing; created again`)];
  }
  const owns = options.owns ?? (() => true);
  const wrong = (configuration.webhooks ?? []).flatMap((webhook, index) => (webhook.clientConfig.caBundle === caBundle || !owns(webhook.clientConfig) ? [] : [{ index, name: webhook.name }]));
  if (wrong.length === 0) return [];
  // Each change guarded by the webhook's name, so a concurrent edit of the list fails the patch instead of landing elsewhere.
  await options.configurations.jsonPatch(kind, name, wrong.flatMap(({ index, name: webhook }) => [
    { op: "test", path: `/webhooks/${index}/name`, value: webhook },
    { op: "add", path: `/webhooks/${index}/clientConfig/caBundle`, value: caBundle },
  ]));
  const webhooks = wrong.map((webhook) => webhook.name).join(", ");
  return [repair(options, { apiVersion: "admissionregistration.k8s.io/v1", kind, metadata: { name, uid: configuration.metadata?.uid } }, "CABundleRestored", `the caBundle of ${webhooks} was not the CA serving the webhooks; set back`)];
}

function repair(options: WebhookTrustOptions, object: KubeObject, reason: TrustRepairReason, message: string): string {
  options.logger.warn({ reason, object: `${object.kind ?? ""}/${object.metadata?.name ?? ""}` }, message);
  options.events.record(object, "Warning", reason, message);
  options.onRepair?.(reason);
  return message;
}

/**
 * Runs passes every `intervalMs` until `signal` aborts, and at once when `wake` is called
 * (a renewed certificate). A failed pass is logged and tried again at the next one.
 */
export function keepWebhookTrust(options: WebhookTrustOptions, intervalMs: number, signal: AbortSignal): { wake(): void; firstPass: Promise<void>; done: Promise<void> } {
  let wakeUp: (() => void) | undefined;
  const wake = () => wakeUp?.();
  signal.addEventListener("abort", wake, { once: true });
  let passed: () => void = () => undefined;
  const firstPass = new Promise<void>((resolve) => (passed = resolve));
  const done = (async () => {
    for (let pass = 0; !signal.aborted; pass++) {
      try {
        await reconcileWebhookTrust(options, pass === 0);
      } catch (error) {
        options.logger.warn({ err: error, reason: statusMessage(error) }, "checking the webhook configurations' trust in this process failed; trying again");
      }
      passed();
      if (signal.aborted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();
  return { wake, firstPass, done };
}
