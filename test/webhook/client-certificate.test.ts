// With a client CA, the webhook server answers only callers presenting a certificate that CA
// signed (the API server, per its AdmissionConfiguration): anyone else on the pod network is
// refused at the TLS handshake, before a byte of an AdmissionReview is read. Also across a
// rotation of the serving certificate, which replaces the TLS context.
import { request } from "node:https";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { allow } from "../../src/webhook/admission-review.ts";
import { createCertificateAuthority, issueCertificate, type KeyPairPem } from "../../src/webhook/certificates.ts";
import { createWebhookMetrics } from "../../src/webhook/metrics.ts";
import { createWebhookServer, type WebhookServer } from "../../src/webhook/server.ts";
import { createWebhookCertificateAuthority, selfSignedCertificates, type SelfSignedCertificates } from "../../src/webhook/serving-certificates.ts";

const servers: WebhookServer[] = [];
const certificateSets: SelfSignedCertificates[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  for (const set of certificateSets.splice(0)) set.stop();
});

const review = JSON.stringify({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid: "4f6c6d1e-0000-4000-8000-000000000001", kind: { group: "", version: "v1", kind: "Pod" }, resource: { group: "", version: "v1", resource: "pods" }, operation: "CREATE", namespace: "team-a", object: { metadata: { name: "p" }, spec: { containers: [{ name: "app" }] } } },
});

async function serving(clientCaPem: string | undefined) {
  const certificates = await selfSignedCertificates({ hosts: ["127.0.0.1"] });
  certificateSets.push(certificates);
  const app = await createWebhookServer({
    logger: pino({ level: "silent" }),
    metrics: createWebhookMetrics(new Registry()),
    readiness: () => ({ ready: true }),
    certificates,
    ...(clientCaPem === undefined ? {} : { clientCaPem }),
    handlers: { "mutate-pods": (admission) => ({ response: allow(admission.uid), result: "allowed" }) },
  });
  servers.push(app);
  await app.listen({ host: "127.0.0.1", port: 0 });
  return { port: (app.server.address() as AddressInfo).port, serverCa: certificates.caBundle() ?? "", certificates };
}

/** The status of a POST of the review, or the error that ended the connection first. */
function post(port: number, serverCa: string, client?: KeyPairPem): Promise<{ status: number } | { error: string }> {
  return new Promise((resolve) => {
    const call = request({
      host: "127.0.0.1",
      port,
      path: "/mutate-pods",
      method: "POST",
      ca: serverCa,
      ...(client === undefined ? {} : { cert: client.certPem, key: client.keyPem }),
      headers: { "content-type": "application/json" },
      agent: false,
    }, (response) => {
      response.resume();
      response.on("end", () => resolve({ status: response.statusCode ?? 0 }));
    });
    call.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    call.end(review);
  });
}

describe("the webhook server with a client CA", () => {
  it("answers a caller with a certificate the CA signed, and refuses others at the handshake", async () => {
    const apiServerCa = await createCertificateAuthority("api-server-clients", 1);
    const otherCa = await createCertificateAuthority("someone-else", 1);
    const apiServer = await issueCertificate(apiServerCa, { commonName: "kube-apiserver-webhook-client", usage: "client", validityDays: 1 });
    const impostor = await issueCertificate(otherCa, { commonName: "kube-apiserver-webhook-client", usage: "client", validityDays: 1 });
    const { port, serverCa, certificates } = await serving(apiServerCa.certPem);

    expect(await post(port, serverCa, apiServer)).toEqual({ status: 200 });
    const anonymous = await post(port, serverCa);
    expect(anonymous).toHaveProperty("error");
    expect(await post(port, serverCa, impostor)).toHaveProperty("error");

    // A new serving certificate replaces the TLS context: the client CA must come with it.
    await certificates.useAuthority(await createWebhookCertificateAuthority());
    expect(await post(port, certificates.caBundle() ?? "", apiServer)).toEqual({ status: 200 });
    expect(await post(port, certificates.caBundle() ?? "")).toHaveProperty("error");
  });

  it("asks no certificate without one", async () => {
    const { port, serverCa } = await serving(undefined);
    expect(await post(port, serverCa)).toEqual({ status: 200 });
  });
});
