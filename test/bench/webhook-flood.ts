// The webhook under a flood (issue 13, DESIGN §10): 12 clients each send 3 MiB AdmissionReviews
// back to back, on keep-alive connections, to the real pod webhook over 50 decorations (5 of
// them match the flood's pod, so every body is parsed, walked, rendered and diffed). Meanwhile
// /healthz is probed as a kubelet would (a new connection each time, every 100 ms) on the health
// port the chart's probes use, and for comparison on the webhook's own HTTPS port. Reports the
// probes' latency, the server's peak RSS (VmHWM), whether it crashed, and how the flood was
// answered (429 beyond the in-flight limits). The server runs as the image and the chart run it:
// compiled to JavaScript with the image's node flags (compiled-program.ts), the chart's
// NODE_OPTIONS and its memory limit in a memory cgroup (chart-runtime.ts; where none can be made,
// it says so).
//   node test/bench/webhook-flood.ts [--json]        (FLOOD_SECONDS=20)
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { request as plainRequest } from "node:http";
import { Agent, request } from "node:https";
import { availableParallelism, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { percentile } from "./statistics.ts";
import { floodBody } from "./flood-body.ts";
import { webhookServerArgs } from "./compiled-program.ts";
import { peakRssMiB, spawnAsChartRuns, type ChartProcess, type ChartRuntime } from "./chart-runtime.ts";

export interface FloodResult {
  clients: number;
  bodyBytes: number;
  durationSeconds: number;
  /** The health thread's /healthz (plain HTTP, what the chart's probes ask). */
  healthz: ProbeFigures;
  /** /healthz on the webhook's HTTPS port, answered by the busy main thread. */
  webhookPortHealthz: ProbeFigures;
  peakRssMiB: number;
  /** The memory limit the server ran under (the chart's), or why it ran without one. */
  memoryLimit: ChartRuntime["memoryLimit"];
  /** The chart's NODE_OPTIONS it ran with. */
  nodeOptions: string;
  /** Times the kernel killed the server for memory (also counted in crashes). */
  oomKills: number;
  crashes: number;
  /** Flood answers by HTTP status ("error" for a failed connection). */
  flood: Record<string, number>;
  loadAverage1m: number;
  cpus: number;
  serverPinning: string | null;
}

export interface ProbeFigures {
  probes: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const CLIENTS = 12;
const BODY_BYTES = 3 * 1024 * 1024;
const PROBE_INTERVAL_MS = 100;
const SERVER_CORE = "1";
const hasTaskset = spawnSync("taskset", ["--version"]).status === 0;

/** The real pod webhook over the typical 50 decorations in a process of its own, pinned to SERVER_CORE, as the chart runs it. */
export async function startServer(): Promise<{ port: number; healthPort: number; ca: string; child: ChartProcess["child"]; chart: ChartProcess }> {
  const chart = hasTaskset
    ? spawnAsChartRuns("taskset", ["-c", SERVER_CORE, process.execPath, ...webhookServerArgs(), "decorate"], "pod-decorator-webhook")
    : spawnAsChartRuns(process.execPath, [...webhookServerArgs(), "decorate"], "pod-decorator-webhook");
  const [chunk] = (await once(chart.child.stdout!, "data")) as [Buffer];
  const { port, healthPort, ca } = JSON.parse(chunk.toString().split("\n")[0]!) as { port: number; healthPort: number; ca: string };
  return { port, healthPort, ca, child: chart.child, chart };
}

export function send(options: { port: number; ca?: string; agent: Agent | false; method: string; path: string; body?: Buffer }): Promise<{ status: number } | { error: string }> {
  return new Promise((done) => {
    const call = (options.ca === undefined ? plainRequest : request)({
      host: "127.0.0.1",
      port: options.port,
      path: options.path,
      method: options.method,
      ca: options.ca,
      agent: options.agent,
      headers: options.body === undefined ? {} : { "content-type": "application/json", "content-length": options.body.length },
      timeout: 30_000,
    }, (response) => {
      response.resume();
      response.once("end", () => done({ status: response.statusCode ?? 0 }));
      response.once("error", (error) => done({ error: error.message }));
    });
    call.once("error", (error) => done({ error: error.message }));
    call.once("timeout", () => call.destroy(new Error("timed out")));
    call.end(options.body);
  });
}

/** Probes /healthz every PROBE_INTERVAL_MS on a new connection each time, from a worker thread, until `until`. */
export async function probeInThread(target: { port: number; ca?: string }, until: number): Promise<{ latencies: number[]; failed: number }> {
  const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { ...target, untilMs: until - performance.now(), intervalMs: PROBE_INTERVAL_MS } });
  const [result] = (await once(worker, "message")) as [{ latencies: number[]; failed: number }];
  await worker.terminate();
  return result;
}

async function probeLoop(target: { port: number; ca?: string; untilMs: number; intervalMs: number }): Promise<void> {
  const until = performance.now() + target.untilMs;
  const latencies: number[] = [];
  let failed = 0;
  while (performance.now() < until) {
    const started = performance.now();
    const answer = await send({ port: target.port, ...(target.ca === undefined ? {} : { ca: target.ca }), agent: false, method: "GET", path: "/healthz" });
    const elapsed = performance.now() - started;
    latencies.push(elapsed);
    if (!("status" in answer) || answer.status !== 200) failed++;
    await new Promise((resume) => setTimeout(resume, Math.max(0, target.intervalMs - elapsed)));
  }
  parentPort?.postMessage({ latencies, failed });
}

export async function measureFlood(seconds = Number(process.env.FLOOD_SECONDS ?? 20)): Promise<FloodResult> {
  const server = await startServer();
  let crashes = 0;
  let stopping = false;
  let peak = 0;
  let oomKills: number;
  server.child.once("exit", () => {
    if (!stopping) crashes++;
  });
  const body = floodBody(BODY_BYTES);
  const loadAverage1m = loadavg()[0]!;
  const until = performance.now() + seconds * 1000;
  const flood: Record<string, number> = {};
  const latencies: number[] = [];
  const failed = { count: 0 };
  const webhookPortLatencies: number[] = [];
  const webhookPortFailed = { count: 0 };
  try {
    const clients = Array.from({ length: CLIENTS }, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: server.ca });
      while (performance.now() < until && crashes === 0) {
        const answer = await send({ port: server.port, ca: server.ca, agent, method: "POST", path: "/mutate-pods?timeout=10s", body });
        const key = "status" in answer ? String(answer.status) : "error";
        flood[key] = (flood[key] ?? 0) + 1;
        // A refused body is retried after a moment, as the API server's client does after a 429.
        if (key !== "200") await new Promise((resume) => setTimeout(resume, 50));
      }
      agent.destroy();
    });
    // Probed from a thread of its own: this one is busy encrypting the flood.
    const probers = [probeInThread({ port: server.healthPort }, until), probeInThread({ port: server.port, ca: server.ca }, until)];
    const sampling = (async () => {
      while (performance.now() < until && crashes === 0) {
        peak = Math.max(peak, peakRssMiB(server.child.pid));
        await new Promise((resume) => setTimeout(resume, PROBE_INTERVAL_MS));
      }
    })();
    await Promise.all([...clients, sampling]);
    const [health, webhookPort] = await Promise.all(probers);
    latencies.push(...health!.latencies);
    failed.count = health!.failed;
    webhookPortLatencies.push(...webhookPort!.latencies);
    webhookPortFailed.count = webhookPort!.failed;
    if (crashes === 0) peak = Math.max(peak, peakRssMiB(server.child.pid));
  } finally {
    if (crashes === 0) {
      stopping = true;
      server.child.kill("SIGTERM");
      await once(server.child, "exit");
    }
    oomKills = server.chart.oomKills();
    server.chart.remove();
  }
  const figures = (samples: number[], failures: { count: number }) => probeFigures(samples, failures.count);
  return {
    clients: CLIENTS,
    bodyBytes: body.length,
    durationSeconds: seconds,
    healthz: figures(latencies, failed),
    webhookPortHealthz: figures(webhookPortLatencies, webhookPortFailed),
    peakRssMiB: peak,
    memoryLimit: server.chart.runtime.memoryLimit,
    nodeOptions: server.chart.runtime.nodeOptions,
    oomKills,
    crashes,
    flood,
    loadAverage1m,
    cpus: availableParallelism(),
    serverPinning: hasTaskset ? `taskset -c ${SERVER_CORE}` : null,
  };
}

export function probeFigures(latencies: readonly number[], failed: number): ProbeFigures {
  const round = (value: number) => Math.round(value * 10) / 10;
  return {
    probes: latencies.length,
    failed,
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    maxMs: round(Math.max(...latencies)),
  };
}

if (!isMainThread) {
  await probeLoop(workerData as Parameters<typeof probeLoop>[0]);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureFlood();
  if (process.argv.includes("--json")) console.log(JSON.stringify({ healthzP99Ms: result.healthz.p99Ms, ...result }));
  else {
    console.log(`12 clients × ${(result.bodyBytes / 1048576).toFixed(2)} MiB bodies for ${result.durationSeconds} s:`);
    const line = (figures: ProbeFigures) => `p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms over ${figures.probes} probes (${figures.failed} failed)`;
    console.log(`  /healthz on the health port (the probes'): ${line(result.healthz)}`);
    console.log(`  /healthz on the webhook port, for comparison: ${line(result.webhookPortHealthz)}`);
    const limitText = "unavailable" in result.memoryLimit ? `not under the chart's memory limit: ${result.memoryLimit.unavailable}` : `under the chart's memory limit, ${result.memoryLimit.mib} MiB (cgroup ${result.memoryLimit.cgroup}); ${result.oomKills} OOM kills`;
    console.log(`  server peak RSS ${result.peakRssMiB} MiB (${limitText}), crashes ${result.crashes}`);
    console.log(`  flood answers: ${JSON.stringify(result.flood)}`);
  }
}
