// Load benchmark of the pod webhook over HTTPS keep-alive (DESIGN §9): requests/s at
// saturation and p50/p99 latency at a fixed 1,000 requests/s, for the real pod webhook over
// 50 decorations (5 matching) and for a bare server of the same stack answering allowed: true.
// The pod webhook is measured twice: with replicas of one pod template (what a scale-up sends;
// answered from the webhook's memory from the third on) and with a different pod in every request
// (a label differs, so every one is rendered). Every request carries the pod as the API server
// sends it to webhooks: managed fields, and a token volume with a name of its own.
// Each server runs in its own process pinned to one core; autocannon drives it from this one
// (which `make bench` pins to the other core). The three servers are measured in turns, a slice
// of each in every round (in a rotating order), so that the machine's slow and quiet moments
// fall on each of them alike: a ratio compares them under the same conditions, not whatever
// ran on the machine during one server's turn. Every server runs as the image and the chart run
// it (compiled to JavaScript, with the image's node flags: compiled-program.ts; the chart's
// NODE_OPTIONS and memory limit: chart-runtime.ts); each one's peak RSS over the whole run is kept.
// With --breakdown it measures instead, at saturation with distinct pods, the parts of the pod
// webhook's work on their own (webhook-server.ts: `render`, `render-patch`) beside the bare server
// and the pod webhook: what each part costs in server CPU per request, and the ratio to the bare
// server it would leave if it were all there was. Not one of DESIGN §9's figures; it tells where
// the distinct-pod cost goes.
//   node test/bench/webhook.ts [--json | --breakdown]        (BENCH_SECONDS=10 per measurement)
import { spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import autocannon from "autocannon";
import { TOKEN_VOLUME_PREFIX } from "../../src/webhook/replica-identity.ts";
import { webhookServerArgs } from "./compiled-program.ts";
import { peakRssMiB, spawnAsChartRuns, type ChartProcess, type ChartRuntime } from "./chart-runtime.ts";
import { percentile } from "./statistics.ts";
import { asAdmissionSeesIt, generatedTokenVolumeName, podAdmissionReview, typicalPod } from "./typical-workload.ts";

export interface LoadFigures {
  rps: number;
  /**
   * Whole milliseconds, corrected for coordinated omission at a fixed rate as autocannon corrects
   * them (HdrHistogram's expected interval), over every slice's response times.
   */
  p50Ms: number;
  p99Ms: number;
  /** Percentiles of the raw response times (µs resolution, uncorrected). */
  exactP50Ms: number;
  exactP99Ms: number;
  errors: number;
  /** CPU the load generator used, in % of one core: near 100 means the client, not the server, was the limit. */
  clientCpuPercent: number;
  /** CPU the server process used, in % of one core: under 100 at saturation means it was starved (a shared machine). */
  serverCpuPercent: number;
  /** Server CPU time per answered request: unlike req/s, barely moved by other processes on the core. */
  serverCpuMicrosPerRequest: number;
}

interface ServerFigures {
  saturation: LoadFigures;
  fixedRate: LoadFigures;
  /** The server process's peak resident memory (VmHWM) over the whole run: warm-up, saturation and fixed rate. */
  peakRssMiB: number;
}

/** Ratios of the pod webhook's figures to the bare server's in the same run. */
export interface WebhookRatios {
  /** pod webhook req/s ÷ bare req/s, both at saturation */
  throughputRatio: number;
  /** bare ÷ pod webhook server CPU µs per request at saturation: the ratio one fully available core would give. */
  cpuThroughputRatio: number;
  /** Pod webhook ÷ bare server p99 at the fixed rate, from the raw response times (µs resolution). */
  p99Ratio: number;
}

export interface WebhookBenchResult extends WebhookRatios {
  /** Pod webhook p99 at the fixed rate (autocannon's figure). */
  p99Ms: number;
  /** The same ratios when every request carries a different pod. */
  distinctPods: WebhookRatios;
  /** The larger of the two pod webhook servers' peak RSS (replicas, distinct pods). */
  peakRssMiB: number;
  /** The chart's settings every server ran with. */
  nodeOptions: string;
  memoryLimit: ChartRuntime["memoryLimit"];
  /** Pod webhook requests/s at saturation. */
  rps: number;
  fixedRate: number;
  connections: number;
  durationSeconds: number;
  /** 1-minute load average when the measurement started, and the machine's CPUs: others' load skews every figure. */
  loadAverage1m: number;
  cpus: number;
  /** How the server processes were confined, e.g. "taskset -c 1"; null when taskset is missing. */
  serverPinning: string | null;
  decorate: ServerFigures;
  /** The pod webhook with a different pod in every request. */
  decorateDistinct: ServerFigures;
  bare: ServerFigures;
}

type Pods = "replicas" | "distinct";

const SERVER_CORE = "1";
const CONNECTIONS = 10;
const FIXED_RATE = 1_000;
/** Each measurement is this many slices, taken in turns with the other servers'. */
const SLICES = 5;
/**
 * The start of a slice, when its connections are being opened (a TLS handshake each), is not
 * counted in its latencies: slices would otherwise add handshakes no steady load has.
 */
const SLICE_SETTLE_MS = 250;
const hasTaskset = spawnSync("taskset", ["--version"]).status === 0;

type ServerMode = "decorate" | "bare" | "render" | "render-patch";

async function startServer(mode: ServerMode): Promise<{ port: number; chart: ChartProcess }> {
  const chart = hasTaskset
    ? spawnAsChartRuns("taskset", ["-c", SERVER_CORE, process.execPath, ...webhookServerArgs(), mode], "pod-decorator-webhook-load")
    : spawnAsChartRuns(process.execPath, [...webhookServerArgs(), mode], "pod-decorator-webhook-load");
  const [chunk] = (await once(chart.child.stdout!, "data")) as [Buffer];
  const { port } = JSON.parse(chunk.toString().split("\n")[0]!) as { port: number };
  return { port, chart };
}

const TOKEN_MARKER = "@@token@@";
const HASH_MARKER = "@@hash@@";

/**
 * The AdmissionReview a request carries, in pieces around its variable parts: the token volume's
 * generated name (a new one per request, as the API server gives each replica) and, for distinct
 * pods, the pod-template-hash label `h<n>`. A body is one join, so the load generator does as
 * little per request with distinct pods as with replicas (building and serialising a pod per
 * request cost it ~0.1 ms, on the core whose timing the latencies are).
 */
function reviewPieces(distinct: boolean): string[] {
  const pod = typicalPod();
  if (distinct) pod.metadata!.labels!["pod-template-hash"] = `h${HASH_MARKER}`;
  const review = asAdmissionSeesIt(pod);
  const tokenVolume = review.spec!.volumes!.find((volume) => volume.name.startsWith(TOKEN_VOLUME_PREFIX))!.name;
  return podAdmissionReview(review).replaceAll(tokenVolume, TOKEN_MARKER).split(new RegExp(`(${TOKEN_MARKER}|${HASH_MARKER})`));
}

const pieces = { replicas: reviewPieces(false), distinct: reviewPieces(true) };

function body(pods: Pods, serial: number): string {
  const tokenVolume = generatedTokenVolumeName();
  let text = "";
  for (const piece of pieces[pods]) text += piece === TOKEN_MARKER ? tokenVolume : piece === HASH_MARKER ? String(serial) : piece;
  return text;
}

const clockTicksPerSecond = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/** User + system CPU µs a process has used so far, from /proc (Linux). */
function processCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond) * 1e6;
}

interface Slice {
  requests: number;
  errors: number;
  wallMicros: number;
  clientCpuMicros: number;
  serverCpuMicros: number;
  /** Response times (ms) after the slice settled. */
  times: number[];
}

function loadSlice(port: number, serverPid: number, options: { durationSeconds: number; overallRate?: number; pods: Pods }): Promise<Slice> {
  const times: number[] = [];
  const cpuBefore = process.cpuUsage();
  const serverCpuBefore = processCpuMicros(serverPid);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon({
      url: `https://127.0.0.1:${port}/mutate-pods`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: body(options.pods, serial++),
      requests: [{ setupRequest: (request: object) => ({ ...request, body: body(options.pods, serial++) }) }],
      connections: CONNECTIONS,
      duration: options.durationSeconds,
      ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate }),
    }, (error: unknown, result) => {
      if (error !== null && error !== undefined) {
        reject(error instanceof Error ? error : new Error("autocannon failed", { cause: error }));
        return;
      }
      const cpu = process.cpuUsage(cpuBefore);
      resolve({
        requests: result.requests.total,
        errors: result.errors + result.timeouts + result.non2xx,
        wallMicros: (performance.now() - started) * 1000,
        clientCpuMicros: cpu.user + cpu.system,
        serverCpuMicros: processCpuMicros(serverPid) - serverCpuBefore,
        times,
      });
    });
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode === 200 && performance.now() - started >= SLICE_SETTLE_MS) times.push(responseTime);
    });
  });
}

/**
 * Response times as autocannon records them at a fixed rate: each in whole milliseconds, and a
 * response later than the interval at which its connection sends stands also for the requests
 * that waited behind it (HdrHistogram's recordValueWithExpectedInterval).
 */
function correctedForCoordinatedOmission(times: readonly number[], intervalMs: number): number[] {
  const corrected: number[] = [];
  for (const time of times) {
    const value = Math.floor(time);
    corrected.push(value);
    for (let missing = value - intervalMs; missing >= intervalMs; missing -= intervalMs) corrected.push(missing);
  }
  return corrected;
}

function figures(slices: readonly Slice[], overallRate: number | undefined): LoadFigures {
  const sum = (field: keyof Omit<Slice, "times">) => slices.reduce((total, slice) => total + slice[field], 0);
  const times = slices.flatMap((slice) => slice.times);
  // autocannon's expected interval: ⌈1 / requests per second per connection⌉, as it computes it.
  const recorded = overallRate === undefined ? times.map(Math.floor) : correctedForCoordinatedOmission(times, Math.ceil(1 / (overallRate / CONNECTIONS)));
  const wallMicros = sum("wallMicros");
  const requests = sum("requests");
  return {
    rps: Math.round(requests / (wallMicros / 1e6)),
    p50Ms: percentile(recorded, 50),
    p99Ms: percentile(recorded, 99),
    exactP50Ms: round(percentile(times, 50)),
    exactP99Ms: round(percentile(times, 99)),
    errors: sum("errors"),
    clientCpuPercent: Math.round((sum("clientCpuMicros") / wallMicros) * 100),
    serverCpuPercent: Math.round((sum("serverCpuMicros") / wallMicros) * 100),
    serverCpuMicrosPerRequest: Math.round(sum("serverCpuMicros") / Math.max(1, requests)),
  };
}

const round = (value: number) => Math.round(value * 100) / 100;
/** Distinct pods never repeat, across measurements too. */
let serial = 0;

interface Server {
  pods: Pods;
  port: number;
  child: ChildProcess & { pid: number };
  chart: ChartProcess;
}

/** `seconds` of load for each server, in SLICES turns each; the order rotates from round to round. */
async function inTurns(servers: readonly Server[], seconds: number, overallRate: number | undefined): Promise<LoadFigures[]> {
  const slices = servers.map((): Slice[] => []);
  for (let pass = 0; pass < SLICES; pass++) {
    for (let turn = 0; turn < servers.length; turn++) {
      const index = (pass + turn) % servers.length;
      const server = servers[index]!;
      slices[index]!.push(await loadSlice(server.port, server.child.pid, { durationSeconds: seconds / SLICES, pods: server.pods, ...(overallRate === undefined ? {} : { overallRate }) }));
    }
  }
  return slices.map((taken) => figures(taken, overallRate));
}

/** Starts a server for each of `modes`, warms each up, and gives them to `measure`; stops them all after. */
async function withServers<T>(modes: readonly (readonly [ServerMode, Pods])[], measure: (servers: readonly Server[]) => Promise<T>): Promise<T> {
  const servers: Server[] = [];
  try {
    for (const [mode, pods] of modes) {
      const { port, chart } = await startServer(mode);
      servers.push({ pods, port, child: chart.child, chart });
    }
    // Warm-up: JIT, TLS sessions.
    for (const server of servers) await loadSlice(server.port, server.child.pid, { durationSeconds: 2, pods: server.pods });
    return await measure(servers);
  } finally {
    for (const { child, chart } of servers) {
      // A server that has exited already (crashed) would never emit "exit" again.
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
      chart.remove();
    }
  }
}

async function measureAll(seconds: number): Promise<{ bare: ServerFigures; decorate: ServerFigures; decorateDistinct: ServerFigures; runtime: ChartRuntime }> {
  return withServers([["bare", "replicas"], ["decorate", "replicas"], ["decorate", "distinct"]], async (servers) => {
    const saturation = await inTurns(servers, seconds, undefined);
    const fixedRate = await inTurns(servers, seconds, FIXED_RATE);
    const of = (index: number): ServerFigures => ({ saturation: saturation[index]!, fixedRate: fixedRate[index]!, peakRssMiB: peakRssMiB(servers[index]!.child.pid) });
    return { bare: of(0), decorate: of(1), decorateDistinct: of(2), runtime: servers[0]!.chart.runtime };
  });
}

const BREAKDOWN: readonly (readonly [ServerMode, Pods, string])[] = [
  ["bare", "replicas", "bare server"],
  ["render", "distinct", "select + render (the §10 checks included), a fixed patch"],
  ["render-patch", "distinct", "select + render + the JSON Patch of it"],
  ["decorate", "distinct", "the pod webhook"],
];

/** The parts of the pod webhook's work at saturation with distinct pods, in turns with the bare server and the whole. */
async function breakdown(seconds: number): Promise<{ name: string; figures: LoadFigures }[]> {
  const saturation = await withServers(BREAKDOWN.map(([mode, pods]) => [mode, pods] as const), (servers) => inTurns(servers, seconds, undefined));
  return BREAKDOWN.map(([, , name], index) => ({ name, figures: saturation[index]! }));
}

function ratios(decorate: ServerFigures, bare: ServerFigures): WebhookRatios {
  return {
    throughputRatio: decorate.saturation.rps / bare.saturation.rps,
    cpuThroughputRatio: bare.saturation.serverCpuMicrosPerRequest / decorate.saturation.serverCpuMicrosPerRequest,
    p99Ratio: round(decorate.fixedRate.exactP99Ms / bare.fixedRate.exactP99Ms),
  };
}

export async function benchWebhook(seconds = 10): Promise<WebhookBenchResult> {
  const loadAverage1m = loadavg()[0]!;
  const { bare, decorate, decorateDistinct, runtime } = await measureAll(seconds);
  return {
    ...ratios(decorate, bare),
    p99Ms: decorate.fixedRate.p99Ms,
    distinctPods: ratios(decorateDistinct, bare),
    peakRssMiB: Math.max(decorate.peakRssMiB, decorateDistinct.peakRssMiB),
    nodeOptions: runtime.nodeOptions,
    memoryLimit: runtime.memoryLimit,
    rps: decorate.saturation.rps,
    fixedRate: FIXED_RATE,
    connections: CONNECTIONS,
    durationSeconds: seconds,
    loadAverage1m,
    cpus: availableParallelism(),
    serverPinning: hasTaskset ? `taskset -c ${SERVER_CORE}` : null,
    decorate,
    decorateDistinct,
    bare,
  };
}

if (import.meta.main && process.argv.includes("--breakdown")) {
  const parts = await breakdown(Number(process.env.BENCH_SECONDS ?? 10));
  const bare = parts[0]!.figures.serverCpuMicrosPerRequest;
  console.log(`server pinned to one core: ${hasTaskset ? `taskset -c ${SERVER_CORE}` : "no (taskset missing)"}; ${CONNECTIONS} keep-alive connections; saturation, a different pod in every request`);
  console.log("| server | req/s | server CPU µs/req | bare ÷ it (server CPU) |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const { name, figures } of parts) console.log(`| ${name} | ${figures.rps} | ${figures.serverCpuMicrosPerRequest} | ${((bare / figures.serverCpuMicrosPerRequest) * 100).toFixed(1)}% |`);
} else if (import.meta.main) {
  const result = await benchWebhook(Number(process.env.BENCH_SECONDS ?? 10));
  if (process.argv.includes("--json")) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    const row = (name: string, figures: LoadFigures) =>
      `| ${name} | ${figures.rps} | ${figures.p50Ms} | ${figures.p99Ms} | ${figures.exactP50Ms} | ${figures.exactP99Ms} | ${figures.errors} | ${figures.serverCpuPercent}% | ${figures.serverCpuMicrosPerRequest} | ${figures.clientCpuPercent}% |`;
    console.log(`server pinned to one core: ${result.serverPinning ?? "no (taskset missing)"}; ${CONNECTIONS} keep-alive connections`);
    console.log("| webhook, load | req/s | p50 ms | p99 ms | raw p50 ms | raw p99 ms | errors | server CPU | server CPU µs/req | client CPU |");
    console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    console.log(row("pod webhook, replicas, saturation", result.decorate.saturation));
    console.log(row("pod webhook, distinct pods, saturation", result.decorateDistinct.saturation));
    console.log(row("bare server, saturation", result.bare.saturation));
    console.log(row(`pod webhook, replicas, ${FIXED_RATE} req/s`, result.decorate.fixedRate));
    console.log(row(`pod webhook, distinct pods, ${FIXED_RATE} req/s`, result.decorateDistinct.fixedRate));
    console.log(row(`bare server, ${FIXED_RATE} req/s`, result.bare.fixedRate));
    const summary = (name: string, figures: WebhookRatios) =>
      `${name}: throughput ${(figures.throughputRatio * 100).toFixed(1)}% of the bare server's by req/s, ${(figures.cpuThroughputRatio * 100).toFixed(1)}% by server CPU per request; p99 ${figures.p99Ratio}×`;
    console.log(summary("replicas of one pod template", result));
    console.log(summary("a different pod in every request", result.distinctPods));
    console.log(`peak RSS: pod webhook ${result.decorate.peakRssMiB} MiB (replicas), ${result.decorateDistinct.peakRssMiB} MiB (distinct pods); bare server ${result.bare.peakRssMiB} MiB; NODE_OPTIONS "${result.nodeOptions}", memory limit ${JSON.stringify(result.memoryLimit)}`);
  }
}
