// Issue 29, "who may call": a control plane of its own whose kube-apiserver presents a client
// certificate to webhooks (an AdmissionConfiguration with a kubeconfig naming the webhook's
// host:port), and serve run with --client-ca-file. The API server's calls go through (pods are
// decorated); a caller on the network without that certificate — the pod author's hand-made
// AdmissionReview — is refused at the TLS handshake and learns nothing.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as toYaml } from "yaml";
import { apiClient } from "../src/kube/api-client.ts";
import { createCertificateAuthority, issueCertificate, type KeyPairPem } from "../src/webhook/certificates.ts";
import { startControlPlane, stopControlPlane, type ControlPlane } from "./controlplane/controlplane.ts";
import { freePorts } from "./controlplane/processes.ts";
import { loadKubeConfigFile, startServeProcess, type ServeProcess } from "./support/serve-process.ts";
import { eventually } from "./support/polling.ts";

const CRDS = fileURLToPath(new URL("../config/crd/", import.meta.url));

let dir: string;
let plane: ControlPlane;
let serve: ServeProcess;
let apiServerClient: KeyPairPem;
let otherClient: KeyPairPem;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "pod-decorator-client-certificate-"));
  const [webhookPort = 0] = await freePorts(1);
  const clientCa = await createCertificateAuthority("kube-apiserver-webhook-clients", 1);
  apiServerClient = await issueCertificate(clientCa, { commonName: "kube-apiserver", usage: "client", validityDays: 1 });
  otherClient = await issueCertificate(await createCertificateAuthority("someone-else", 1), { commonName: "kube-apiserver", usage: "client", validityDays: 1 });
  const file = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text, { mode: 0o600 });
    return path;
  };
  const clientCaFile = await file("client-ca.crt", clientCa.certPem);
  // The API server picks the credentials for a webhook URL by its host:port.
  const webhookKubeconfig = await file("webhook-kubeconfig.yaml", toYaml({
    apiVersion: "v1",
    kind: "Config",
    users: [{ name: `127.0.0.1:${webhookPort}`, user: { "client-certificate": await file("client.crt", apiServerClient.certPem), "client-key": await file("client.key", apiServerClient.keyPem) } }],
  }));
  const webhookAdmission = { apiVersion: "apiserver.config.k8s.io/v1", kind: "WebhookAdmissionConfiguration", kubeConfigFile: webhookKubeconfig };
  const admissionConfiguration = await file("admission.yaml", toYaml({
    apiVersion: "apiserver.config.k8s.io/v1",
    kind: "AdmissionConfiguration",
    plugins: [{ name: "MutatingAdmissionWebhook", configuration: webhookAdmission }, { name: "ValidatingAdmissionWebhook", configuration: webhookAdmission }],
  }));
  plane = await startControlPlane(join(dir, "plane"), { ownerPid: process.pid, crds: [CRDS], apiserverArgs: [`--admission-control-config-file=${admissionConfiguration}`] });
  // Starting waits until the API server demonstrably calls serve: a dry-run pod is decorated.
  serve = await startServeProcess({ kubeconfig: plane.kubeconfig, webhookPort, args: [`--client-ca-file=${clientCaFile}`], clientCertificate: apiServerClient });
}, 300_000);

afterAll(async () => {
  await serve?.stop();
  if (plane !== undefined) await stopControlPlane(plane.dir);
  await rm(dir, { recursive: true, force: true });
});

/** A hand-made AdmissionReview sent straight to serve's webhook port: its status, or the error that ended the connection. */
function callDirectly(client: KeyPairPem | undefined): Promise<{ status: number; body: string } | { error: string }> {
  const review = JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: { uid: "4f6c6d1e-0000-4000-8000-000000000001", kind: { group: "", version: "v1", kind: "Pod" }, resource: { group: "", version: "v1", resource: "pods" }, operation: "CREATE", namespace: "tenant", object: { metadata: { name: "p", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "app:1" }] } } },
  });
  return new Promise((resolve) => {
    const call = request({
      host: "127.0.0.1",
      port: serve.port,
      path: "/mutate-pods",
      method: "POST",
      rejectUnauthorized: false,
      headers: { "content-type": "application/json" },
      agent: false,
      ...(client === undefined ? {} : { cert: client.certPem, key: client.keyPem }),
    }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    call.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    call.end(review);
  });
}

describe("a webhook that requires the API server's client certificate", () => {
  it("decorates pods the API server sends, and refuses any other caller at the handshake", async () => {
    const config = loadKubeConfigFile(plane.kubeconfig);
    const core = apiClient(config, CoreV1Api);
    const custom = apiClient(config, CustomObjectsApi);
    await core.createNamespace({ body: { metadata: { name: "tenant" } } });
    await custom.createNamespacedCustomObject({
      group: "apps.kusionstack.io",
      version: "v1alpha1",
      namespace: "tenant",
      plural: "poddecorations",
      body: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "secret-env" }, spec: { selector: { matchLabels: { app: "web" } }, template: { primaryContainers: [{ env: [{ name: "TOKEN", value: "platform-only" }] }] } } },
    });
    // The decoration reaches serve's cache through its informer: the next pod carries it.
    const env = await eventually(async () => {
      const pod = await core.createNamespacedPod({ namespace: "tenant", body: { metadata: { generateName: "web-", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "app:1" }] } }, dryRun: "All" });
      const value = pod.spec?.containers[0]?.env?.find((variable) => variable.name === "TOKEN")?.value;
      return value;
    }, 30_000, "a pod decorated through the API server's authenticated call");
    expect(env).toBe("platform-only");

    for (const client of [undefined, otherClient]) {
      const answer = await callDirectly(client);
      expect(answer, JSON.stringify(answer)).toHaveProperty("error");
      expect(JSON.stringify(answer)).not.toContain("platform-only");
    }
    // The same hand-made review with the API server's certificate is answered: the refusal
    // above is the certificate's, not the review's.
    const authenticated = await callDirectly(apiServerClient);
    expect(authenticated).toMatchObject({ status: 200 });
  }, 120_000);
});
