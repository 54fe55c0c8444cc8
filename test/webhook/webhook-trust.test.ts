// reconcileWebhookTrust against stores kept in memory: what it repairs, the Events it records,
// and what it leaves alone.
import { X509Certificate } from "node:crypto";
import { pino } from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import type { KubeObject, Secret } from "../../src/kube/objects.ts";
import { createCertificateAuthority, type CertificateAuthority } from "../../src/webhook/certificates.ts";
import { selfSignedCertificates, type SelfSignedCertificates } from "../../src/webhook/serving-certificates.ts";
import { caSecret } from "../../src/webhook/shared-ca.ts";
import { mutatingWebhookConfiguration, validatingWebhookConfiguration } from "../../src/webhook/webhook-configuration.ts";
import type { WebhookConfigurationKind as ConfigurationKind } from "../../src/kube/admission.ts";
import { reconcileWebhookTrust, type ConfigurationStore, type WebhookTrustOptions } from "../../src/webhook/webhook-trust.ts";

const NAME = "pod-decorator";

function notFound(): Error {
  return Object.assign(new Error("not found"), { code: 404, body: JSON.stringify({ reason: "NotFound", code: 404 }) });
}

type StoredConfiguration = { webhooks?: { name: string; clientConfig: { caBundle?: string } }[]; metadata?: { uid?: string } };

class Configurations implements ConfigurationStore {
  readonly stored = new Map<ConfigurationKind, StoredConfiguration>();
  patches = 0;

  get(kind: ConfigurationKind) {
    const found = this.stored.get(kind);
    return found === undefined ? Promise.reject(notFound()) : Promise.resolve(structuredClone(found) as never);
  }

  jsonPatch(kind: ConfigurationKind, _name: string, operations: readonly object[]) {
    this.patches++;
    const found = this.stored.get(kind)!;
    for (const operation of operations as { op: string; path: string; value: string }[]) {
      const index = Number(operation.path.split("/")[2]);
      if (operation.op === "test" && found.webhooks?.[index]?.name !== operation.value) return Promise.reject(new Error("test failed"));
      if (operation.op === "add") found.webhooks![index]!.clientConfig.caBundle = operation.value;
    }
    return Promise.resolve(structuredClone(found) as never);
  }
}

class Secrets {
  stored: Secret | undefined;

  get(): Promise<Secret> {
    return this.stored === undefined ? Promise.reject(notFound()) : Promise.resolve(structuredClone(this.stored));
  }

  create(secret: Secret): Promise<Secret> {
    this.stored = { ...structuredClone(secret), metadata: { ...secret.metadata, resourceVersion: "1", uid: "secret-uid" } };
    return Promise.resolve(structuredClone(this.stored));
  }

  replace(secret: Secret): Promise<Secret> {
    if (secret.metadata?.resourceVersion !== this.stored?.metadata?.resourceVersion) return Promise.reject(Object.assign(new Error("conflict"), { code: 409 }));
    this.stored = { ...structuredClone(secret), metadata: { ...secret.metadata, resourceVersion: String(Number(secret.metadata?.resourceVersion) + 1) } };
    return Promise.resolve(structuredClone(this.stored));
  }
}

let ca: CertificateAuthority;
let other: CertificateAuthority;
beforeAll(async () => {
  [ca, other] = await Promise.all([createCertificateAuthority("pod-decorator-webhook-ca", 1), createCertificateAuthority("rotated-ca", 1)]);
});

async function world(): Promise<{ options: WebhookTrustOptions; configurations: Configurations; secrets: Secrets; events: string[]; certificates: SelfSignedCertificates }> {
  const configurations = new Configurations();
  const target = { service: { namespace: "ops", name: NAME, port: 443 } };
  configurations.stored.set("MutatingWebhookConfiguration", JSON.parse(JSON.stringify(mutatingWebhookConfiguration({ target, caBundlePem: ca.certPem, scope: {} }))) as StoredConfiguration);
  configurations.stored.set("ValidatingWebhookConfiguration", JSON.parse(JSON.stringify(validatingWebhookConfiguration({ target, caBundlePem: ca.certPem, scope: {} }))) as StoredConfiguration);
  const secrets = new Secrets();
  await secrets.create(caSecret("ops", "webhook-ca", ca));
  const certificates = await selfSignedCertificates({ hosts: ["pod-decorator.ops.svc"], ca });
  const events: string[] = [];
  const options: WebhookTrustOptions = {
    configurations,
    configurationName: NAME,
    caBundle: () => certificates.caBundle(),
    caSecret: { secrets, namespace: "ops", name: "webhook-ca", certificates },
    events: { record: (object: KubeObject, type, reason, message) => events.push(`${type} ${reason} ${object.kind ?? ""}/${object.metadata?.name ?? ""}: ${message}`) },
    logger: pino({ level: "silent" }),
  };
  return { options, configurations, secrets, events, certificates };
}

describe("reconcileWebhookTrust", () => {
  it("changes nothing when everything is in place", async () => {
    const { options, configurations, events } = await world();
    expect(await reconcileWebhookTrust(options)).toEqual([]);
    expect(configurations.patches).toBe(0);
    expect(events).toEqual([]);
  });

  it("sets back a removed or changed caBundle, with a Warning Event naming the webhooks", async () => {
    const { options, configurations, events } = await world();
    delete configurations.stored.get("MutatingWebhookConfiguration")!.webhooks![0]!.clientConfig.caBundle;
    configurations.stored.get("ValidatingWebhookConfiguration")!.webhooks![2]!.clientConfig.caBundle = Buffer.from(other.certPem).toString("base64");
    expect(await reconcileWebhookTrust(options)).toHaveLength(2);
    for (const configuration of configurations.stored.values()) {
      for (const webhook of configuration.webhooks ?? []) expect(Buffer.from(webhook.clientConfig.caBundle ?? "", "base64").toString()).toBe(ca.certPem);
    }
    expect(events).toEqual([
      "Warning CABundleRestored MutatingWebhookConfiguration/pod-decorator: the caBundle of pods.pod-decorator.kusionstack.io was not the CA serving the webhooks; set back",
      "Warning CABundleRestored ValidatingWebhookConfiguration/pod-decorator: the caBundle of collasets.pod-decorator.kusionstack.io was not the CA serving the webhooks; set back",
    ]);
    expect(await reconcileWebhookTrust(options)).toEqual([]);
  });

  it("counts each repair by reason, but not what a first pass sets", async () => {
    const { options, configurations } = await world();
    const repairs: string[] = [];
    const counted = { ...options, onRepair: (reason: string) => repairs.push(reason) };
    delete configurations.stored.get("MutatingWebhookConfiguration")!.webhooks![0]!.clientConfig.caBundle;
    await reconcileWebhookTrust(counted, true);
    expect(repairs).toEqual([]);
    delete configurations.stored.get("ValidatingWebhookConfiguration")!.webhooks![0]!.clientConfig.caBundle;
    await reconcileWebhookTrust(counted);
    expect(repairs).toEqual(["CABundleRestored"]);
  });

  it("writes back a deleted CA Secret from the CA it serves with", async () => {
    const { options, secrets, events } = await world();
    secrets.stored = undefined;
    await reconcileWebhookTrust(options);
    expect(Buffer.from(secrets.stored!.data!["tls.crt"]!, "base64").toString()).toBe(ca.certPem);
    expect(events).toEqual(["Warning CASecretRestored Secret/webhook-ca: Secret ops/webhook-ca was missing; written back with the CA the webhooks serve from"]);
  });

  it("writes back a CA Secret that cannot be used, and keeps serving from its CA", async () => {
    const { options, secrets, events, certificates } = await world();
    secrets.stored!.data!["tls.key"] = Buffer.from(other.keyPem).toString("base64");
    await reconcileWebhookTrust(options);
    expect(Buffer.from(secrets.stored!.data!["tls.key"], "base64").toString()).toBe(ca.keyPem);
    expect(certificates.caBundle()).toBe(ca.certPem);
    expect(events).toEqual(["Warning CASecretRestored Secret/webhook-ca: Secret ops/webhook-ca holds a tls.key that does not belong to its tls.crt; written back with the CA the webhooks serve from"]);
  });

  it("adopts a valid CA put into the Secret: new serving certificates, and the caBundles follow", async () => {
    const { options, secrets, events, certificates, configurations } = await world();
    secrets.stored = { ...caSecret("ops", "webhook-ca", other), metadata: { ...secrets.stored!.metadata } };
    await reconcileWebhookTrust(options);
    expect(certificates.caBundle()).toBe(other.certPem);
    expect(new X509Certificate(certificates.current().certPem).verify(new X509Certificate(other.certPem).publicKey)).toBe(true);
    for (const configuration of configurations.stored.values()) {
      for (const webhook of configuration.webhooks ?? []) expect(Buffer.from(webhook.clientConfig.caBundle ?? "", "base64").toString()).toBe(other.certPem);
    }
    expect(events[0]).toBe("Normal CAAdopted Secret/webhook-ca: the CA in Secret ops/webhook-ca changed; serving certificates are issued from the new one");
  });

  it("creates a missing configuration again when told how, and otherwise reports the error", async () => {
    const { options, configurations, events } = await world();
    configurations.stored.delete("ValidatingWebhookConfiguration");
    await expect(reconcileWebhookTrust(options)).rejects.toThrow("not found");
    const created: ConfigurationKind[] = [];
    await reconcileWebhookTrust({ ...options, recreate: (kind) => Promise.resolve(void created.push(kind)) });
    expect(created).toEqual(["ValidatingWebhookConfiguration"]);
    expect(events).toEqual(["Warning WebhookConfigurationRestored ValidatingWebhookConfiguration/pod-decorator: ValidatingWebhookConfiguration pod-decorator was missing; created again"]);
  });

  it("sets what a chart leaves empty on a process's first pass without a Warning Event", async () => {
    const { options, configurations, events } = await world();
    for (const configuration of configurations.stored.values()) for (const webhook of configuration.webhooks ?? []) delete webhook.clientConfig.caBundle;
    expect(await reconcileWebhookTrust(options, true)).toHaveLength(2);
    expect(events).toEqual([]);
  });

  it("leaves alone the webhooks it does not own (outside a cluster: those calling another process's URL)", async () => {
    const { options, configurations, events } = await world();
    const mutating = configurations.stored.get("MutatingWebhookConfiguration")!;
    delete mutating.webhooks![0]!.clientConfig.caBundle;
    delete mutating.webhooks![1]!.clientConfig.caBundle;
    const owned = mutating.webhooks![1]!.name;
    expect(await reconcileWebhookTrust({ ...options, owns: () => false })).toEqual([]);
    mutating.webhooks![1]!.clientConfig = { ...mutating.webhooks![1]!.clientConfig, url: "owned" } as never;
    expect(await reconcileWebhookTrust({ ...options, owns: (clientConfig) => clientConfig.url === "owned" })).toHaveLength(1);
    expect(mutating.webhooks![0]!.clientConfig.caBundle).toBeUndefined();
    expect(events).toEqual([`Warning CABundleRestored MutatingWebhookConfiguration/pod-decorator: the caBundle of ${owned} was not the CA serving the webhooks; set back`]);
  });

  it("leaves the caBundles alone when they are not its to set", async () => {
    const { options, configurations } = await world();
    delete configurations.stored.get("MutatingWebhookConfiguration")!.webhooks![0]!.clientConfig.caBundle;
    expect(await reconcileWebhookTrust({ ...options, caBundle: () => undefined, caSecret: undefined })).toEqual([]);
    expect(configurations.patches).toBe(0);
  });
});
