// Starts and stops a real Kubernetes control plane on loopback: etcd, a secure
// kube-apiserver and a kube-controller-manager running only the garbage-collector
// and namespace controllers, all from the one binary e2e/controlplane builds.
import { execFileSync, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { stringify as toYaml } from "yaml";
import { createCertificateAuthority, issueCertificate } from "../../src/webhook/certificates.ts";

const here = dirname(fileURLToPath(import.meta.url));
const components = ["kube-controller-manager", "kube-apiserver", "etcd"] as const;
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
  /** etcd's client URL (plain HTTP on loopback; its JSON gateway serves /v3/kv/...). */
  etcdUrl: string;
  kubeconfig: string;
  kubectl: string;
  binary: string;
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
}

/** Builds the binary when this machine has not built this version yet, and returns its path. */
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
  const state: State = { binary, dataDir, server, pids: {} };
  const saveState = () => writeFile(join(dir, "state.json"), JSON.stringify(state, null, 2) + "\n");
  await saveState();

  if (options.ownerPid !== undefined) {
    state.pids.reaper = launch(process.execPath, [join(here, "reaper.ts"), String(options.ownerPid), dir], join(dir, "logs", "reaper.log"));
    await saveState();
  }

  try {
    const pki = await writePki(join(dir, "pki"));
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
      "--bind-address=127.0.0.1",
      `--secure-port=${apiserverPort}`,
      `--cert-dir=${join(dataDir, "apiserver-certs")}`,
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      `--client-ca-file=${pki.caCert}`,
      "--authorization-mode=RBAC",
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      `--service-account-key-file=${pki.serviceAccountKey}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      "--service-cluster-ip-range=10.0.0.0/24",
      "--allow-privileged=true",
      // No controller here creates default ServiceAccounts for pods to reference.
      "--disable-admission-plugins=ServiceAccount",
      "--enable-priority-and-fairness=false",
      "--v=0",
    ], join(dir, "logs", "kube-apiserver.log"));
    await saveState();
    await waitFor("kube-apiserver", () => apiserverReady(server, pki.caPem), state.pids["kube-apiserver"], join(dir, "logs", "kube-apiserver.log"));
    log(`kube-apiserver ready at ${server}`);
    if (options.crds !== undefined && options.crds.length > 0) {
      installCrds(binary, kubeconfig, options.crds);
      log(`CRDs installed from ${options.crds.join(", ")}`);
    }

    state.pids["kube-controller-manager"] = launch(binary, ["kube-controller-manager",
      `--kubeconfig=${kubeconfig}`,
      "--controllers=garbage-collector-controller,namespace-controller",
      "--leader-elect=false",
      "--secure-port=0",
      "--v=0",
    ], join(dir, "logs", "kube-controller-manager.log"));
    await saveState();
    return { dir, server, etcdUrl, kubeconfig, kubectl, binary };
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

function launch(command: string, args: string[], logFile: string): number {
  const out = openSync(logFile, "a");
  // Own process group, so a stop takes any children too and a dying parent does not.
  const child = spawn(command, args, { detached: true, stdio: ["ignore", out, out] });
  closeSync(out);
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${command} ${args[0] ?? ""}`);
  return child.pid;
}

async function waitFor(name: string, ready: () => Promise<boolean>, pid: number | undefined, logFile: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (pid === undefined || !alive(pid)) throw new Error(`${name} exited during start-up:\n${tail(logFile)}`);
    if (await ready()) return;
    await sleep(100);
  }
  throw new Error(`${name} was not ready within 90s:\n${tail(logFile)}`);
}

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-30).join("\n");
  } catch {
    return "(no log)";
  }
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

interface Pki {
  caPem: string;
  caCert: string;
  servingCert: string;
  servingKey: string;
  adminCertPem: string;
  adminKeyPem: string;
  serviceAccountKey: string;
}

async function writePki(dir: string): Promise<Pki> {
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
    servingCert: join(dir, "apiserver.crt"),
    servingKey: join(dir, "apiserver.key"),
    serviceAccountKey: join(dir, "service-account.key"),
  };
  await writeFile(files.caCert, ca.certPem);
  await writeFile(files.servingCert, serving.certPem);
  await writeFile(files.servingKey, serving.keyPem, { mode: 0o600 });
  await writeFile(files.serviceAccountKey, serviceAccount.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  return { ...files, caPem: ca.certPem, adminCertPem: admin.certPem, adminKeyPem: admin.keyPem };
}

function kubeconfigYaml(server: string, pki: Pki): string {
  const base64 = (text: string) => Buffer.from(text).toString("base64");
  return toYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "e2e", cluster: { server, "certificate-authority-data": base64(pki.caPem) } }],
    users: [{ name: "admin", user: { "client-certificate-data": base64(pki.adminCertPem), "client-key-data": base64(pki.adminKeyPem) } }],
    contexts: [{ name: "e2e", context: { cluster: "e2e", user: "admin", namespace: "default" } }],
    "current-context": "e2e",
  });
}

async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () =>
      new Promise<ReturnType<typeof createServer>>((done, fail) => {
        const server = createServer();
        server.once("error", fail);
        server.listen(0, "127.0.0.1", () => done(server));
      }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
  return ports;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie still answers signal 0; it is not running.
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** Guards against pid reuse: only signal a process whose command line names what we started. */
function isOurs(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, name);
    } catch {
      // already gone
    }
  }
}

async function terminate(pid: number): Promise<void> {
  signal(pid, "SIGTERM");
  const deadline = Date.now() + 10_000;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  if (alive(pid)) signal(pid, "SIGKILL");
  while (alive(pid)) await sleep(20);
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
