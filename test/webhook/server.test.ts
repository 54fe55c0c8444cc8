import { X509Certificate } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { allow, allowWithPatch } from "../../src/webhook/admission-review.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustNobody } from "../../src/webhook/requester-trust.ts";
import { createWebhookMetrics } from "../../src/webhook/metrics.ts";
import { createWebhookServer, type AdmissionHandler, type WebhookServer } from "../../src/webhook/server.ts";
import { createCertificateAuthority, issueCertificate } from "../../src/webhook/certificates.ts";
import { fileCertificates, selfSignedCertificates } from "../../src/webhook/serving-certificates.ts";

const logger = pino({ level: "silent" });
const servers: WebhookServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function server(handler: AdmissionHandler, ready = true) {
  const registry = new Registry();
  const app = await createWebhookServer({
    logger,
    metrics: createWebhookMetrics(registry),
    readiness: () => (ready ? { ready: true } : { ready: false, reason: "caches not synced" }),
    handlers: { "mutate-pods": handler },
  });
  servers.push(app);
  return { app, registry };
}

function podReview(uid = "4f6c6d1e-0000-4000-8000-000000000001") {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group: "", version: "v1", kind: "Pod" },
      operation: "CREATE",
      namespace: "default",
      object: { metadata: { name: "p" }, spec: { containers: [{ name: "app", image: "app:1" }] } },
    },
  };
}

const labelling: AdmissionHandler = (request) => ({
  response: allowWithPatch(request.uid, [{ op: "add", path: "/metadata/labels", value: { a: "b" } }], ["a warning"]),
  result: "injected",
});

describe("the webhook server", () => {
  it("echoes the uid and returns a base64 JSON Patch with warnings", async () => {
    const { app } = await server(labelling);
    const response = await app.inject({ method: "POST", url: "/mutate-pods", payload: podReview("uid-123") });
    expect(response.statusCode).toBe(200);
    const body = response.json<{ apiVersion: string; kind: string; response: { uid: string; allowed: boolean; patchType: string; patch: string; warnings: string[] } }>();
    expect(body.apiVersion).toBe("admission.k8s.io/v1");
    expect(body.kind).toBe("AdmissionReview");
    expect(body.response.uid).toBe("uid-123");
    expect(body.response.allowed).toBe(true);
    expect(body.response.patchType).toBe("JSONPatch");
    expect(JSON.parse(Buffer.from(body.response.patch, "base64").toString())).toEqual([{ op: "add", path: "/metadata/labels", value: { a: "b" } }]);
    expect(body.response.warnings).toEqual(["a warning"]);
  });

  it("sends helmet's security headers (no CSP: a JSON API) on every answer, refusals and health included", async () => {
    const { app } = await server(labelling);
    for (const response of [
      await app.inject({ method: "POST", url: "/mutate-pods", payload: podReview() }),
      await app.inject({ method: "POST", url: "/mutate-pods", payload: "not json", headers: { "content-type": "application/json" } }),
      await app.inject({ method: "GET", url: "/healthz" }),
    ]) {
      expect(response.headers["strict-transport-security"]).toBe("max-age=31536000; includeSubDomains");
      expect(response.headers["x-content-type-options"]).toBe("nosniff");
      expect(response.headers["x-frame-options"]).toBe("SAMEORIGIN");
      expect(response.headers["content-security-policy"]).toBeUndefined();
    }
  });

  it("answers a body that is not JSON with 400 and a reason", async () => {
    const { app } = await server(labelling);
    const response = await app.inject({ method: "POST", url: "/mutate-pods", headers: { "content-type": "application/json" }, payload: '{"apiVersion": "admission.k8s.io/v1", "kind": ' });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ message: string }>().message).toMatch(/JSON/i);
  });

  it("answers an AdmissionReview without a uid with 400 naming the field", async () => {
    const { app } = await server(labelling);
    const review = podReview();
    const { uid: _uid, ...withoutUid } = review.request;
    const response = await app.inject({ method: "POST", url: "/mutate-pods", payload: { ...review, request: withoutUid } });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ message: string }>().message).toMatch(/^request(\.uid)?: .*uid/);
  });

  it("answers an unknown operation with 400 listing the allowed ones", async () => {
    const { app } = await server(labelling);
    const review = podReview();
    const response = await app.inject({ method: "POST", url: "/mutate-pods", payload: { ...review, request: { ...review.request, operation: "PATCH" } } });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ message: string }>().message).toBe("request.operation: must be one of CREATE, UPDATE, DELETE, CONNECT");
  });

  it("answers a body over the limit with 413", async () => {
    const { app } = await server(labelling);
    const review = podReview();
    // The API server's own limit on a request: 3 MiB.
    const huge = { ...review, request: { ...review.request, object: { metadata: { annotations: { big: "x".repeat(3 * 1024 * 1024) } } } } };
    const response = await app.inject({ method: "POST", url: "/mutate-pods", payload: huge });
    expect(response.statusCode).toBe(413);
  });

  it("answers a request beyond the in-flight limits with 429, Retry-After and a reason, before reading its body", async () => {
    let unblock: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (unblock = resolve));
    let entered: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (entered = resolve));
    const registry = new Registry();
    const app = await createWebhookServer({
      logger,
      metrics: createWebhookMetrics(registry),
      readiness: () => ({ ready: true }),
      handlers: {
        "mutate-pods": async (request) => {
          entered();
          await blocked;
          return { response: allow(request.uid), result: "allowed" };
        },
      },
      limits: { maxInFlight: 1 },
    });
    servers.push(app);
    const first = app.inject({ method: "POST", url: "/mutate-pods", payload: podReview() });
    // The first request holds the one slot once its handler runs.
    await inFlight;
    const second = await app.inject({ method: "POST", url: "/mutate-pods", payload: podReview() });
    expect(second.statusCode).toBe(429);
    expect(second.headers["retry-after"]).toBe("1");
    expect(second.json<{ message: string }>().message).toBe("pod-decorator: 1 admission requests are in flight (at most 1); retry after 1 s");
    unblock();
    expect((await first).statusCode).toBe(200);
    // The slot is free again.
    expect((await app.inject({ method: "POST", url: "/mutate-pods", payload: podReview() })).statusCode).toBe(200);
    expect(await registry.metrics()).toContain('pod_decorator_webhook_results_total{webhook="mutate-pods",result="throttled"} 1');
  });

  it("answers 503 before the deadline the API server gives in its timeout parameter, so its failurePolicy applies", async () => {
    const app = await createWebhookServer({
      logger,
      metrics: createWebhookMetrics(new Registry()),
      readiness: () => ({ ready: true }),
      handlers: { "mutate-pods": () => new Promise(() => undefined) },
    });
    servers.push(app);
    const started = performance.now();
    const response = await app.inject({ method: "POST", url: "/mutate-pods?timeout=1s", payload: podReview() });
    const elapsed = performance.now() - started;
    expect(response.statusCode).toBe(503);
    expect(response.json<{ message: string }>().message).toBe("pod-decorator: no answer within 800 ms, the deadline below the API server's timeout");
    expect(elapsed).toBeGreaterThanOrEqual(790);
    expect(elapsed).toBeLessThan(1000);
  });

  it("leaves an integer JavaScript cannot hold exactly out of the patch, so the API server keeps it as sent", async () => {
    const { app } = await server(podMutation({
      source: { decorations: () => [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "proxy", namespace: "default" }, spec: { selector: {}, template: { containers: [{ name: "proxy", image: "proxy:1" }], tolerations: [{ key: "x", operator: "Exists" }] } } }], revisionData: () => undefined },
      onDecorationError: "reject",
      trustRequester: trustNobody,
    }));
    const text = JSON.stringify(podReview()).replace('"containers":[{"name":"app","image":"app:1"}]', '"containers":[{"name":"app","image":"app:1","livenessProbe":{"exec":{"command":["true"]},"terminationGracePeriodSeconds":9223372036854775807}}],"tolerations":[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":9223372036854775807}]');
    const response = await app.inject({ method: "POST", url: "/mutate-pods", headers: { "content-type": "application/json" }, payload: text });
    const patch = Buffer.from(response.json<{ response: { patch: string } }>().response.patch, "base64").toString();
    // The app container moved one place and the toleration stayed: neither is in the patch.
    expect(patch).not.toContain("922337203685477");
    expect((JSON.parse(patch) as { op: string; path: string }[]).map(({ op, path }) => `${op} ${path}`)).toEqual([
      "add /metadata/annotations",
      "add /metadata/labels",
      "add /spec/containers/0",
      "add /spec/tolerations/1",
    ]);
  });

  it("turns a handler exception into a denied AdmissionReview and counts it as an error", async () => {
    const { app, registry } = await server(() => {
      throw new Error("boom");
    });
    const response = await app.inject({ method: "POST", url: "/mutate-pods", payload: podReview("uid-9") });
    expect(response.statusCode).toBe(200);
    const body = response.json<{ response: { uid: string; allowed: boolean; status: { code: number; message: string } } }>();
    expect(body.response).toMatchObject({ uid: "uid-9", allowed: false, status: { code: 500 } });
    expect(body.response.status.message).toContain("boom");
    const metrics = await registry.metrics();
    expect(metrics).toContain('pod_decorator_webhook_results_total{webhook="mutate-pods",result="error"} 1');
    expect(metrics).toContain('controller_runtime_webhook_requests_total{webhook="mutate-pods",code="200"} 1');
  });

  it("is not ready until its readiness check says so", async () => {
    const notReady = await server(labelling, false);
    const response = await notReady.app.inject({ method: "GET", url: "/readyz" });
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain("caches not synced");
    const ready = await server(labelling, true);
    expect((await ready.app.inject({ method: "GET", url: "/readyz" })).body).toBe("ok");
    expect((await ready.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
  });

  it("serves HTTPS and presents rotated certificate files to new connections without a restart", async () => {
    const dir = await mkdtemp(join(tmpdir(), "webhook-tls-"));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const ca = await createCertificateAuthority("test-ca", 1);
    const write = async () => {
      const pair = await issueCertificate(ca, { commonName: "webhook", hosts: ["127.0.0.1"], usage: "server", validityDays: 1 });
      // Key first, then certificate: a poll in between sees a mismatched pair and keeps the old one.
      await writeFile(join(dir, "tls.key"), pair.keyPem);
      await writeFile(join(dir, "tls.crt"), pair.certPem);
      return new X509Certificate(pair.certPem).fingerprint256;
    };
    const firstFingerprint = await write();
    const certificates = await fileCertificates({ certFile: join(dir, "tls.crt"), keyFile: join(dir, "tls.key"), pollIntervalMs: 25 });
    const app = await createWebhookServer({
      logger,
      metrics: createWebhookMetrics(new Registry()),
      readiness: () => ({ ready: true }),
      handlers: { "mutate-pods": labelling },
      certificates,
    });
    servers.push(app);
    await app.listen({ host: "127.0.0.1", port: 0 });
    const port = (app.server.address() as AddressInfo).port;
    expect((await peerCertificate(port, ca.certPem)).fingerprint256).toBe(firstFingerprint);

    const secondFingerprint = await write();
    expect(secondFingerprint).not.toBe(firstFingerprint);
    const deadline = Date.now() + 5000;
    let seen = firstFingerprint;
    while (seen !== secondFingerprint && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 25));
      seen = (await peerCertificate(port, ca.certPem)).fingerprint256;
    }
    expect(seen).toBe(secondFingerprint);
    certificates.stop();
  });

  it("issues a self-signed serving certificate for the given hosts, trusted by its CA bundle", async () => {
    const certificates = await selfSignedCertificates({ hosts: ["127.0.0.1", "pod-decorator.system.svc"], certValidityDays: 1 });
    const certificate = new X509Certificate(certificates.current().certPem);
    expect(certificate.subjectAltName).toBe("IP Address:127.0.0.1, DNS:pod-decorator.system.svc");
    expect(certificate.verify(new X509Certificate(certificates.caBundle()!).publicKey)).toBe(true);
    const before = certificates.current().certPem;
    await certificates.renew();
    expect(certificates.current().certPem).not.toBe(before);
    expect(new X509Certificate(certificates.current().certPem).verify(new X509Certificate(certificates.caBundle()!).publicKey)).toBe(true);
    certificates.stop();
  });
});

function peerCertificate(port: number, ca: string): Promise<{ fingerprint256: string; serialNumber: string }> {
  return new Promise((done, fail) => {
    const request = httpsRequest({ host: "127.0.0.1", port, path: "/healthz", ca, agent: false }, (response) => {
      const socket = response.socket as unknown as { getPeerCertificate(): { fingerprint256: string; serialNumber: string } };
      const certificate = socket.getPeerCertificate();
      response.resume();
      response.on("end", () => done(certificate));
    });
    request.on("error", fail);
    request.end();
  });
}

describe("the webhook server before it is ready", () => {
  it("fails admission calls with 503 so the API server applies the failure policy", async () => {
    const { app } = await server(labelling, false);
    const response = await app.inject({ method: "POST", url: "/mutate-pods", payload: podReview() });
    expect(response.statusCode).toBe(503);
    expect(response.json<{ message: string }>().message).toBe("not ready: caches not synced");
  });
});
