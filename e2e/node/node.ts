// One real Kubernetes node on this machine, for the e2e tests and `make cluster-up`: containerd
// (runc from Debian, the CNI bridge plugin), the kubelet and kube-proxy, registered with a
// control plane started `forNode`. Everything it makes — processes, mounts, network namespaces,
// the bridge, cgroups, iptables chains — is listed in DIR/node/state.json and removed by
// stopNode, which a reaper runs when the owner dies. Facts: /work/shared/notes/realnode.md.
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync, type Dirent } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { stringify as toYaml } from "yaml";
import { issueCertificate, loadCertificateAuthority } from "../../src/webhook/certificates.ts";
import { clientKubeconfig, controlPlaneBinary, type ControlPlane } from "../controlplane/controlplane.ts";
import { alive, freePorts, isOurs, launch, terminate, waitFor } from "../controlplane/processes.ts";
import { PAUSE_IMAGE } from "./test-images.ts";

const here = dirname(fileURLToPath(import.meta.url));

/** Host-wide names: one node per machine, since kube-proxy's iptables chains are global. */
export const NODE_NETWORK = { bridge: "pd-cni0", podCidr: "10.88.0.0/16", name: "pod-decorator-e2e" } as const;
const CGROUP_ROOT = "pod-decorator-node";
const CGROUP_FS = "/sys/fs/cgroup";
const LOCK = "/run/pod-decorator/node.json";
/** containerd allows at most 42 characters for its shims' socket folder: a short host-wide one. */
const SHIM_SOCKETS = "/run/pod-decorator/shims";
const daemons = ["kube-proxy", "kubelet", "containerd"] as const;
type Daemon = (typeof daemons)[number];

export interface NodeParts {
  /** The control-plane binary: kubelet and kube-proxy are in it. */
  kube: string;
  /** containerd, containerd-shim-runc-v2, ctr, the CNI plugins and pause. */
  bin: string;
  /** Debian packages unpacked: runc, busybox, iptables and its libraries. */
  debian: string;
}

/** Builds (once per machine) and returns the node's parts. */
export function nodeParts(): NodeParts {
  const built = (script: string) => {
    const output = execFileSync(join(here, script), { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
    const path = output.trim().split("\n").at(-1) ?? "";
    if (!existsSync(path)) throw new Error(`${script} did not produce its output (got ${JSON.stringify(output)})`);
    return path;
  };
  return { kube: controlPlaneBinary(), bin: built("build.sh"), debian: built("debian-packages.sh") };
}

/** Why this machine cannot host a real node; empty when it can. */
export function nodeHostingProblems(): string[] {
  const problems: string[] = [];
  if (process.platform !== "linux") return [`the node needs Linux (this is ${process.platform})`];
  if (process.getuid?.() !== 0) problems.push("the node needs root (kubelet, containerd and runc manage mounts, namespaces and cgroups)");
  const mounts = readFileSync("/proc/self/mounts", "utf8");
  const v1Controllers = new Set(mounts.split("\n").filter((line) => line.split(" ")[2] === "cgroup").flatMap((line) => (line.split(" ")[3] ?? "").split(",")));
  const v2 = mounts.split("\n").some((line) => line.split(" ")[2] === "cgroup2" && line.split(" ")[1] === CGROUP_FS);
  const missing = ["cpu", "memory", "pids"].filter((controller) => !v1Controllers.has(controller));
  if (!v2 && missing.length > 0) problems.push(`cgroup controllers ${missing.join(", ")} are not mounted under ${CGROUP_FS}`);
  if (!readFileSync("/proc/filesystems", "utf8").includes("\toverlay\n")) problems.push("the kernel has no overlay filesystem (containerd's snapshotter)");
  if (!existsSync("/proc/sys/net/ipv4/ip_forward")) problems.push("no IPv4 networking in /proc/sys/net");
  if (spawnSync("ip", ["-V"]).status !== 0) problems.push("the `ip` command (iproute2) is missing");
  if (spawnSync("apt-get", ["--version"]).status !== 0 && !existsSync(join(process.env.HOME ?? "/root", ".cache/pod-decorator/debian"))) problems.push("apt-get is missing (runc, busybox and iptables come from Debian packages)");
  return problems;
}

export interface StartNodeOptions {
  plane: ControlPlane;
  /** OCI archives imported into the node's containerd before the kubelet starts. */
  images: readonly string[];
  name?: string;
  /** Stop the node when this process dies, even if it never calls stopNode. */
  ownerPid?: number;
  log?: (line: string) => void;
}

export interface RealNode {
  name: string;
  /** The node's InternalIP: this machine's address on its default route. */
  ip: string;
  containerdSocket: string;
  /** Runs `ctr` against the node's containerd in the kubelet's namespace. */
  ctr(args: readonly string[]): string;
  /** The same as a command line (program and leading arguments), for tests in other processes. */
  ctrCommand: string[];
}

/** What startNode leaves in DIR/node/state.json so that stopNode (or the reaper) can undo it. */
interface NodeState {
  root: string;
  parts: NodeParts;
  pids: Partial<Record<Daemon | "reaper", number>>;
  kubeProxyConfig: string;
}

export async function startNode(dirArgument: string, options: StartNodeOptions): Promise<RealNode> {
  const log = options.log ?? (() => {});
  const problems = nodeHostingProblems();
  if (problems.length > 0) throw new Error(`this machine cannot host a real node: ${problems.join("; ")}`);
  await stopNode(dirArgument);
  const root = join(resolve(dirArgument), "node");
  await takeMachineLock(root);
  const parts = nodeParts();
  const name = options.name ?? "e2e-node";
  const ip = defaultRouteAddress();
  const paths = {
    // Beside the control plane's logs, so they outlive the node (kept when a run crashes).
    logs: join(resolve(dirArgument), "logs", "node"),
    cniConf: join(root, "cni", "conf"),
    cniIpam: join(root, "cni", "ipam"),
    containerd: join(root, "containerd"),
    socket: join(root, "containerd", "containerd.sock"),
    kubelet: join(root, "kubelet"),
    podLogs: join(root, "pod-logs"),
    pki: join(root, "pki"),
  };
  for (const path of Object.values(paths)) if (!path.endsWith(".sock")) await mkdir(path, { recursive: true });
  const state: NodeState = { root, parts, pids: {}, kubeProxyConfig: join(root, "kube-proxy.yaml") };
  const saveState = () => writeFile(join(root, "state.json"), JSON.stringify(state, null, 2) + "\n");
  await saveState();
  if (options.ownerPid !== undefined) {
    state.pids.reaper = launch(process.execPath, [join(here, "..", "controlplane", "reaper.ts"), String(options.ownerPid), "node", resolve(dirArgument)], join(paths.logs, "reaper.log"));
    await saveState();
  }

  try {
    const ctrCommand = [join(parts.bin, "ctr"), "--address", paths.socket, "--namespace", "k8s.io"];
    const ctr = (args: readonly string[]) => execFileSync(ctrCommand[0]!, [...ctrCommand.slice(1), ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const environment = nodeEnvironment(parts);
    await writeFile(join(paths.cniConf, "10-bridge.conflist"), JSON.stringify(cniConfig(paths.cniIpam), null, 2));
    await writeFile(join(paths.containerd, "config.toml"), containerdConfig(parts, paths));
    for (const controller of cgroupControllers()) await mkdir(join(CGROUP_FS, controller, CGROUP_ROOT), { recursive: true });

    state.pids.containerd = launch(join(parts.bin, "containerd"), ["--config", join(paths.containerd, "config.toml")], join(paths.logs, "containerd.log"), environment);
    await saveState();
    await waitFor("containerd", () => criServing(parts, paths.socket, join(paths.logs, "containerd.log")), state.pids.containerd, join(paths.logs, "containerd.log"));
    for (const archive of options.images) ctr(["images", "import", "--no-unpack=false", archive]);
    log(`containerd ready, ${options.images.length} image archive(s) imported`);

    const ca = await loadCertificateAuthority({ certPem: await readFile(options.plane.ca.cert, "utf8"), keyPem: await readFile(options.plane.ca.key, "utf8") });
    const kubeconfigFor = async (file: string, commonName: string, organizations: string[]) => {
      const client = await issueCertificate(ca, { commonName, organizations, usage: "client", validityDays: 30 });
      await writeFile(file, clientKubeconfig(options.plane.server, ca.certPem, client), { mode: 0o600 });
      return file;
    };
    const [kubeletPort, healthzPort, proxyHealthzPort, proxyMetricsPort] = await freePorts(4);
    const kubeletConfig = join(root, "kubelet.yaml");
    await writeFile(kubeletConfig, toYaml(kubeletConfiguration({ ip, kubeletPort: kubeletPort ?? 0, healthzPort: healthzPort ?? 0, caCert: options.plane.ca.cert, socket: paths.socket, podLogs: paths.podLogs })));
    state.pids.kubelet = launch(parts.kube, ["kubelet",
      `--config=${kubeletConfig}`,
      `--kubeconfig=${await kubeconfigFor(join(paths.pki, "kubelet.kubeconfig"), `system:node:${name}`, ["system:nodes"])}`,
      `--hostname-override=${name}`,
      `--node-ip=${ip}`,
      `--root-dir=${paths.kubelet}`,
      `--cert-dir=${join(paths.pki, "kubelet")}`,
      "--v=1",
    ], join(paths.logs, "kubelet.log"), environment);
    await saveState();
    await waitFor("kubelet", () => httpOk(`http://127.0.0.1:${healthzPort}/healthz`), state.pids.kubelet, join(paths.logs, "kubelet.log"));

    await writeFile(state.kubeProxyConfig, toYaml(kubeProxyConfiguration({
      kubeconfig: await kubeconfigFor(join(paths.pki, "kube-proxy.kubeconfig"), "system:kube-proxy", []),
      name,
      healthz: `127.0.0.1:${proxyHealthzPort}`,
      metrics: `127.0.0.1:${proxyMetricsPort}`,
    })));
    await saveState();
    state.pids["kube-proxy"] = launch(parts.kube, ["kube-proxy", `--config=${state.kubeProxyConfig}`, "--v=1"], join(paths.logs, "kube-proxy.log"), environment);
    await saveState();
    await waitFor("kube-proxy", () => httpOk(`http://127.0.0.1:${proxyHealthzPort}/healthz`), state.pids["kube-proxy"], join(paths.logs, "kube-proxy.log"));
    await waitFor(`node ${name} Ready`, () => nodeReady(options.plane.kubectl, name), state.pids.kubelet, join(paths.logs, "kubelet.log"));
    log(`node ${name} (${ip}) Ready: kubelet, containerd, kube-proxy`);
    return { name, ip, containerdSocket: paths.socket, ctr, ctrCommand };
  } catch (error) {
    await stopNode(dirArgument);
    throw error;
  }
}

/**
 * Stops the node started in DIR and removes everything it made; safe to call twice, and after
 * a crash (it also clears what a node of this machine left behind without its state file).
 */
export async function stopNode(dirArgument: string): Promise<void> {
  const root = join(resolve(dirArgument), "node");
  const state = await readState(root);
  // Every step runs even when one before it failed; the failures are reported together.
  const failures: string[] = [];
  const step = async (what: string, action: () => unknown) => {
    try {
      await action();
    } catch (error) {
      failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const stopDaemon = (daemon: Daemon) => step(`stopping ${daemon}`, async () => {
    const pid = state?.pids[daemon];
    if (pid !== undefined && isOurs(pid, daemon)) await terminate(pid);
  });
  // The kubelet first, so it restarts nothing; then every container process, then the runtime.
  await stopDaemon("kubelet");
  await stopDaemon("kube-proxy");
  await step("killing the containers", killCgroupProcesses);
  await step("stopping the shims", () => killShims(join(root, "containerd", "containerd.sock")));
  await stopDaemon("containerd");
  await step("unmounting", () => unmountUnder(root));
  await step("removing cgroups", removeCgroups);
  await step("removing the bridge", () => spawnSync("ip", ["link", "delete", NODE_NETWORK.bridge], { stdio: "ignore" }));
  await step("removing iptables chains", () => {
    const debian = state?.parts.debian ?? unpackedDebianRoot();
    if (debian !== undefined) removeKubeChains(debian);
  });
  await step("removing files", async () => {
    await rm(root, { recursive: true, force: true });
    await rm(SHIM_SOCKETS, { recursive: true, force: true });
  });
  releaseMachineLock(root);
  const reaper = state?.pids.reaper;
  if (reaper !== undefined && reaper !== process.pid && isOurs(reaper, "reaper.ts")) process.kill(reaper, "SIGKILL");
  if (failures.length > 0) throw new Error(`stopping the node in ${root}:\n  ${failures.join("\n  ")}`);
}

/**
 * What a node started in DIR left on this machine: processes naming DIR, mounts under it, the
 * bridge, the node's cgroups, iptables chains of kube-proxy or the kubelet. Empty after stopNode.
 */
export function nodeLeftovers(dirArgument: string): string[] {
  const dir = resolve(dirArgument);
  const found = processesNaming(dir).map((process) => `process ${process}`);
  found.push(...mountPointsUnder(dir).map((point) => `mount ${point}`));
  if (spawnSync("ip", ["link", "show", NODE_NETWORK.bridge], { stdio: "ignore" }).status === 0) found.push(`interface ${NODE_NETWORK.bridge}`);
  found.push(...nodeCgroups().map((path) => `cgroup ${path}`));
  if (existsSync(SHIM_SOCKETS)) found.push(`folder ${SHIM_SOCKETS}`);
  const debian = unpackedDebianRoot();
  if (debian !== undefined) {
    const env = nodeEnvironment({ bin: "", debian });
    for (const family of ["iptables", "ip6tables"]) {
      const saved = spawnSync(join(debian, "alternatives", `${family}-save`), [], { encoding: "utf8", env }).stdout ?? "";
      found.push(...saved.split("\n").filter((line) => line.startsWith(":KUBE-")).map((line) => `${family} chain ${line.slice(1).split(" ")[0] ?? ""}`));
    }
  }
  return found;
}

/** The Debian packages' root when this machine has unpacked them (nothing is downloaded). */
function unpackedDebianRoot(): string | undefined {
  const cache = join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? "/root", ".cache"), "pod-decorator", "debian");
  const roots = existsSync(cache) ? readdirSync(cache).map((key) => join(cache, key, "root")) : [];
  return roots.find((root) => existsSync(join(root, "alternatives")));
}

/**
 * Command lines (pid: command) of running processes that mention `text`, but for this process
 * and those that started it: `make cluster-down DIR=D` names D itself, and so does its shell.
 */
export function processesNaming(text: string): string[] {
  const found: string[] = [];
  const ours = ancestorsOfThisProcess();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || ours.has(Number(entry))) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
      if (commandLine.includes(text) && !commandLine.includes("reaper.ts")) found.push(`${entry}: ${commandLine.slice(0, 160)}`);
    } catch {
      // gone
    }
  }
  return found;
}

/** This process and its parent, its parent's parent, … up to init. */
function ancestorsOfThisProcess(): Set<number> {
  const pids = new Set<number>();
  for (let pid = process.pid; pid > 1 && !pids.has(pid);) {
    pids.add(pid);
    try {
      // /proc/PID/stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    } catch {
      break;
    }
  }
  return pids;
}

/**
 * Removes the KUBE-* iptables chains kube-proxy and the kubelet made, in both IP families: the
 * rules that jump to them from other chains first, then the chains (one iptables-restore each).
 */
function removeKubeChains(debian: string): void {
  const env = nodeEnvironment({ bin: "", debian });
  const iptablesBin = join(debian, "alternatives");
  for (const family of ["iptables", "ip6tables"]) {
    const saved = spawnSync(join(iptablesBin, `${family}-save`), [], { encoding: "utf8", env }).stdout ?? "";
    const script: string[] = [];
    for (const table of saved.split(/^\*/m).slice(1)) {
      const lines = table.split("\n");
      const chains = lines.filter((line) => line.startsWith(":KUBE-")).map((line) => line.slice(1).split(" ")[0] ?? "");
      if (chains.length === 0) continue;
      const jumps = lines.filter((line) => line.startsWith("-A ") && !line.startsWith("-A KUBE-") && / -j KUBE-/.test(line));
      script.push(`*${lines[0] ?? ""}`, ...jumps.map((line) => `-D${line.slice(2)}`), ...chains.map((chain) => `:${chain} - [0:0]`), ...chains.map((chain) => `-X ${chain}`), "COMMIT");
    }
    if (script.length > 0) spawnSync(join(iptablesBin, `${family}-restore`), ["--noflush"], { input: script.join("\n") + "\n", stdio: ["pipe", "ignore", "ignore"], env });
  }
}

/** Resident memory of the node's daemons, in MiB. */
export async function nodeMemory(dirArgument: string): Promise<Record<string, number>> {
  const state = await readState(join(resolve(dirArgument), "node"));
  const memory: Record<string, number> = {};
  for (const daemon of daemons) {
    const pid = state?.pids[daemon];
    if (pid === undefined || !alive(pid)) continue;
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    memory[daemon] = Math.round(Number(match?.[1] ?? 0) / 1024);
  }
  return memory;
}

async function readState(root: string): Promise<NodeState | undefined> {
  try {
    return JSON.parse(await readFile(join(root, "state.json"), "utf8")) as NodeState;
  } catch {
    return undefined;
  }
}

/** One node per machine: a second start fails while the first runs, and clears it if it crashed. */
async function takeMachineLock(root: string): Promise<void> {
  await mkdir(dirname(LOCK), { recursive: true });
  let holder: { root: string; pid: number } | undefined;
  try {
    holder = JSON.parse(readFileSync(LOCK, "utf8")) as { root: string; pid: number };
  } catch {
    holder = undefined;
  }
  if (holder !== undefined && holder.root !== root) {
    const running = await readState(holder.root);
    const live = running !== undefined && daemons.some((daemon) => {
      const pid = running.pids[daemon];
      return pid !== undefined && alive(pid) && isOurs(pid, daemon);
    });
    if (live) throw new Error(`a real node is already running on this machine (${holder.root}); stop it first (make cluster-down DIR=${dirname(holder.root)})`);
    await stopNode(dirname(holder.root));
  }
  // Whatever a node of this machine left behind without a state file (a killed reaper).
  await killCgroupProcesses();
  removeCgroups();
  spawnSync("ip", ["link", "delete", NODE_NETWORK.bridge], { stdio: "ignore" });
  const debian = unpackedDebianRoot();
  if (debian !== undefined) removeKubeChains(debian);
  writeFileSync(LOCK, JSON.stringify({ root, pid: process.pid }) + "\n");
}

function releaseMachineLock(root: string): void {
  try {
    const holder = JSON.parse(readFileSync(LOCK, "utf8")) as { root: string };
    if (holder.root === root) rmSync(LOCK, { force: true });
  } catch {
    // no lock
  }
}

function defaultRouteAddress(): string {
  const output = execFileSync("ip", ["-4", "-json", "route", "get", "1.1.1.1"], { encoding: "utf8" });
  const [route] = JSON.parse(output) as { prefsrc?: string }[];
  if (route?.prefsrc === undefined) throw new Error(`no IPv4 default route to give the node an address (ip route get: ${output})`);
  return route.prefsrc;
}

/** The environment of the node's daemons: our binaries first; iptables from the Debian packages. */
function nodeEnvironment(parts: Pick<NodeParts, "bin" | "debian">): NodeJS.ProcessEnv {
  const libraries = join(parts.debian, "usr", "lib", "x86_64-linux-gnu");
  return {
    ...process.env,
    PATH: [parts.bin, join(parts.debian, "alternatives"), join(parts.debian, "usr", "sbin"), process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin"].join(":"),
    LD_LIBRARY_PATH: libraries,
    XTABLES_LIBDIR: join(libraries, "xtables"),
  };
}

function cniConfig(ipamData: string): object {
  return {
    cniVersion: "1.0.0",
    name: NODE_NETWORK.name,
    plugins: [{
      type: "bridge",
      bridge: NODE_NETWORK.bridge,
      isGateway: true,
      ipMasq: false,
      hairpinMode: true,
      ipam: { type: "host-local", ranges: [[{ subnet: NODE_NETWORK.podCidr }]], routes: [{ dst: "0.0.0.0/0" }], dataDir: ipamData },
    }],
  };
}

function containerdConfig(parts: NodeParts, paths: { containerd: string; socket: string; cniConf: string }): string {
  const quote = (text: string) => JSON.stringify(text);
  const state = join(paths.containerd, "state");
  // Everything under the fixture's folder; no imports from /etc, no /opt, no NRI socket.
  return `version = 4
root = ${quote(join(paths.containerd, "root"))}
state = ${quote(state)}
imports = []
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.nri.v1.nri"]

[plugins]
  [plugins.'io.containerd.server.v1.grpc']
    address = ${quote(paths.socket)}
  [plugins.'io.containerd.server.v1.ttrpc']
    address = ${quote(`${paths.socket}.ttrpc`)}
  [plugins.'io.containerd.shim.v1.manager']
    socket_dir = ${quote(SHIM_SOCKETS)}
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = ${quote(PAUSE_IMAGE)}
  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = ${quote(join(parts.debian, "usr", "sbin", "runc"))}
          Root = ${quote(join(state, "runc"))}
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [${quote(parts.bin)}]
      conf_dir = ${quote(paths.cniConf)}
`;
}

function kubeletConfiguration(input: { ip: string; kubeletPort: number; healthzPort: number; caCert: string; socket: string; podLogs: string }): object {
  return {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    failCgroupV1: false,
    cgroupDriver: "cgroupfs",
    cgroupRoot: `/${CGROUP_ROOT}`,
    containerRuntimeEndpoint: `unix://${input.socket}`,
    address: input.ip,
    port: input.kubeletPort,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: input.healthzPort,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: input.caCert } },
    authorization: { mode: "Webhook" },
    failSwapOn: false,
    podLogsDir: input.podLogs,
    // A test machine's disk fills for reasons of its own: never evict test pods or their images.
    evictionHard: { "memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%" },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    // Status within seconds, so tests see readiness and restarts promptly.
    nodeStatusUpdateFrequency: "4s",
    syncFrequency: "10s",
  };
}

function kubeProxyConfiguration(input: { kubeconfig: string; name: string; healthz: string; metrics: string }): object {
  return {
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    clientConnection: { kubeconfig: input.kubeconfig },
    hostnameOverride: input.name,
    mode: "iptables",
    clusterCIDR: NODE_NETWORK.podCidr,
    healthzBindAddress: input.healthz,
    metricsBindAddress: input.metrics,
    // Leave the machine's conntrack and localhost settings alone.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
    iptables: { localhostNodePorts: false },
  };
}

function cgroupControllers(): string[] {
  return readdirSync(CGROUP_FS).filter((entry) => existsSync(join(CGROUP_FS, entry, "cgroup.procs")) && entry !== "unified");
}

/** Every cgroup directory of the node, deepest first, in every hierarchy. */
function nodeCgroups(): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    // The runtime removes cgroups while we look: a folder that is gone has nothing left to find.
    let entries: Dirent[];
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) if (entry.isDirectory()) walk(join(path, entry.name));
    found.push(path);
  };
  for (const controller of cgroupControllers()) {
    const path = join(CGROUP_FS, controller, CGROUP_ROOT);
    if (existsSync(path)) walk(path);
  }
  return found;
}

function cgroupProcesses(path: string): number[] {
  try {
    return readFileSync(join(path, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** SIGKILLs every process in the node's cgroups (the containers) until none is left. */
async function killCgroupProcesses(): Promise<void> {
  for (let round = 0; round < 50; round += 1) {
    const pids = new Set(nodeCgroups().flatMap(cgroupProcesses));
    if (pids.size === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await sleep(100);
  }
  throw new Error("processes of the node's cgroups did not die");
}

function removeCgroups(): void {
  for (const path of nodeCgroups()) {
    try {
      rmdirSync(path);
    } catch {
      // busy (a process still exiting) or gone; the next start clears it
    }
  }
}

/** The runc shims of the node's containerd: they outlive it by design. */
async function killShims(socket: string): Promise<void> {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine: string;
    try {
      commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (commandLine.includes("containerd-shim-runc-v2") && commandLine.includes(socket)) {
      await terminate(Number(entry));
    }
  }
}

/** Unmounts everything mounted under root (volumes, overlays, network namespaces), deepest first. */
function unmountUnder(root: string): void {
  for (const point of mountPointsUnder(root)) spawnSync("umount", ["--lazy", point], { stdio: "ignore" });
}

function mountPointsUnder(root: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .map((point) => point.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => point === root || point.startsWith(`${root}/`))
    .sort((a, b) => b.length - a.length);
}

/**
 * Whether containerd serves the CRI. A plugin that failed to load does not stop containerd, so
 * the kubelet would only say "unknown service runtime.v1.RuntimeService": say which plugin failed.
 */
async function criServing(parts: NodeParts, socket: string, log: string): Promise<boolean> {
  const plugins = await run(join(parts.bin, "ctr"), ["--address", socket, "plugins", "ls"]);
  if (plugins.status !== 0) return false;
  const failed = plugins.stdout.split("\n").filter((line) => /\serror\s*$/.test(line)).map((line) => line.split(/\s+/).slice(0, 2).join(" "));
  if (failed.some((plugin) => plugin.includes("cri"))) {
    const reasons = readFileSync(log, "utf8").split("\n").filter((line) => line.includes("failed to load plugin")).slice(0, 5).join("\n");
    throw new Error(`containerd did not load its CRI plugins (${failed.join(", ")}):\n${reasons}`);
  }
  // Fields, not one pattern over the whole output: `\s+cri\s+.*\sok` backtracks over every split of the spaces.
  return plugins.stdout.split("\n").some((line) => {
    const fields = line.trim().split(/\s+/);
    return fields[0] === "io.containerd.grpc.v1" && fields[1] === "cri" && fields.at(-1) === "ok";
  });
}

function httpOk(url: string): Promise<boolean> {
  return fetch(url, { signal: AbortSignal.timeout(2000) }).then((response) => response.ok, () => false);
}

async function nodeReady(kubectl: string, name: string): Promise<boolean> {
  const result = await run(kubectl, ["get", "node", name, "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"]);
  return result.status === 0 && result.stdout.trim() === "True";
}

/** Runs a command to its end without blocking the event loop (the reaper and timers keep running). */
function run(command: string, args: readonly string[]): Promise<{ status: number; stdout: string }> {
  return new Promise((done) => {
    execFile(command, args, { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => {
      done({ status: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout });
    });
  });
}
