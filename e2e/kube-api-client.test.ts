// src/kube/api-client.ts against the real API server: the clients made from one kubeconfig share
// kept connections (the library's own clients open one per request), authenticate as the
// kubeconfig says, name themselves pod-decorator, and open new connections only when the TLS
// material changes. Connections are counted where undici reports them (diagnostics channel).
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppsV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect } from "vitest";
import { apiClient, pooledAuthentication } from "../src/kube/api-client.ts";
import { createCertificateAuthority } from "../src/webhook/certificates.ts";
import { kubeConfig, test } from "./support/cluster.ts";

const CONNECTED = "undici:client:connected";

describe("API clients on the real API server", () => {
  let dir: string;
  let connections = 0;
  const counted = () => connections++;
  const configs: KubeConfig[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "kube-api-client-"));
    subscribe(CONNECTED, counted);
  });

  afterEach(async () => {
    unsubscribe(CONNECTED, counted);
    for (const config of configs.splice(0)) await pooledAuthentication(config).close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The run's kubeconfig, its cluster's CA read from `caFile` (as in a pod: the file may be rotated). */
  async function withCaFile(caPem: string): Promise<{ config: KubeConfig; caFile: string }> {
    const base = kubeConfig();
    const cluster = base.getCurrentCluster()!;
    const caFile = join(dir, "ca.crt");
    await writeFile(caFile, caPem);
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: cluster.name, server: cluster.server, caFile }],
      users: base.users,
      contexts: base.contexts,
      currentContext: base.currentContext,
    });
    configs.push(config);
    return { config, caFile };
  }

  const clusterCa = () => Buffer.from(kubeConfig().getCurrentCluster()!.caData!, "base64").toString("utf8");

  // A response's connection goes back to the pool a moment after its body is read, so a request
  // sent at once may open a second one; a new connection per request would open one each.
  test("every client of one kubeconfig sends its requests over kept connections, authenticated, as pod-decorator", async ({ namespace }) => {
    const config = kubeConfig();
    configs.push(config);
    const core = apiClient(config, CoreV1Api);
    const apps = apiClient(config, AppsV1Api);
    connections = 0;
    for (let index = 0; index < 10; index++) expect((await core.readNamespace({ name: namespace })).metadata?.name).toBe(namespace);
    await apps.listNamespacedDeployment({ namespace });
    await Promise.all([core.readNamespace({ name: namespace }), core.readNamespace({ name: namespace })]);
    expect(connections).toBeGreaterThan(0);
    expect(connections).toBeLessThanOrEqual(3);

    // Without a field manager the API server names the manager after the User-Agent.
    const created = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "agent" }, data: { a: "1" } } });
    expect(created.metadata?.managedFields?.map((entry) => entry.manager)).toEqual(["pod-decorator"]);
  });

  test("a rewritten CA file opens new connections, which are kept in turn", async ({ namespace }) => {
    const ca = clusterCa();
    const { config, caFile } = await withCaFile(ca);
    const core = apiClient(config, CoreV1Api);
    connections = 0;
    for (let index = 0; index < 5; index++) await core.readNamespace({ name: namespace });
    const before = connections;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThanOrEqual(2);

    // The CA file is read for every request, as the library does: a rotated bundle takes effect.
    await writeFile(caFile, `${ca}\n`);
    for (let index = 0; index < 5; index++) await core.readNamespace({ name: namespace });
    expect(connections).toBeGreaterThan(before);
    expect(connections).toBeLessThanOrEqual(before + 2);
  });

  test("a CA that does not vouch for the API server fails the request", async ({ namespace }) => {
    const other = await createCertificateAuthority("other-ca", 1);
    const { config } = await withCaFile(other.certPem);
    await expect(apiClient(config, CoreV1Api).readNamespace({ name: namespace })).rejects.toThrow();
  });
});
