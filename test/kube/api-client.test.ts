import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppsV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { apiClient, pooledAuthentication } from "../../src/kube/api-client.ts";
import { createCertificateAuthority, issueCertificate } from "../../src/webhook/certificates.ts";

interface Seen {
  connections: number;
  requests: { path: string; authorization: string | undefined; userAgent: string | undefined }[];
}

/** An HTTPS server that answers every GET with an empty Namespace and counts TLS connections. */
async function fakeApiServer(seen: Seen): Promise<{ server: Server; url: string; caPem: string }> {
  const ca = await createCertificateAuthority("test-ca", 1);
  const serving = await issueCertificate(ca, { commonName: "127.0.0.1", hosts: ["127.0.0.1"], usage: "server", validityDays: 1 });
  const server = createServer({ cert: serving.certPem, key: serving.keyPem }, (request, response) => {
    seen.requests.push({ path: request.url ?? "", authorization: request.headers.authorization, userAgent: request.headers["user-agent"] });
    response.setHeader("Content-Type", "application/json");
    response.end(JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "default" } }));
  });
  server.on("secureConnection", () => seen.connections++);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, caPem: ca.certPem };
}

function kubeConfig(server: string, caFile: string, token: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "test", server, caFile }],
    users: [{ name: "test", token }],
    contexts: [{ name: "test", cluster: "test", user: "test" }],
    currentContext: "test",
  });
  return config;
}

describe("API clients", () => {
  let dir: string;
  let fake: Awaited<ReturnType<typeof fakeApiServer>>;
  let seen: Seen;
  let config: KubeConfig;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "api-client-"));
    seen = { connections: 0, requests: [] };
    fake = await fakeApiServer(seen);
    await writeFile(join(dir, "ca.crt"), fake.caPem);
    config = kubeConfig(fake.url, join(dir, "ca.crt"), "secret-token");
  });

  afterEach(async () => {
    await pooledAuthentication(config).close();
    fake.server.closeAllConnections();
    fake.server.close();
    await rm(dir, { recursive: true, force: true });
  });

  // A response's connection goes back to the pool a moment after the body is read, so a request
  // sent at once may open a second one; a new connection per request would open one each.
  it("send the requests of every client of one KubeConfig over kept connections, authenticated", async () => {
    const core = apiClient(config, CoreV1Api);
    const apps = apiClient(config, AppsV1Api);
    for (let index = 0; index < 10; index++) await core.readNamespace({ name: "default" });
    await apps.getAPIResources().catch(() => undefined);
    await Promise.all([core.readNamespace({ name: "default" }), core.readNamespace({ name: "default" })]);

    expect(seen.requests).toHaveLength(13);
    expect(seen.requests.every((request) => request.authorization === "Bearer secret-token" && request.userAgent === "pod-decorator")).toBe(true);
    expect(seen.connections).toBeLessThanOrEqual(3);
  });

  it("open new connections when the TLS material changes, and keep those", async () => {
    const core = apiClient(config, CoreV1Api);
    for (let index = 0; index < 5; index++) await core.readNamespace({ name: "default" });
    const before = seen.connections;
    expect(before).toBeLessThanOrEqual(2);

    // The CA file is read for every request, as the library does: a rotated bundle takes effect.
    await writeFile(join(dir, "ca.crt"), `${fake.caPem}\n`);
    for (let index = 0; index < 5; index++) await core.readNamespace({ name: "default" });
    expect(seen.connections).toBeGreaterThan(before);
    expect(seen.connections).toBeLessThanOrEqual(before + 2);
  });

  it("fail a request whose server the CA does not vouch for", async () => {
    const other = await createCertificateAuthority("other-ca", 1);
    await writeFile(join(dir, "ca.crt"), other.certPem);
    await expect(apiClient(config, CoreV1Api).readNamespace({ name: "default" })).rejects.toThrow();
    expect(seen.requests).toHaveLength(0);
  });
});
