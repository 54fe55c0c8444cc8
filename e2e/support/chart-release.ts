// `pod-decorator serve` run as the chart's pod would run it: the chart rendered into a test
// namespace and applied (nothing runs its Deployment: there is no kubelet), and serve started
// here with the Deployment's own arguments and environment, authenticated as the chart's
// ServiceAccount by a token from the TokenRequest API. The API server reaches it through the
// chart's Service: a private kube-apiserver with aggregator routing resolves the Service to an
// EndpointSlice (before 1.36, Endpoints) on this machine's address and checks the certificate against
// <service>.<namespace>.svc, as in a cluster. It writes an audit log of every request a service
// account makes, so a test can compare what serve did with what the chart grants.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, DiscoveryV1Api, KubeConfig } from "@kubernetes/client-node";
import { inject } from "vitest";
import { stringify as toYaml } from "yaml";
import { manifestObjects, renderChart, type KubeManifest } from "../helm/helm.ts";
import { privateApiServer, type PrivateApiServer } from "../runtime-control-plane.ts";
import { kubeConfig, kubectl } from "./cluster.ts";
import { freePort, startOperator, type Operator } from "./operator.ts";
import { apiClient } from "../../src/kube/api-client.ts";
import { parseKubernetesVersion } from "../../src/api/kubernetes-versions.ts";

export const RELEASE = "pod-decorator";

export interface ChartRelease {
  namespace: string;
  /** Everything the chart rendered (CRDs excluded: the control plane has them). */
  objects: KubeManifest[];
  serviceAccount: string;
  /** The private API server serve talks to; api.config is cluster-admin on it. */
  api: PrivateApiServer;
  /** A kubeconfig for the private API server with the ServiceAccount's token. */
  serviceAccountKubeconfig: string;
  operator: Operator;
  /** Writes a kubeconfig for the private API server that authenticates with only this token. */
  tokenKubeconfig(token: string): Promise<string>;
  /** Requests by service accounts, as the API server audited them (complete responses only). */
  auditEvents(): Promise<AuditEvent[]>;
  /** Stops serve and the API server, removes the release's cluster-scoped objects. */
  stop(): Promise<void>;
}

export interface AuditEvent {
  stage: string;
  verb: string;
  user: { username: string };
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  annotations?: Record<string, string>;
  requestURI: string;
}

export interface ChartReleaseOptions {
  /** The release namespace (must exist). */
  namespace: string;
  /** Chart values on top of the defaults (the ports are chosen here). */
  values?: Record<string, unknown>;
}

/** The flags every chart release test's API server adds to the shared server's. */
function apiServerFlags(dir: string): string[] {
  return [
    // Service-backed webhooks are called at an endpoint's address instead of the Service's
    // ClusterIP, which nothing routes here.
    "--enable-aggregator-routing=true",
    `--audit-policy-file=${join(dir, "audit-policy.yaml")}`,
    `--audit-log-path=${join(dir, "audit.log")}`,
    "--audit-log-format=json",
    // As on OpenShift and hardened clusters: setting blockOwnerDeletion needs update on the
    // owner's finalizers, which the chart must grant for the revisions serve creates.
    "--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
  ];
}

const auditPolicy = {
  apiVersion: "audit.k8s.io/v1",
  kind: "Policy",
  omitStages: ["RequestReceived", "ResponseStarted"],
  rules: [
    { level: "Metadata", userGroups: ["system:serviceaccounts"] },
    { level: "None" },
  ],
};

/** This machine's first non-loopback IPv4 address: EndpointSlices refuse loopback ones. */
function hostAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((address) => address.family === "IPv4" && !address.internal);
    if (found !== undefined) return found.address;
  }
  throw new Error("this machine has no non-loopback IPv4 address for the webhook Service's EndpointSlice");
}

function deepMerge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = merged[key];
    merged[key] = isRecord(current) && isRecord(value) ? deepMerge(current, value) : value;
  }
  return merged;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function only(objects: readonly KubeManifest[], kind: string): KubeManifest {
  const found = objects.filter((object) => object.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind} in the chart, found ${found.length}`);
  return found[0] as KubeManifest;
}

export async function startChartRelease(options: ChartReleaseOptions): Promise<ChartRelease> {
  const { namespace } = options;
  const dir = await mkdtemp(join(tmpdir(), "pod-decorator-chart-release-"));
  await writeFile(join(dir, "audit-policy.yaml"), toYaml(auditPolicy));
  const [port, metricsPort, healthPort] = [await freePort(), await freePort(), await freePort()];
  const values = deepMerge({ webhook: { port }, metrics: { port: metricsPort }, health: { port: healthPort } }, options.values ?? {});
  const objects = manifestObjects(await renderChart({ release: RELEASE, namespace, values }));
  const cleanups: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
  };

  try {
    const api = await privateApiServer({ extraFlags: apiServerFlags(dir) });
    cleanups.push(() => api.kill());
    const applied = await kubectl(["apply", "--server-side", "--field-manager=helm", "-f", "-"], objects.map((object) => toYaml(object)).join("---\n"));
    if (applied.code !== 0) throw new Error(`applying the chart failed: ${applied.stderr}`);
    cleanups.push(async () => {
      for (const object of objects.filter((item) => item.metadata.namespace === undefined)) {
        await kubectl(["delete", object.kind, object.metadata.name, "--ignore-not-found", "--wait=false"]);
      }
    });

    const service = only(objects, "Service");
    await apiClient(api.config, DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace,
      body: {
        metadata: { name: `${service.metadata.name}-test`, labels: { "kubernetes.io/service-name": service.metadata.name } },
        addressType: "IPv4",
        endpoints: [{ addresses: [hostAddress()], conditions: { ready: true } }],
        ports: [{ name: "webhook", port, protocol: "TCP" }],
      },
    });
    // Before 1.36 (checked: 1.30.14 does, 1.36.3 does not) the API server resolves a Service to
    // its v1 Endpoints, not its EndpointSlices (k8s.io/apiserver pkg/util/proxy ResolveEndpoint).
    if ((parseKubernetesVersion(inject("kubernetesVersion"))?.minor ?? Infinity) < 36) {
      await apiClient(api.config, CoreV1Api).createNamespacedEndpoints({
        namespace,
        body: { metadata: { name: service.metadata.name }, subsets: [{ addresses: [{ ip: hostAddress() }], ports: [{ name: "webhook", port, protocol: "TCP" }] }] },
      });
    }

    const deployment = only(objects, "Deployment") as KubeManifest & { spec: { template: { spec: { serviceAccountName: string; containers: { args: string[] }[] } } } };
    const serviceAccount = deployment.spec.template.spec.serviceAccountName;
    const token = await kubectl(["create", "token", serviceAccount, "--namespace", namespace, "--duration=2h"]);
    if (token.code !== 0) throw new Error(`kubectl create token failed: ${token.stderr}`);
    let kubeconfigs = 0;
    const writeTokenKubeconfig = async (bearer: string) => {
      const path = join(dir, `token-${++kubeconfigs}.kubeconfig`);
      await writeFile(path, tokenKubeconfig(api.server, bearer), { mode: 0o600 });
      return path;
    };
    const serviceAccountKubeconfig = await writeTokenKubeconfig(token.stdout.trim());

    const operator = await startOperator({
      kubeconfig: serviceAccountKubeconfig,
      existingWebhookConfigurations: { port, metricsPort, healthPort },
      args: deployment.spec.template.spec.containers[0]?.args ?? [],
      // What the Deployment's downward API sets.
      env: { POD_NAMESPACE: namespace },
      probeConfig: api.config,
    });
    cleanups.push(() => operator.stop());

    return {
      namespace,
      objects,
      serviceAccount,
      api,
      serviceAccountKubeconfig,
      operator,
      tokenKubeconfig: writeTokenKubeconfig,
      async auditEvents() {
        const text = await readFile(join(dir, "audit.log"), "utf8");
        return text.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as AuditEvent).filter((event) => event.stage === "ResponseComplete");
      },
      stop: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

function tokenKubeconfig(server: string, token: string): string {
  const shared = kubeConfig();
  const caData = shared.getCurrentCluster()?.caData;
  if (caData === undefined) throw new Error("the run's kubeconfig has no certificate-authority-data");
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "private", server, caData }],
    users: [{ name: "service-account", token }],
    contexts: [{ name: "service-account", cluster: "private", user: "service-account" }],
    currentContext: "service-account",
  });
  return config.exportConfig();
}
