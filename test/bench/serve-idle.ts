// Idle memory of `pod-decorator serve` by cluster size (issue 32; the sizing table of docs/operations.md): a
// real control plane holding 0, 10,000 and 100,000 realistic pods (pod-population.ts: 50
// workloads, each pod with the status its kubelet reported, created in ascending order), and at
// each size a fresh serve as the image and the chart run it (compiled, with the image's node flags,
// compiled-program.ts; the chart's NODE_OPTIONS, chart-runtime.ts) in a memory cgroup: first of
// the chart's memory limit, and while serve does not sync and stay up under it, of twice as much.
// Reports the limit it held under, its RSS once its caches synced and IDLE_SECONDS passed, its peak
// (VmHWM, which the initial list sets) and V8's heap then (serve's /metrics). The pods have no
// owners (the garbage collector would delete pods owned by workloads that do not exist) and no
// decorations select them.
//   node test/bench/serve-idle.ts [--pods 0,10000,100000] [--json]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { CoreV1Api } from "@kubernetes/client-node";
import { startControlPlane, stopControlPlane } from "../../e2e/controlplane/controlplane.ts";
import { loadKubeConfigFile, startServeProcess } from "../../e2e/support/serve-process.ts";
import { createKubeClient, type KubeClient } from "../../src/kube/client.ts";
import { isAlreadyExists } from "../../src/kube/errors.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { chartMemoryLimitBytes, chartNodeOptions, peakRssMiB, residentMiB } from "./chart-runtime.ts";
import { asImageRuns, imageNodeFlags } from "./compiled-program.ts";
import { memoryLimit } from "./memory-limit.ts";
import { POPULATION_NAMESPACE, podPopulation } from "./pod-population.ts";

export interface ServeIdleFigures {
  pods: number;
  /** The memory limit serve synced and stayed up under (the chart's, or a multiple), MiB; null without a memory cgroup. */
  limitMiB: number | null;
  /** V8's heap in use and allocated then (nodejs_heap_size_*_bytes), MiB. */
  heapUsedMiB: number;
  heapTotalMiB: number;
  /** RSS after its caches synced and IDLE_SECONDS passed, MiB. */
  idleRssMiB: number;
  /** Peak RSS (VmHWM) from its start to then, MiB. */
  peakRssMiB: number;
  /** From its start to its pod cache synced, seconds. */
  syncSeconds: number;
}

export interface ServeIdleResult {
  nodeOptions: string;
  nodeFlags: string[];
  sizes: ServeIdleFigures[];
}

const IDLE_SECONDS = 30;
/** The log line of the controllers' pod informer once its list is in. */
const POD_CACHE_SYNCED = '"informer":"pods","reason":"synced"';
/** Pod creations in flight at once. */
const CREATING = 64;

const argument = (name: string) => {
  const index = process.argv.indexOf(name);
  return index < 0 ? undefined : process.argv[index + 1];
};
const sizes = (argument("--pods") ?? "0,10000,100000").split(",").map(Number).sort((a, b) => a - b);
if (sizes.some((size) => !Number.isInteger(size) || size < 0)) throw new Error("--pods: expected whole numbers ≥ 0, comma-separated");

/**
 * Pod `index` of the population as a client creates it: no server-set fields, no owners, and its
 * name without generateName (a create the client retried then answers a plain AlreadyExists).
 */
function podToCreate(pod: Pod): Pod {
  const { uid: _uid, resourceVersion: _resourceVersion, creationTimestamp: _created, ownerReferences: _owners, managedFields: _managed, generation: _generation, generateName: _generateName, ...metadata } = pod.metadata ?? {};
  return { ...pod, metadata, status: undefined };
}

/** Creates `pod`, or reads it when a retried create finds it made already. */
async function created(kube: KubeClient, pod: Pod): Promise<Pod> {
  try {
    return await kube.core.pods.create(podToCreate(pod));
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    return await kube.core.pods.get(POPULATION_NAMESPACE, pod.metadata?.name ?? "");
  }
}

/** Creates pods [from, to) with the status their kubelet reported. */
async function createPods(kube: KubeClient, population: ReturnType<typeof podPopulation>, from: number, to: number, log: (line: string) => void): Promise<void> {
  let next = from;
  const started = performance.now();
  const worker = async () => {
    for (let index = next++; index < to; index = next++) {
      const pod = population.pod(index);
      await kube.core.pods.replaceStatus({ ...await created(kube, pod), status: pod.status });
      if ((index + 1) % 10_000 === 0) log(`${String(index + 1)} pods (${String(Math.round((index + 1 - from) / ((performance.now() - started) / 1000)))}/s)`);
    }
  };
  await Promise.all(Array.from({ length: CREATING }, worker));
}

/** A gauge of serve's /metrics, in MiB. */
async function metricMiB(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text();
  const value = new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1];
  return Math.round(Number(value) / 1048576);
}

/** serve at `pods` pods under `limitBytes` (none when undefined); undefined when it did not sync or stay up under it. */
async function measureUnder(kubeconfig: string, pods: number, limitBytes: number | undefined, log: (line: string) => void): Promise<ServeIdleFigures | undefined> {
  const limit = limitBytes === undefined ? undefined : memoryLimit(limitBytes, `pod-decorator-serve-idle-${String(process.pid)}-${String(pods)}-${String(limitBytes)}`);
  const cgroup = limit === undefined || "unavailable" in limit ? undefined : limit;
  if (limit !== undefined && "unavailable" in limit) log(`no memory limit: ${limit.unavailable}`);
  const program = asImageRuns(new URL("../../src/cli/main.ts", import.meta.url));
  const [file, args] = cgroup === undefined ? [process.execPath, program] : cgroup.wrap(process.execPath, program);
  const limitMiB = cgroup === undefined ? null : Math.round(cgroup.bytes / 1048576);
  const started = performance.now();
  try {
    const serve = await startServeProcess({ kubeconfig, command: [file, ...args], env: { NODE_OPTIONS: chartNodeOptions() }, args: ["--log-level=info"], syncTimeoutMs: 600_000 });
    try {
      // "caches synced; ready" is the webhook's caches; the controllers' pod cache syncs after.
      await serve.waitForLog(POD_CACHE_SYNCED, 600_000);
      const syncSeconds = Math.round((performance.now() - started) / 100) / 10;
      await sleep(IDLE_SECONDS * 1000);
      if (serve.child.exitCode !== null || serve.child.signalCode !== null) throw new Error(`serve exited (${String(serve.child.exitCode ?? serve.child.signalCode)})`);
      const pid = serve.child.pid ?? 0;
      const figures: ServeIdleFigures = {
        pods,
        limitMiB,
        idleRssMiB: residentMiB(pid, "VmRSS"),
        peakRssMiB: peakRssMiB(pid),
        heapUsedMiB: await metricMiB(serve.metricsPort, "nodejs_heap_size_used_bytes"),
        heapTotalMiB: await metricMiB(serve.metricsPort, "nodejs_heap_size_total_bytes"),
        syncSeconds,
      };
      log(`${String(pods)} pods under ${String(limitMiB ?? "no")} MiB: idle ${String(figures.idleRssMiB)} MiB, peak ${String(figures.peakRssMiB)} MiB, heap ${String(figures.heapUsedMiB)}/${String(figures.heapTotalMiB)} MiB, synced in ${String(syncSeconds)} s`);
      return figures;
    } finally {
      await serve.stop();
    }
  } catch (error) {
    log(`${String(pods)} pods under ${String(limitMiB ?? "no")} MiB: ${error instanceof Error ? error.message.split("\n")[0] ?? "" : String(error)}${cgroup !== undefined && cgroup.oomKills() > 0 ? " (OOM-killed)" : ""}`);
    return undefined;
  } finally {
    cgroup?.remove();
  }
}

/** serve at `pods` pods under the chart's memory limit, else under the first of its doublings (up to 8×) it holds under. */
async function measure(kubeconfig: string, pods: number, log: (line: string) => void): Promise<ServeIdleFigures> {
  for (let factor = 1; factor <= 8; factor *= 2) {
    const figures = await measureUnder(kubeconfig, pods, chartMemoryLimitBytes() * factor, log);
    if (figures !== undefined) return figures;
  }
  const figures = await measureUnder(kubeconfig, pods, undefined, log);
  if (figures === undefined) throw new Error(`serve did not stay up at ${String(pods)} pods even without a memory limit`);
  return figures;
}

if (import.meta.main) {
  const log = (line: string) => console.error(`serve-idle: ${line}`);
  const dir = await mkdtemp(join(tmpdir(), "pod-decorator-bench-serve-idle-"));
  try {
    const plane = await startControlPlane(dir, { ownerPid: process.pid, crds: [fileURLToPath(new URL("../../config/crd/", import.meta.url))], log });
    const kube = createKubeClient(loadKubeConfigFile(plane.kubeconfig));
    await kube.config.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: POPULATION_NAMESPACE } } });
    const population = podPopulation(Math.max(...sizes, 1));
    const result: ServeIdleResult = { nodeOptions: chartNodeOptions(), nodeFlags: imageNodeFlags(), sizes: [] };
    let created = 0;
    for (const size of sizes) {
      await createPods(kube, population, created, size, log);
      created = size;
      result.sizes.push(await measure(plane.kubeconfig, size, log));
    }
    if (process.argv.includes("--json")) console.log(JSON.stringify(result));
    else console.table(result.sizes);
  } finally {
    await stopControlPlane(dir);
    await rm(dir, { recursive: true, force: true });
  }
}
