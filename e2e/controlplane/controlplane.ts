// Starts and stops a real Kubernetes control plane on loopback: etcd, a secure
// kube-apiserver and a kube-controller-manager running only the garbage-collector
// and namespace controllers (and those a caller adds), all from the one binary e2e/controlplane builds.
// With `forNode`, it is set up to serve a real node (e2e/node): see StartOptions.
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify as toYaml } from "yaml";
import { createCertificateAuthority, issueCertificate } from "../../src/webhook/certificates.ts";
import { freePorts, isOurs, launch, shellQuote, signal, terminate, waitFor } from "./processes.ts";

const here = dirname(fileURLToPath(import.meta.url));
const components = ["kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"] as const;
type Component = (typeof components)[number];

/** What `up` leaves in DIR/state.json so that `down` (or the reaper) can undo it. */
interface State {
  binary: string;
  dataDir: string;
  server: string;
  pids: Partial<Record<Component | "reaper", number>>;
}

export interface ControlPlane {
  dir: string;
  server: string;
  /** The cluster CA (PEM files): it signs the API server's serving certificate and every client's. */
  ca: { cert: string; key: string };
  /** etcd's client URL (plain HTTP on loopback; its JSON gateway serves /v3/kv/...). */
  etcdUrl: string;
  kubeconfig: string;
  kubectl: string;
  binary: string;
  /** What the API server says it is (`/version`'s gitVersion), e.g. v1.37.2. */
  version: string;
}

export interface StartOptions {
  /** Stop everything when this process dies, even if it never calls stop. */
  ownerPid?: number;
  /**
   * CRD manifests (files or folders) to install before the controller manager starts: its
   * garbage collector discovers resource types only every 30 s, and must know these at once.
   */
  crds?: readonly string[];
  log?: (line: string) => void;
  /**
   * Serve a real node (e2e/node): the Node authorizer and NodeRestriction, ServiceAccount
   * admission (pods get tokens; the controller manager creates the default ServiceAccounts and
   * publishes kube-root-ca.crt), listening on every address so that pods reach it through the
   * `kubernetes` Service (kube-proxy), Service-backed webhooks reached by their endpoints
   * (there is no proxy on the API server's host path), a client certificate for kubelets, the
   * workload controllers (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, disruption
   * budgets, endpoints, node lifecycle) and kube-scheduler.
   */
  forNode?: boolean;
  /**
   * More kube-controller-manager controllers, e.g. `deployment-controller` and
   * `replicaset-controller` so that Deployments make pods for the node simulator.
   */
  controllers?: readonly string[];
  /** More kube-apiserver flags, e.g. --admission-control-config-file. */
  apiserverArgs?: readonly string[];
}

/** The controllers of kube-controller-manager; `forNode` adds those that need pods to run. */
const CONTROLLERS = ["garbage-collector-controller", "namespace-controller"];
const NODE_CONTROLLERS = [
  "serviceaccount-controller", "root-ca-certificate-publisher-controller", "deployment-controller",
  "replicaset-controller", "statefulset-controller", "daemonset-controller", "job-controller",
  "disruption-controller", "endpoints-controller", "endpointslice-controller",
  "node-lifecycle-controller", "pod-garbage-collector-controller",
  // Storage for CollaSet claims: static PVs bound to claims, and claims and PVs kept while in use.
  "persistentvolume-binder-controller", "persistentvolumeclaim-protection-controller", "persistentvolume-protection-controller",
  // The built-in ClusterRoles admin, edit and view get their rules by aggregation: a namespace's
  // admin as a cluster gives one (RoleBinding to admin) may do nothing without it.
  "clusterrole-aggregation-controller",
];

/**
 * The Kubernetes minors there is a control-plane build of (e2e/controlplane/versions/), oldest
 * first. `KUBERNETES_VERSION` chooses one; without it the newest is used.
 */
export function kubernetesMinors(): string[] {
  return execFileSync(join(here, "build.sh"), ["--versions"], { encoding: "utf8" }).trim().split("\n");
}

/**
 * Builds the binary of the Kubernetes minor `KUBERNETES_VERSION` names (the newest without it)
 * when this machine has not built it yet, and returns its path.
 */
export function controlPlaneBinary(): string {
  const output = execFileSync(join(here, "build.sh"), { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  const binary = output.trim().split("\n").at(-1) ?? "";
  if (!existsSync(binary)) throw new Error(`control-plane build did not produce a binary (got ${JSON.stringify(output)})`);
  return binary;
}

export async function startControlPlane(dirArgument: string, options: StartOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? (() => {});
  const dir = resolve(dirArgument);
  await stopControlPlane(dir);
  const binary = controlPlaneBinary();
  await mkdir(join(dir, "pki"), { recursive: true });
  await mkdir(join(dir, "logs"), { recursive: true });
  const dataDir = await mkdtemp(join(tmpdir(), "pod-decorator-controlplane-"));
  const [etcdPort, apiserverPort] = await freePorts(2);
  const server = `https://127.0.0.1:${apiserverPort}`;
  const forNode = options.forNode === true;
  const state: State = { binary, dataDir, server, pids: {} };
  const saveState = () => writeFile(join(dir, "state.json"), JSON.stringify(state, null, 2) + "\n");
  await saveState();

  if (options.ownerPid !== undefined) {
    state.pids.reaper = launch(process.execPath, [join(here, "reaper.ts"), String(options.ownerPid), "controlplane", dir], join(dir, "logs", "reaper.log"));
    await saveState();
  }

  try {
    const pki = await writePki(join(dir, "pki"), forNode);
    const kubeconfig = join(dir, "kubeconfig");
    await writeFile(kubeconfig, kubeconfigYaml(server, pki), { mode: 0o600 });
    const kubectl = join(dir, "kubectl");
    await writeFile(kubectl, `#!/bin/sh\nexec ${shellQuote(binary)} kubectl --kubeconfig=${shellQuote(kubeconfig)} "$@"\n`);
    await chmod(kubectl, 0o755);

    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    state.pids.etcd = launch(binary, ["etcd",
      `--data-dir=${join(dataDir, "etcd")}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      "--listen-peer-urls=http://127.0.0.1:0",
      "--unsafe-no-fsync=true",
      "--log-level=warn",
    ], join(dir, "logs", "etcd.log"));
    await saveState();
    await waitFor("etcd", () => etcdHealthy(etcdUrl), state.pids.etcd, join(dir, "logs", "etcd.log"));
    log(`etcd ready at ${etcdUrl}`);

    state.pids["kube-apiserver"] = launch(binary, ["kube-apiserver",
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${forNode ? "0.0.0.0" : "127.0.0.1"}`,
      `--secure-port=${apiserverPort}`,
      `--cert-dir=${join(dataDir, "apiserver-certs")}`,
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      `--client-ca-file=${pki.caCert}`,
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      `--service-account-key-file=${pki.serviceAccountKey}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      "--service-cluster-ip-range=10.0.0.0/24",
      "--allow-privileged=true",
      ...(forNode
        ? [
            "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction",
            `--kubelet-client-certificate=${pki.kubeletClientCert}`,
            `--kubelet-client-key=${pki.kubeletClientKey}`,
            "--kubelet-preferred-address-types=InternalIP",
            "--enable-aggregator-routing=true",
          ]
        : [
            "--authorization-mode=RBAC",
            // No controller here creates default ServiceAccounts for pods to reference.
            "--disable-admission-plugins=ServiceAccount",
          ]),
      "--enable-priority-and-fairness=false",
      "--v=0",
      ...(options.apiserverArgs ?? []),
    ], join(dir, "logs", "kube-apiserver.log"));
    await saveState();
    await waitFor("kube-apiserver", () => apiserverReady(server, pki.caPem), state.pids["kube-apiserver"], join(dir, "logs", "kube-apiserver.log"));
    const version = await apiserverVersion(server, pki.caPem);
    log(`kube-apiserver ${version} ready at ${server}`);
    if (options.crds !== undefined && options.crds.length > 0) {
      installCrds(binary, kubeconfig, options.crds);
      log(`CRDs installed from ${options.crds.join(", ")}`);
    }

    state.pids["kube-controller-manager"] = launch(binary, ["kube-controller-manager",
      `--kubeconfig=${kubeconfig}`,
      `--controllers=${[...new Set([...CONTROLLERS, ...(forNode ? NODE_CONTROLLERS : []), ...(options.controllers ?? [])])].join(",")}`,
      ...(forNode ? [`--root-ca-file=${pki.caCert}`] : []),
      "--leader-elect=false",
      "--secure-port=0",
      "--v=0",
    ], join(dir, "logs", "kube-controller-manager.log"));
    await saveState();
    if (forNode) {
      state.pids["kube-scheduler"] = launch(binary, ["kube-scheduler",
        `--kubeconfig=${kubeconfig}`,
        "--leader-elect=false",
        "--secure-port=0",
        "--v=0",
      ], join(dir, "logs", "kube-scheduler.log"));
      await saveState();
    }
    return { dir, server, ca: { cert: pki.caCert, key: pki.caKey }, etcdUrl, kubeconfig, kubectl, binary, version };
  } catch (error) {
    await stopControlPlane(dir);
    throw error;
  }
}

/** Stops whatever `startControlPlane` started in dir and removes its data; safe to call twice. */
export async function stopControlPlane(dirArgument: string): Promise<void> {
  const dir = resolve(dirArgument);
  const statePath = join(dir, "state.json");
  let state: State;
  try {
    state = JSON.parse(await readFile(statePath, "utf8")) as State;
  } catch {
    return;
  }
  for (const component of components) {
    const pid = state.pids[component];
    if (pid !== undefined && isOurs(pid, state.binary)) await terminate(pid);
  }
  await rm(state.dataDir, { recursive: true, force: true });
  await Promise.all(["kubeconfig", "kubectl", "pki", "state.json"].map((name) => rm(join(dir, name), { recursive: true, force: true })));
  const reaper = state.pids.reaper;
  if (reaper !== undefined && reaper !== process.pid && isOurs(reaper, "reaper.ts")) signal(reaper, "SIGKILL");
}

/** Resident memory of the running components, in MiB, read from /proc. */
export async function controlPlaneMemory(dirArgument: string): Promise<Record<string, number>> {
  const state = JSON.parse(await readFile(join(resolve(dirArgument), "state.json"), "utf8")) as State;
  const memory: Record<string, number> = {};
  for (const component of components) {
    const pid = state.pids[component];
    if (pid === undefined) continue;
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    memory[component] = Math.round(Number(match?.[1] ?? 0) / 1024);
  }
  return memory;
}

function installCrds(binary: string, kubeconfig: string, paths: readonly string[]): void {
  const kubectl = (...args: string[]) => execFileSync(binary, ["kubectl", `--kubeconfig=${kubeconfig}`, ...args], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  const files = paths.flatMap((path) => ["-f", path]);
  kubectl("apply", "--server-side", "--field-manager=pod-decorator-e2e", ...files);
  kubectl("wait", "--for=condition=Established", "--timeout=60s", ...files);
}

function etcdHealthy(url: string): Promise<boolean> {
  return new Promise((done) => {
    const request = httpRequest(`${url}/health`, { timeout: 2000 }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => done(response.statusCode === 200 && body.includes('"true"')));
    });
    request.on("error", () => done(false));
    request.on("timeout", () => request.destroy());
    request.end();
  });
}

function apiserverReady(server: string, ca: string): Promise<boolean> {
  return new Promise((done) => {
    const request = httpsRequest(`${server}/readyz`, { ca, timeout: 2000 }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => done(response.statusCode === 200 && body.trim() === "ok"));
    });
    request.on("error", () => done(false));
    request.on("timeout", () => request.destroy());
    request.end();
  });
}

/** `/version`'s gitVersion (anonymous requests may read it). */
function apiserverVersion(server: string, ca: string): Promise<string> {
  return new Promise((done, fail) => {
    const request = httpsRequest(`${server}/version`, { ca, timeout: 5000 }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => {
        const version = (JSON.parse(body) as { gitVersion?: unknown }).gitVersion;
        if (response.statusCode === 200 && typeof version === "string") done(version);
        else fail(new Error(`GET ${server}/version: ${String(response.statusCode)} ${body.slice(0, 200)}`));
      });
    });
    request.on("error", fail);
    request.on("timeout", () => request.destroy(new Error(`GET ${server}/version timed out`)));
    request.end();
  });
}

interface Pki {
  caPem: string;
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCertPem: string;
  adminKeyPem: string;
  serviceAccountKey: string;
  /** The API server's client certificate for kubelets (forNode only; empty otherwise). */
  kubeletClientCert: string;
  kubeletClientKey: string;
}

async function writePki(dir: string, forNode: boolean): Promise<Pki> {
  const ca = await createCertificateAuthority("pod-decorator-e2e-ca", 30);
  const serving = await issueCertificate(ca, {
    commonName: "kube-apiserver",
    hosts: ["127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "10.0.0.1"],
    usage: "server",
    validityDays: 30,
  });
  const admin = await issueCertificate(ca, {
    commonName: "pod-decorator-e2e-admin",
    organizations: ["system:masters"],
    usage: "client",
    validityDays: 30,
  });
  const serviceAccount = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const files = {
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    servingCert: join(dir, "apiserver.crt"),
    servingKey: join(dir, "apiserver.key"),
    serviceAccountKey: join(dir, "service-account.key"),
    kubeletClientCert: forNode ? join(dir, "apiserver-kubelet-client.crt") : "",
    kubeletClientKey: forNode ? join(dir, "apiserver-kubelet-client.key") : "",
  };
  await writeFile(files.caCert, ca.certPem);
  await writeFile(files.caKey, ca.keyPem, { mode: 0o600 });
  if (forNode) {
    const kubeletClient = await issueCertificate(ca, { commonName: "kube-apiserver-kubelet-client", organizations: ["system:masters"], usage: "client", validityDays: 30 });
    await writeFile(files.kubeletClientCert, kubeletClient.certPem);
    await writeFile(files.kubeletClientKey, kubeletClient.keyPem, { mode: 0o600 });
  }
  await writeFile(files.servingCert, serving.certPem);
  await writeFile(files.servingKey, serving.keyPem, { mode: 0o600 });
  await writeFile(files.serviceAccountKey, serviceAccount.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  return { ...files, caPem: ca.certPem, adminCertPem: admin.certPem, adminKeyPem: admin.keyPem };
}

function kubeconfigYaml(server: string, pki: Pki): string {
  return clientKubeconfig(server, pki.caPem, { certPem: pki.adminCertPem, keyPem: pki.adminKeyPem });
}

/** A kubeconfig for one client certificate of the cluster CA (its subject is who the client is). */
export function clientKubeconfig(server: string, caPem: string, client: { certPem: string; keyPem: string }): string {
  const base64 = (text: string) => Buffer.from(text).toString("base64");
  return toYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "e2e", cluster: { server, "certificate-authority-data": base64(caPem) } }],
    users: [{ name: "client", user: { "client-certificate-data": base64(client.certPem), "client-key-data": base64(client.keyPem) } }],
    contexts: [{ name: "e2e", context: { cluster: "e2e", user: "client", namespace: "default" } }],
    "current-context": "e2e",
  });
}
