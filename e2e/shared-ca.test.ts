// The self-signed webhook CA shared by replicas through a Secret, on the real API server.
import { X509Certificate } from "node:crypto";
import { describe, expect } from "vitest";
import { createKubeClient } from "../src/kube/client.ts";
import { issueCertificate } from "../src/webhook/certificates.ts";
import { createWebhookCertificateAuthority } from "../src/webhook/serving-certificates.ts";
import { sharedCertificateAuthority } from "../src/webhook/shared-ca.ts";
import { clients, kubeConfig, test } from "./support/cluster.ts";

describe("the shared webhook CA", () => {
  test("replicas starting together end up signing with one CA, kept in a TLS Secret", async ({ namespace }) => {
    const secrets = createKubeClient(kubeConfig()).core.secrets;
    let issued = 0;
    const create = () => {
      issued++;
      return createWebhookCertificateAuthority();
    };
    const cas = await Promise.all([1, 2, 3].map(() => sharedCertificateAuthority(secrets, namespace, "webhook-ca", create)));
    expect(new Set(cas.map((ca) => ca.certPem)).size).toBe(1);
    // A restart loads it rather than issuing another.
    const again = await sharedCertificateAuthority(secrets, namespace, "webhook-ca", create);
    expect(again.certPem).toBe(cas[0]!.certPem);
    expect(issued).toBeLessThanOrEqual(3);

    const secret = await clients().core.readNamespacedSecret({ namespace, name: "webhook-ca" });
    expect(secret.type).toBe("kubernetes.io/tls");
    // What a replica signs with the loaded CA verifies against the CA everyone publishes.
    const serving = await issueCertificate(again, { commonName: "svc", hosts: ["svc.ns.svc"], usage: "server", validityDays: 1 });
    expect(new X509Certificate(serving.certPem).verify(new X509Certificate(cas[1]!.certPem).publicKey)).toBe(true);
  });

  test("says what to do with a Secret that holds no CA", async ({ namespace }) => {
    await clients().core.createNamespacedSecret({ namespace, body: { metadata: { name: "webhook-ca" }, stringData: { other: "x" } } });
    const secrets = createKubeClient(kubeConfig()).core.secrets;
    await expect(sharedCertificateAuthority(secrets, namespace, "webhook-ca", () => createWebhookCertificateAuthority())).rejects.toThrow(
      `Secret ${namespace}/webhook-ca has no tls.crt and tls.key: delete it to have a new CA issued`,
    );
  });
});
