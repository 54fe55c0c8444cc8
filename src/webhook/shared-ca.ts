// The self-signed webhook CA, shared by every replica through a Secret in the controller's
// namespace: the webhook configurations hold one caBundle, so all replicas must serve
// certificates from the same CA. The first replica to start creates it; the others, and
// restarts, load it; webhook-trust.ts keeps it there.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { isAlreadyExists, isNotFound } from "../kube/errors.ts";
import type { Secret } from "../kube/objects.ts";
import type { ResourceClient } from "../kube/resource-client.ts";
import { loadCertificateAuthority, type CertificateAuthority } from "./certificates.ts";

export type SecretStore = Pick<ResourceClient<Secret>, "get" | "create">;

export async function sharedCertificateAuthority(
  secrets: SecretStore,
  namespace: string,
  name: string,
  create: () => Promise<CertificateAuthority>,
): Promise<CertificateAuthority> {
  const existing = await read(secrets, namespace, name);
  if (existing !== undefined) return existing;
  const ca = await create();
  try {
    await secrets.create(caSecret(namespace, name, ca));
    return ca;
  } catch (error) {
    // Another replica created it first: use theirs.
    if (!isAlreadyExists(error)) throw error;
    const winner = await read(secrets, namespace, name);
    if (winner === undefined) throw new Error(`Secret ${namespace}/${name} exists but could not be read back`, { cause: error });
    return winner;
  }
}

/** The Secret that holds `ca` (kubernetes.io/tls: tls.crt and tls.key). */
export function caSecret(namespace: string, name: string, ca: CertificateAuthority): Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace, labels: { "app.kubernetes.io/name": "pod-decorator", "app.kubernetes.io/component": "webhook-ca" } },
    type: "kubernetes.io/tls",
    data: { "tls.crt": Buffer.from(ca.certPem).toString("base64"), "tls.key": Buffer.from(ca.keyPem).toString("base64") },
  };
}

/** The CA a Secret holds, or what is wrong with it, to follow "Secret NS/NAME" (missing keys, unreadable, a key that does not match, not a CA). */
export async function caFromSecret(secret: Secret): Promise<{ ca: CertificateAuthority } | { invalid: string }> {
  const certPem = decode(secret.data?.["tls.crt"]);
  const keyPem = decode(secret.data?.["tls.key"]);
  if (certPem === undefined || keyPem === undefined) return { invalid: "has no tls.crt and tls.key" };
  try {
    const certificate = new X509Certificate(certPem);
    if (!certificate.ca) return { invalid: "holds a tls.crt that is not a CA certificate" };
    if (!certificate.checkPrivateKey(createPrivateKey(keyPem))) return { invalid: "holds a tls.key that does not belong to its tls.crt" };
    return { ca: await loadCertificateAuthority({ certPem, keyPem }) };
  } catch (error) {
    return { invalid: `holds a tls.crt and tls.key that cannot be read (${error instanceof Error ? error.message : String(error)})` };
  }
}

async function read(secrets: SecretStore, namespace: string, name: string): Promise<CertificateAuthority | undefined> {
  let secret: Secret;
  try {
    secret = await secrets.get(namespace, name);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
  const found = await caFromSecret(secret);
  if ("invalid" in found) throw new Error(`Secret ${namespace}/${name} ${found.invalid}: delete it to have a new CA issued`);
  return found.ca;
}

function decode(value: string | undefined): string | undefined {
  return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
}
