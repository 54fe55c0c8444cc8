// The Helm chart (charts/pod-decorator) and the plain manifests made from it: helm lint, what
// it renders for the main value combinations — checked against the code it configures (the
// webhook configurations serve would build, the flags serve parses) — the values it refuses,
// that the API server accepts every object it renders (server-side dry run), and that config/
// is what `make manifests` writes and kustomize builds the same objects.
import { chartNodeOptions } from "../test/bench/chart-runtime.ts";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject } from "vitest";
import { stringify as toYaml } from "yaml";
import { customResourceDefinitions } from "../src/api/crd.ts";
import { parseServeOptions } from "../src/cli/serve-options.ts";
import { createCertificateAuthority } from "../src/webhook/certificates.ts";
import { mutatingWebhookConfiguration, validatingWebhookConfiguration } from "../src/webhook/webhook-configuration.ts";
import { helmBinary, installChartDryRun, lintChart, manifestObjects, renderChart, repositoryRoot, type KubeManifest } from "./helm/helm.ts";
import { parseKubernetesVersion } from "../src/api/kubernetes-versions.ts";
import { committedManifestFiles, HELM_ONLY_LABELS, NAMESPACE, plainManifestFiles, RELEASE } from "./helm/manifests.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";

const RESOURCE_WEBHOOK_NAMES = [
  "poddecorations.pod-decorator.kusionstack.io",
  "clusterpoddecorations.pod-decorator.io",
  "collasets.pod-decorator.kusionstack.io",
  "podtransitionrules.pod-decorator.kusionstack.io",
  "operationjobs.pod-decorator.kusionstack.io",
];
/** Every webhook the chart declares: the mutating configuration's (the pod webhook first), then the validating one's. */
const WEBHOOK_NAMES = ["pods.pod-decorator.kusionstack.io", ...RESOURCE_WEBHOOK_NAMES, ...RESOURCE_WEBHOOK_NAMES];
const EXTERNAL_CRDS = fileURLToPath(new URL("./support/external-crds.yaml", import.meta.url));

interface Container {
  name: string;
  args: string[];
  env: { name: string; valueFrom?: unknown }[];
  ports: { name: string; containerPort: number }[];
  securityContext: Record<string, unknown>;
  livenessProbe: { httpGet: { path: string; port: string; scheme: string } };
  readinessProbe: { httpGet: { path: string; port: string; scheme: string } };
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

interface Deployment extends KubeManifest {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        serviceAccountName: string;
        securityContext: Record<string, unknown>;
        containers: Container[];
        volumes?: { name: string; secret?: { secretName: string } }[];
        terminationGracePeriodSeconds: number;
        priorityClassName?: string;
      };
    };
  };
}

interface Webhook {
  name: string;
  clientConfig: { caBundle?: string; service: { name: string; namespace: string; path: string; port: number } };
  failurePolicy: string;
  timeoutSeconds: number;
  namespaceSelector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  objectSelector?: unknown;
  matchConditions?: { name: string; expression: string }[];
}

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** One rendering of the chart, with typed access to the objects the tests look at. */
class Rendered {
  readonly namespace: string;
  readonly objects: KubeManifest[];

  constructor(namespace: string, objects: KubeManifest[]) {
    this.namespace = namespace;
    this.objects = objects;
  }

  static async of(namespace: string, values: object = {}): Promise<Rendered> {
    return new Rendered(namespace, manifestObjects(await renderChart({ namespace, values })));
  }

  all(kind: string): KubeManifest[] {
    return this.objects.filter((object) => object.kind === kind);
  }

  one<T extends KubeManifest = KubeManifest>(kind: string, name?: string): T {
    const found = this.all(kind).filter((object) => name === undefined || object.metadata.name === name);
    if (found.length !== 1) throw new Error(`expected one ${kind}${name === undefined ? "" : ` ${name}`}, found ${found.length}`);
    return found[0] as T;
  }

  kinds(): string[] {
    return this.objects.map((object) => object.kind).sort();
  }

  container(): Container {
    return this.one<Deployment>("Deployment").spec.template.spec.containers[0]!;
  }

  webhooks(): Webhook[] {
    return [...this.one("MutatingWebhookConfiguration").webhooks as Webhook[], ...this.one("ValidatingWebhookConfiguration").webhooks as Webhook[]];
  }

  rules(): PolicyRule[] {
    return this.one("ClusterRole", RELEASE).rules as PolicyRule[];
  }

  /** What serve makes of the Deployment's arguments and environment. */
  serveOptions() {
    return parseServeOptions(this.container().args, { POD_NAMESPACE: this.namespace });
  }
}

const webhookConfigurationRule: PolicyRule = {
  apiGroups: ["admissionregistration.k8s.io"],
  resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
  resourceNames: [RELEASE],
  verbs: ["get", "patch"],
};

let caPem: string;
/** The value combinations every whole-chart check runs over. */
let combinations: Record<string, object>;

function combination(name: string): object {
  const values = combinations[name];
  if (values === undefined) throw new Error(`no value combination named ${name}`);
  return values;
}

beforeAll(async () => {
  helmBinary();
  caPem = (await createCertificateAuthority("chart-test-ca", 1)).certPem;
  combinations = {
    default: {},
    "cert-manager, chart's Issuer": { certificates: { mode: "certManager" } },
    "cert-manager, a ClusterIssuer": { certificates: { mode: "certManager", certManager: { issuerRef: { name: "corporate-ca", kind: "ClusterIssuer", group: "cert-manager.io" } } } },
    "existing Secret": { certificates: { mode: "secret", secret: { name: "webhook-tls", caBundle: caPem } } },
    "ServiceMonitor": { metrics: { serviceMonitor: { enabled: true, labels: { release: "prometheus" }, scrapeTimeout: "10s" } } },
    "alerts and a dashboard": {
      webhook: { timeoutSeconds: 10 },
      metrics: { prometheusRule: { enabled: true, labels: { release: "prometheus" } }, grafanaDashboard: { enabled: true, labels: { team: "platform" } } },
    },
    "failurePolicy Ignore": { webhook: { failurePolicy: "Ignore", timeoutSeconds: 10 } },
    "custom selectors": {
      webhook: {
        pods: {
          excludedNamespaces: ["kube-system", "monitoring"],
          namespaceSelector: { matchLabels: { "team.example.com/decorated": "true" }, matchExpressions: [{ key: "environment", operator: "In", values: ["staging", "production"] }] },
          objectSelector: { matchExpressions: [{ key: "sidecars.example.com/skip", operator: "DoesNotExist" }] },
        },
      },
    },
    "single replica, no metrics, no leader election": { replicaCount: 1, metrics: { enabled: false }, leaderElection: { enabled: false } },
    "opt-in namespaces, a priority class, no NetworkPolicy": { webhook: { pods: { optIn: true } }, priorityClassName: "system-cluster-critical", networkPolicy: { enabled: false } },
    "webhook callers restricted": { networkPolicy: { webhookFrom: [{ ipBlock: { cidr: "192.0.2.0/24" } }] }, webhook: { clientCA: { configMap: "apiserver-webhook-client-ca" } } },
    "metrics only from the monitoring namespace": { networkPolicy: { metrics: { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }] } } },
    "metrics only from the monitoring namespace, in one value": { networkPolicy: { metrics: { namespace: "monitoring" } } },
    // Kubernetes before 1.33 refuses a preStop sleep of 0 seconds: 0 renders no hook (docs/kubernetes-versions.md).
    "no preStop sleep": { preStopSleepSeconds: 0 },
  };
  // Stand-ins for cert-manager's and the Prometheus Operator's CRDs (see the file).
  const installed = await kubectl(["apply", "--server-side", "--field-manager=pod-decorator-e2e", "-f", EXTERNAL_CRDS]);
  expect(installed.code, installed.stderr).toBe(0);
  const established = await kubectl(["wait", "--for=condition=Established", "--timeout=60s", "-f", EXTERNAL_CRDS]);
  expect(established.code, established.stderr).toBe(0);
}, 900_000);

afterAll(async () => {
  await kubectl(["delete", "--ignore-not-found", "--wait=false", "-f", EXTERNAL_CRDS]);
});

describe("the Helm chart", () => {
  test("passes helm lint --strict with every value combination", async () => {
    for (const [name, values] of Object.entries(combinations)) {
      const result = await lintChart(values);
      expect(result.code, `${name}: ${result.stdout}${result.stderr}`).toBe(0);
      expect(result.stdout, name).toContain("1 chart(s) linted, 0 chart(s) failed");
    }
  });

  test("renders by default what serve runs with: 2 replicas, leader election, self-signed certificates for the Service", async ({ namespace }) => {
    const chart = await Rendered.of(namespace);
    expect(chart.kinds()).toEqual([
      "ClusterRole", "ClusterRoleBinding", "Deployment", "MutatingWebhookConfiguration", "NetworkPolicy",
      "PodDisruptionBudget", "Role", "Role", "RoleBinding", "RoleBinding", "Service", "ServiceAccount",
      "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration",
    ]);
    const deployment = chart.one<Deployment>("Deployment");
    expect(deployment.spec.replicas).toBe(2);
    const options = chart.serveOptions();
    expect(options).toMatchObject({
      webhookPort: 9443,
      metricsPort: 8080,
      healthPort: 8081,
      leaderElect: true,
      leaderElectionId: RELEASE,
      webhookConfigName: RELEASE,
      webhookConfigUrl: undefined,
      namespace,
      onDecorationError: "reject",
      logLevel: "info",
    });
    // The name the API server checks the serving certificate against is among the hosts.
    expect(options.tls).toEqual({
      selfSigned: true,
      hosts: [RELEASE, `${RELEASE}.${namespace}`, `${RELEASE}.${namespace}.svc`, `${RELEASE}.${namespace}.svc.cluster.local`],
      // The replicas sign with one CA, so the one caBundle verifies them all.
      caSecret: `${RELEASE}-webhook-ca`,
    });
    // V8's heap sizes come from values.yaml's nodeOptions, the settings `make bench` runs the webhook with.
    expect(chart.container().env).toEqual([
      { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
      { name: "NODE_OPTIONS", value: chartNodeOptions() },
    ]);
    expect(deployment.spec.template.spec.volumes).toBeUndefined();
    expect(chart.rules()).toContainEqual(webhookConfigurationRule);
    expect(chart.one("Role", `${RELEASE}-leader-election`).rules).toEqual([
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], resourceNames: [RELEASE], verbs: ["get", "update"] },
    ]);
    expect(chart.one("Role", `${RELEASE}-webhook-ca`).rules).toEqual([
      { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
      { apiGroups: [""], resources: ["secrets"], resourceNames: [`${RELEASE}-webhook-ca`], verbs: ["get", "update"] },
    ]);
    for (const binding of chart.all("ClusterRoleBinding")) {
      expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: chart.one("ServiceAccount").metadata.name, namespace }]);
    }
    expect(deployment.spec.template.spec.serviceAccountName).toBe(chart.one("ServiceAccount").metadata.name);
  });

  test("runs a hardened pod with probes on the health port, a drained shutdown and a disruption budget", async ({ namespace }) => {
    const chart = await Rendered.of(namespace);
    const deployment = chart.one<Deployment>("Deployment");
    const container = chart.container();
    expect(deployment.spec.template.spec.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: "RuntimeDefault" } });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    // Probes go to the health thread's port, which a flood of admission requests cannot stall.
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "health", scheme: "HTTP" });
    expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "health", scheme: "HTTP" });
    expect(container.ports).toEqual([
      { name: "webhook", containerPort: 9443, protocol: "TCP" },
      { name: "health", containerPort: 8081, protocol: "TCP" },
      { name: "metrics", containerPort: 8080, protocol: "TCP" },
    ]);
    // Told to stop, it keeps serving while routes to it drain, and has time left to finish.
    expect(container.lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
    // 0 is no hook, not a sleep of 0 seconds, which the API server refuses before Kubernetes 1.33.
    expect((await Rendered.of(namespace, combination("no preStop sleep"))).one<Deployment>("Deployment").spec.template.spec.containers[0]!.lifecycle).toBeUndefined();
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(5 + 10);
    expect(deployment.spec.template.spec.priorityClassName).toBeUndefined();
    expect((await Rendered.of(namespace, combination("opt-in namespaces, a priority class, no NetworkPolicy"))).one<Deployment>("Deployment").spec.template.spec.priorityClassName)
      .toBe("system-cluster-critical");
    expect(container).toHaveProperty("resources.requests.cpu");
    expect(container).toHaveProperty("resources.limits.memory");
    const pdb = chart.one("PodDisruptionBudget");
    expect(pdb.spec).toEqual({ minAvailable: 1, selector: deployment.spec.selector });
    // The Service reaches the pods and their webhook port by name.
    const service = chart.one("Service");
    expect(deployment.spec.template.metadata.labels).toMatchObject((service.spec as { selector: Record<string, string> }).selector);
    expect((service.spec as { ports: unknown[] }).ports).toEqual([
      { name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" },
      { name: "metrics", port: 8080, targetPort: "metrics", protocol: "TCP" },
    ]);
  });

  test("declares the webhook configurations serve would build from the scope flags it passes serve, pointing at the chart's Service", async ({ namespace }) => {
    // The caBundle is what the chart leaves to serve (self-signed), cert-manager or the values.
    const withoutCaBundle = (webhooks: unknown) => (JSON.parse(JSON.stringify(webhooks)) as Webhook[]).map((webhook) => {
      delete webhook.clientConfig.caBundle;
      return webhook;
    });
    // One definition of the pod webhook's scope (DESIGN §10): the chart's configuration is what
    // src/webhook/webhook-configuration.ts builds from the flags the chart gives serve, whose
    // controllers judge evictions by the same scope — for every value combination.
    for (const name of Object.keys(combinations)) {
      const chart = await Rendered.of(namespace, combination(name));
      const serve = chart.serveOptions();
      const options = {
        target: { service: { namespace, name: RELEASE, port: 443 } },
        caBundlePem: "",
        scope: serve.scope,
        failurePolicy: chart.webhooks()[0]!.failurePolicy as "Fail" | "Ignore",
        timeoutSeconds: chart.webhooks()[0]!.timeoutSeconds,
      };
      expect(withoutCaBundle(chart.one("MutatingWebhookConfiguration").webhooks), name).toEqual(withoutCaBundle(mutatingWebhookConfiguration(options).webhooks));
      expect(withoutCaBundle(chart.one("ValidatingWebhookConfiguration").webhooks), name).toEqual(withoutCaBundle(validatingWebhookConfiguration(options).webhooks));
      for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) expect(chart.one(kind).metadata.name).toBe(RELEASE);
    }
  });

  test("keeps out of the pod webhook what pod-decorator needs to start, and lets writes to objects being deleted past every webhook", async ({ namespace }) => {
    const [pods, ...kusion] = (await Rendered.of(namespace, combination("cert-manager, chart's Issuer"))).webhooks();
    expect(pods?.namespaceSelector?.matchExpressions?.[0]).toEqual({ key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "kube-public", "kube-node-lease", namespace, "cert-manager"] });
    // Never by a pod's own labels, which its author could set (the release namespace is excluded).
    expect(pods?.matchConditions?.map((condition) => condition.name)).toEqual(["not-a-mirror-pod"]);
    for (const webhook of kusion) expect(webhook.matchConditions).toEqual([{ name: "not-being-deleted", expression: "!has(object.metadata.deletionTimestamp)" }]);
    const optIn = (await Rendered.of(namespace, combination("opt-in namespaces, a priority class, no NetworkPolicy"))).webhooks()[0];
    expect(optIn?.namespaceSelector?.matchExpressions?.[1]).toEqual({ key: "poddecoration.kusionstack.io/injection", operator: "In", values: ["enabled"] });
  });

  test("admits to its pods the webhook and health ports from anywhere, the metrics port from the configured peers", async ({ namespace }) => {
    const policy = (await Rendered.of(namespace)).one("NetworkPolicy");
    const selector = (await Rendered.of(namespace)).one<Deployment>("Deployment").spec.selector;
    expect(policy.spec).toEqual({
      podSelector: selector,
      policyTypes: ["Ingress"],
      ingress: [
        { ports: [{ port: "webhook", protocol: "TCP" }, { port: "health", protocol: "TCP" }] },
        { ports: [{ port: "metrics", protocol: "TCP" }], from: [{ namespaceSelector: {} }] },
      ],
    });
    const monitoring = (await Rendered.of(namespace, combination("metrics only from the monitoring namespace"))).one("NetworkPolicy");
    expect((monitoring.spec as { ingress: { from?: unknown }[] }).ingress[1]?.from).toEqual([{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }]);
    const oneValue = (await Rendered.of(namespace, combination("metrics only from the monitoring namespace, in one value"))).one("NetworkPolicy");
    expect((oneValue.spec as { ingress: { from?: unknown }[] }).ingress[1]?.from).toEqual([{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }]);
    const quiet = (await Rendered.of(namespace, combination("single replica, no metrics, no leader election"))).one("NetworkPolicy");
    expect((quiet.spec as { ingress: unknown[] }).ingress).toHaveLength(1);
    expect((await Rendered.of(namespace, combination("opt-in namespaces, a priority class, no NetworkPolicy"))).all("NetworkPolicy")).toEqual([]);
  });

  test("lets only its own ServiceAccount change a live pod's bookkeeping (a ValidatingAdmissionPolicy, on by default)", async ({ namespace }) => {
    const chart = await Rendered.of(namespace);
    const policy = chart.one<KubeManifest & { spec: { matchConditions: { expression: string }[]; matchConstraints: { resourceRules: { resources: string[] }[] } } }>("ValidatingAdmissionPolicy");
    const serviceAccount = chart.one<Deployment>("Deployment").spec.template.spec.serviceAccountName;
    expect(policy.spec.matchConditions[0]?.expression).toBe(`request.userInfo.username != 'system:serviceaccount:${namespace}:${serviceAccount}'`);
    expect(policy.spec.matchConstraints.resourceRules[0]?.resources).toEqual(["pods", "pods/status", "pods/resize"]);
    expect((chart.one("ValidatingAdmissionPolicyBinding").spec as { policyName: string }).policyName).toBe(policy.metadata.name);
    expect((await Rendered.of(namespace, { bookkeepingPolicy: { enabled: false } })).all("ValidatingAdmissionPolicy")).toEqual([]);
  });

  test("can admit to the webhook port only the API server's addresses, and require its client certificate", async ({ namespace }) => {
    const chart = await Rendered.of(namespace, combination("webhook callers restricted"));
    expect((chart.one("NetworkPolicy").spec as { ingress: unknown[] }).ingress).toEqual([
      { ports: [{ port: "webhook", protocol: "TCP" }], from: [{ ipBlock: { cidr: "192.0.2.0/24" } }] },
      // The kubelet probes the health port from the node.
      { ports: [{ port: "health", protocol: "TCP" }] },
      { ports: [{ port: "metrics", protocol: "TCP" }], from: [{ namespaceSelector: {} }] },
    ]);
    const container = chart.container();
    expect(container.args).toContain("--client-ca-file=/etc/pod-decorator/client-ca/ca.crt");
    expect(chart.serveOptions().clientCaFile).toBe("/etc/pod-decorator/client-ca/ca.crt");
    expect(container.volumeMounts).toEqual([{ name: "client-ca", mountPath: "/etc/pod-decorator/client-ca", readOnly: true }]);
    const volumes = chart.one<Deployment>("Deployment").spec.template.spec.volumes as unknown[];
    expect(volumes).toEqual([{ name: "client-ca", configMap: { name: "apiserver-webhook-client-ca" } }]);
    // Neither by default.
    expect((await Rendered.of(namespace)).serveOptions().clientCaFile).toBeUndefined();
  });

  test("with cert-manager: a self-signed Issuer unless one is given, a Certificate for the Service, its Secret mounted, the CA injected", async ({ namespace }) => {
    const chart = await Rendered.of(namespace, combination("cert-manager, chart's Issuer"));
    const certificate = chart.one("Certificate");
    const spec = certificate.spec as { secretName: string; dnsNames: string[]; issuerRef: Record<string, string> };
    expect(spec.dnsNames).toContain(`${RELEASE}.${namespace}.svc`);
    expect(spec.issuerRef).toEqual({ name: `${RELEASE}-selfsigned`, kind: "Issuer", group: "cert-manager.io" });
    expect(chart.one("Issuer", `${RELEASE}-selfsigned`).spec).toEqual({ selfSigned: {} });
    for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) {
      expect(chart.one(kind).metadata.annotations).toEqual({ "cert-manager.io/inject-ca-from": `${namespace}/${certificate.metadata.name}` });
    }
    for (const webhook of chart.webhooks()) expect(webhook.clientConfig.caBundle).toBeUndefined();
    const deployment = chart.one<Deployment>("Deployment");
    expect(deployment.spec.template.spec.volumes).toEqual([{ name: "tls", secret: { secretName: spec.secretName } }]);
    expect(chart.container().volumeMounts).toEqual([{ name: "tls", mountPath: "/etc/pod-decorator/tls", readOnly: true }]);
    // File certificates, no CA file: serve leaves the caBundle to cert-manager's injector...
    expect(chart.serveOptions().tls).toEqual({ certFile: "/etc/pod-decorator/tls/tls.crt", keyFile: "/etc/pod-decorator/tls/tls.key", caFile: undefined });
    // ...so it gets no access to the webhook configurations.
    expect(chart.rules().flatMap((rule) => rule.apiGroups)).not.toContain("admissionregistration.k8s.io");

    const given = await Rendered.of(namespace, combination("cert-manager, a ClusterIssuer"));
    expect(given.all("Issuer")).toEqual([]);
    expect((given.one("Certificate").spec as { issuerRef: unknown }).issuerRef).toEqual({ name: "corporate-ca", kind: "ClusterIssuer", group: "cert-manager.io" });
  });

  test("with an existing Secret: mounted, and its CA as every webhook's caBundle", async ({ namespace }) => {
    const chart = await Rendered.of(namespace, combination("existing Secret"));
    expect(chart.all("Certificate")).toEqual([]);
    expect(chart.all("Issuer")).toEqual([]);
    expect(chart.webhooks()).toHaveLength(WEBHOOK_NAMES.length);
    for (const webhook of chart.webhooks()) expect(Buffer.from(webhook.clientConfig.caBundle ?? "", "base64").toString()).toBe(caPem);
    expect(chart.one<Deployment>("Deployment").spec.template.spec.volumes).toEqual([{ name: "tls", secret: { secretName: "webhook-tls" } }]);
    expect(chart.serveOptions().tls).toMatchObject({ certFile: "/etc/pod-decorator/tls/tls.crt", keyFile: "/etc/pod-decorator/tls/tls.key" });
    expect(chart.rules()).not.toContainEqual(webhookConfigurationRule);
  });

  test("scrapes the metrics port with a ServiceMonitor when asked, and listens on none when metrics are off", async ({ namespace }) => {
    const chart = await Rendered.of(namespace, combination("ServiceMonitor"));
    const monitor = chart.one("ServiceMonitor");
    const service = chart.one("Service");
    expect(monitor.metadata.labels).toMatchObject({ release: "prometheus" });
    expect(monitor.spec).toEqual({
      selector: { matchLabels: (service.spec as { selector: unknown }).selector },
      namespaceSelector: { matchNames: [namespace] },
      endpoints: [{ port: "metrics", path: "/metrics", scheme: "http", interval: "30s", scrapeTimeout: "10s" }],
    });
    expect(service.metadata.labels).toMatchObject((monitor.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels);
    expect(chart.one("Service").spec).toHaveProperty("ports", expect.arrayContaining([expect.objectContaining({ name: "metrics" })]));

    const quiet = await Rendered.of(namespace, combination("single replica, no metrics, no leader election"));
    expect(quiet.serveOptions()).toMatchObject({ metricsPort: 0, leaderElect: false });
    expect(quiet.all("Role").map((role) => role.metadata.name)).toEqual([`${RELEASE}-webhook-ca`]);
    // A budget for one replica could only block drains.
    expect(quiet.kinds()).not.toContain("PodDisruptionBudget");
    expect((quiet.one("Service").spec as { ports: { name: string }[] }).ports.map((port) => port.name)).toEqual(["webhook"]);
    expect(quiet.one<Deployment>("Deployment").spec.replicas).toBe(1);
  });

  test("renders alerts whose latency threshold follows webhook.timeoutSeconds and a dashboard for Grafana's sidecar, only when asked", async ({ namespace }) => {
    const chart = await Rendered.of(namespace, combination("alerts and a dashboard"));
    const rule = chart.one("PrometheusRule");
    expect(rule.metadata).toMatchObject({ name: RELEASE, namespace, labels: { release: "prometheus" } });
    const rules = (rule.spec as { groups: { rules: { alert: string; expr: string; annotations: Record<string, string> }[] }[] }).groups.flatMap((group) => group.rules);
    // Half of the 10 s timeout, over this release's series only.
    expect(rules.find((alert) => alert.alert === "PodDecoratorWebhookLatencyNearTimeout")?.expr).toMatch(new RegExp(`\\{job="${RELEASE}",namespace="${namespace}"\\}\\[5m\\]\\)\\)\\)\\s*> 5\\s*$`));
    for (const alert of rules) expect(alert.annotations.runbook_url, alert.alert).toBe(`docs/runbooks.md#${alert.alert.toLowerCase()}`);
    const dashboard = chart.one("ConfigMap", `${RELEASE}-dashboard`);
    expect(dashboard.metadata).toMatchObject({ namespace, labels: { grafana_dashboard: "1", team: "platform" } });
    expect(JSON.parse((dashboard.data as Record<string, string>)["pod-decorator.json"]!)).toMatchObject({ uid: "pod-decorator", title: "pod-decorator" });

    const elsewhere = await Rendered.of(namespace, {
      metrics: { prometheusRule: { enabled: true, namespace: "monitoring", runbookBaseUrl: "https://wiki.example.com/pod-decorator", seriesSelector: 'service="pod-decorator"' }, grafanaDashboard: { enabled: true, namespace: "grafana" } },
    });
    const moved = elsewhere.one("PrometheusRule");
    expect(moved.metadata.namespace).toBe("monitoring");
    expect(JSON.stringify(moved.spec)).toContain('pod_decorator_webhook_results_total{service=\\"pod-decorator\\",result=~');
    expect(JSON.stringify(moved.spec)).toContain("https://wiki.example.com/pod-decorator#poddecoratornoleader");
    expect(elsewhere.one("ConfigMap", `${RELEASE}-dashboard`).metadata.namespace).toBe("grafana");
    // Both read the metrics port: without it there is nothing to alert on or show.
    const quiet = await Rendered.of(namespace, { metrics: { enabled: false, prometheusRule: { enabled: true }, grafanaDashboard: { enabled: true } } });
    expect(quiet.kinds()).not.toContain("PrometheusRule");
    expect(quiet.kinds()).not.toContain("ConfigMap");
  });

  test("sets failurePolicy and timeout on every webhook", async ({ namespace }) => {
    const chart = await Rendered.of(namespace, combination("failurePolicy Ignore"));
    expect(chart.webhooks().map((webhook) => [webhook.name, webhook.failurePolicy, webhook.timeoutSeconds])).toEqual([
      ...WEBHOOK_NAMES.map((name) => [name, "Ignore", 10]),
    ]);
  });

  test("ANDs custom pod selectors with the exclusions it always keeps", async ({ namespace }) => {
    const chart = await Rendered.of(namespace, combination("custom selectors"));
    const [pods, ...others] = chart.webhooks();
    expect(pods?.namespaceSelector).toEqual({
      matchLabels: { "team.example.com/decorated": "true" },
      matchExpressions: [
        { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "monitoring", namespace] },
        { key: "poddecoration.kusionstack.io/injection", operator: "NotIn", values: ["disabled"] },
        { key: "environment", operator: "In", values: ["staging", "production"] },
      ],
    });
    expect(pods?.objectSelector).toEqual({ matchExpressions: [{ key: "sidecars.example.com/skip", operator: "DoesNotExist" }] });
    // PodDecorations and CollaSets are defaulted and validated wherever they are.
    for (const webhook of others) {
      expect(webhook.namespaceSelector).toBeUndefined();
      expect(webhook.objectSelector).toBeUndefined();
    }
  });

  test("refuses values it cannot honour, naming the value", async ({ namespace }) => {
    const refusal = async (values: object) => {
      try {
        await renderChart({ namespace, values });
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
      throw new Error(`helm accepted ${JSON.stringify(values)}`);
    };
    expect(await refusal({ webhook: { failurePolicy: "Sometimes" } })).toContain("/webhook/failurePolicy");
    expect(await refusal({ webhook: { timeoutSeconds: 31 } })).toContain("/webhook/timeoutSeconds");
    expect(await refusal({ preStopSleepSeconds: 61 })).toContain("/preStopSleepSeconds");
    expect(await refusal({ networkPolicy: { metrics: { from: [{ podSelector: { matchLabels: { app: "prometheus" } }, pods: "all" }] } } })).toContain("/networkPolicy/metrics/from/0");
    expect(await refusal({ webhok: { port: 1 } })).toContain("additional properties 'webhok' not allowed");
    expect(await refusal({ certificates: { mode: "vault" } })).toContain("/certificates/mode");
    // Without leader election every replica would run the controllers.
    expect(await refusal({ leaderElection: { enabled: false } })).toContain("/replicaCount");
    const secret = await refusal({ certificates: { mode: "secret" } });
    expect(secret).toContain("/certificates/secret/name");
    expect(secret).toContain("/certificates/secret/caBundle");
    expect(await refusal({ certificates: { mode: "secret", secret: { name: "tls", caBundle: "not a PEM" } } })).toContain("-----BEGIN CERTIFICATE-----");
    expect(await refusal({ webhook: { pods: { namespaceSelector: { matchExpressions: [{ key: "a", operator: "Equals" }] } } } })).toContain("/webhook/pods/namespaceSelector/matchExpressions/0/operator");
  });

  test("renders only objects the API server accepts, for every combination (server-side dry run)", async ({ namespace }) => {
    const applied = new Set<string>();
    for (const [name, values] of Object.entries(combinations)) {
      const chart = await Rendered.of(namespace, values);
      const result = await kubectl(["apply", "--server-side", "--dry-run=server", "--field-manager=helm", "-f", "-"], chart.objects.map((object) => toYaml(object)).join("---\n"));
      expect(result.stderr, name).toBe("");
      expect(result.code, name).toBe(0);
      // One line per object, so none was left out.
      expect(result.stdout.trim().split("\n"), name).toHaveLength(chart.objects.length);
      for (const kind of chart.kinds()) applied.add(kind);
    }
    expect([...applied].sort()).toEqual([
      "Certificate", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment", "Issuer", "MutatingWebhookConfiguration", "NetworkPolicy", "PodDisruptionBudget",
      "PrometheusRule", "Role", "RoleBinding", "Service", "ServiceAccount", "ServiceMonitor",
      "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration",
    ]);
  });

  test(`installs with helm on this cluster's version, ${inject("kubernetesVersion")} (server-side dry run): kubeVersion accepted, NOTES name what the version lacks`, async ({ namespace }) => {
    const version = inject("kubernetesVersion");
    const installed = await installChartDryRun({ namespace, kubeconfig: inject("kubeconfig"), values: combination("no preStop sleep") });
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain("STATUS: pending-install");
    const limits = `Kubernetes ${version}: PodDecorations that use fields of features this version\nlacks are refused`;
    if ((parseKubernetesVersion(version)?.minor ?? 0) < 36) expect(installed.stdout).toContain(limits);
    else expect(installed.stdout).not.toContain("PodDecorations that use fields of features this version");
  });

  test("ships the generated CRDs, which helm prints with --include-crds", async ({ namespace }) => {
    const objects = manifestObjects(await renderChart({ namespace, includeCrds: true })).filter((object) => object.kind === "CustomResourceDefinition");
    expect(objects.map((object) => object.metadata.name).sort()).toEqual(customResourceDefinitions().map((crd) => crd.metadata.name).sort());
  });
});

describe("the plain manifests in config/", () => {
  test("are what `make manifests` writes from the chart's defaults", async () => {
    const expected = await plainManifestFiles();
    const committed = await committedManifestFiles();
    expect([...committed.keys()]).toEqual([...expected.keys()]);
    for (const [path, text] of expected) expect(committed.get(path), `config/${path} (run make manifests)`).toBe(text);
  });

  test("build with kustomize into the chart's objects, the namespace and the CRDs, which the API server accepts", async () => {
    const built = await kubectl(["kustomize", `${repositoryRoot}/config/default`]);
    expect(built.stderr).toBe("");
    const objects = manifestObjects(built.stdout);
    const chart = await Rendered.of(NAMESPACE);
    const withoutHelmLabels = chart.objects.map((object) => {
      const copy = structuredClone(object);
      for (const label of HELM_ONLY_LABELS) delete copy.metadata.labels?.[label];
      return copy;
    });
    const key = (object: KubeManifest) => `${object.kind}/${object.metadata.name}`;
    const byKey = (list: KubeManifest[]) => Object.fromEntries(list.map((object) => [key(object), object]));
    const crds = customResourceDefinitions().map((crd) => JSON.parse(JSON.stringify(crd)) as KubeManifest);
    expect(byKey(objects)).toEqual(byKey([...withoutHelmLabels, { apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } }, ...crds]));

    // Namespaced objects dry-run only into a namespace that exists.
    const { core } = clients();
    const existed = await core.readNamespace({ name: NAMESPACE }).then(() => true, () => false);
    if (!existed) await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    try {
      const result = await kubectl(["apply", "--server-side", "--dry-run=server", "--field-manager=kubectl", "-f", "-"], built.stdout);
      expect(result.stderr).toBe("");
      expect(result.stdout.trim().split("\n")).toHaveLength(objects.length);
    } finally {
      if (!existed) await core.deleteNamespace({ name: NAMESPACE });
    }
    await eventually(async () => ((await core.readNamespace({ name: NAMESPACE }).then(() => true, () => false)) === existed ? true : undefined), 60_000, `namespace ${NAMESPACE} to be as it was`);
  });

  test("leave config/crd/ applicable with kubectl apply -f: its Kustomization file is not taken for an object", async () => {
    expect(readFileSync(`${repositoryRoot}/config/crd/Kustomization`, "utf8")).toContain("kind: Kustomization");
    const result = await kubectl(["apply", "--server-side", "--dry-run=server", "--field-manager=pod-decorator-e2e", "-f", `${repositoryRoot}/config/crd/`]);
    expect(result.stderr).toBe("");
    expect(result.stdout.trim().split("\n").sort()).toEqual(customResourceDefinitions().map((crd) => `customresourcedefinition.apiextensions.k8s.io/${crd.metadata.name} serverside-applied (server dry run)`).sort());
  });
});
