// Load benchmark of the pod webhook over HTTPS keep-alive (DESIGN §9): requests/s at
// saturation and p50/p99 latency at a fixed 1,000 requests/s, for the real pod webhook over
// 50 decorations (5 matching) and for a bare server of the same stack answering allowed: true.
// The pod webhook is measured twice: with replicas of one pod template (what a scale-up sends;
// answered from the webhook's memory from the third on) and with a different pod in every request
// (a label differs, so every one is rendered). Every request carries the pod as the API server
// sends it to webhooks: managed fields, and a token volume with a name of its own.
// The fleet's section (issue 38, DESIGN §12) measures the same two again with the pod's five
// decorations coming from ClusterPodDecorations that select its namespace by label (50
// PodDecorations in the namespace, 20 ClusterPodDecorations, 5 of them selecting it:
// typical-workload.ts, fleetWorld), and how its ratios compare with the all-namespaced ones:
// cluster decorations must cost no more than namespaced ones. Its servers hold both worlds (a
// namespace of each) and take the all-namespaced pods too, in turns with the fleet's: two
// processes of one server differ by up to ~10 % in server CPU per request (JIT and heap layout,
// measured A/A), more than the difference sought, so the fleet is compared with the
// all-namespaced pods answered by the same process; the all-namespaced servers' ratios stand
// beside them.
// Each server runs in its own process pinned to one core; autocannon drives it from this one
// (which `make bench` pins to the other core). The loads are measured in turns, a slice
// of each in every round (in a rotating order), so that the machine's slow and quiet moments
// fall on each of them alike: a ratio compares them under the same conditions, not whatever
// ran on the machine during one load's turn. Every server runs as the image and the chart run
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
import { asAdmissionSeesIt, FLEET_NAMESPACE, generatedTokenVolumeName, NAMESPACE, podAdmissionReview, typicalPod } from "./typical-workload.ts";
import { clusterRatios, type ClusterRatios, type WebhookRatios } from "./webhook-ratios.ts";

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


/** The pod webhook over the fleet's world (issue 38): its five renders done by ClusterPodDecorations. */
export interface ClusterWebhookResult extends ClusterRatios {
  /** The same server's ratios for the all-namespaced pods it answers in turns: what the slowdown compares with. */
  sameServerNamespaced: WebhookRatios;
  distinctPods: ClusterRatios & { sameServerNamespaced: WebhookRatios };
  /** The larger of the two fleet servers' peak RSS (replicas, distinct pods). */
  peakRssMiB: number;
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
  /** The fleet's section: its ratios to the bare server and to the all-namespaced ones. */
  cluster: ClusterWebhookResult;
  /** The fleet's servers, replicas and distinct pods: the fleet's pods, and the all-namespaced pods they answer in turns (peakRssMiB: the server's). */
  decorateCluster: ServerFigures;
  decorateClusterDistinct: ServerFigures;
  decorateClusterNamespaced: ServerFigures;
  decorateClusterNamespacedDistinct: ServerFigures;
}

type Pods = "replicas" | "distinct";
/** Which namespace's pods a load sends: the typical world's, or the fleet's (typical-workload.ts). */
type World = "namespaced" | "fleet";

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

type ServerMode = "decorate" | "decorate-cluster" | "bare" | "render" | "render-patch";

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
function reviewPieces(distinct: boolean, namespace: string): string[] {
  const pod = typicalPod();
  pod.metadata!.namespace = namespace;
  if (distinct) pod.metadata!.labels!["pod-template-hash"] = `h${HASH_MARKER}`;
  const review = asAdmissionSeesIt(pod);
  const tokenVolume = review.spec!.volumes!.find((volume) => volume.name.startsWith(TOKEN_VOLUME_PREFIX))!.name;
  return podAdmissionReview(review, namespace).replaceAll(tokenVolume, TOKEN_MARKER).split(new RegExp(`(${TOKEN_MARKER}|${HASH_MARKER})`));
}

const pieces: Record<World, Record<Pods, string[]>> = {
  namespaced: { replicas: reviewPieces(false, NAMESPACE), distinct: reviewPieces(true, NAMESPACE) },
  fleet: { replicas: reviewPieces(false, FLEET_NAMESPACE), distinct: reviewPieces(true, FLEET_NAMESPACE) },
};

function body(pods: Pods, world: World, serial: number): string {
  const tokenVolume = generatedTokenVolumeName();
  let text = "";
  for (const piece of pieces[world][pods]) text += piece === TOKEN_MARKER ? tokenVolume : piece === HASH_MARKER ? String(serial) : piece;
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

function loadSlice(port: number, serverPid: number, options: { durationSeconds: number; overallRate?: number; pods: Pods; world: World }): Promise<Slice> {
  const times: number[] = [];
  const cpuBefore = process.cpuUsage();
  const serverCpuBefore = processCpuMicros(serverPid);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon({
      url: `https://127.0.0.1:${port}/mutate-pods`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: body(options.pods, options.world, serial++),
      requests: [{ setupRequest: (request: object) => ({ ...request, body: body(options.pods, options.world, serial++) }) }],
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
  port: number;
  child: ChildProcess & { pid: number };
  chart: ChartProcess;
}

/** What one server is sent in its turns: a template's replicas or distinct pods, of one world. */
interface Load {
  server: Server;
  pods: Pods;
  world: World;
}

/** A server to start, and the loads it takes, each measured on its own in turns with the others. */
interface ServerSpec {
  mode: ServerMode;
  loads: readonly (readonly [Pods, World])[];
}

/**
 * `seconds` of each load, in SLICES turns each; the order rotates from round to round and runs
 * backwards every other round: of two loads one server takes, each comes first after another
 * server's turn as often as it can. (When the fleet's load always came first, its distinct pods
 * measured 6-9 % slower than the all-namespaced ones of the same process, whose handler costs the
 * same in process, 55 µs each; in alternating turns, 1 %.)
 */
async function inTurns(loads: readonly Load[], seconds: number, overallRate: number | undefined): Promise<LoadFigures[]> {
  const slices = loads.map((): Slice[] => []);
  for (let pass = 0; pass < SLICES; pass++) {
    for (let turn = 0; turn < loads.length; turn++) {
      const rotated = (pass + turn) % loads.length;
      const index = pass % 2 === 0 ? rotated : loads.length - 1 - rotated;
      const { server, pods, world } = loads[index]!;
      slices[index]!.push(await loadSlice(server.port, server.child.pid, { durationSeconds: seconds / SLICES, pods, world, ...(overallRate === undefined ? {} : { overallRate }) }));
    }
  }
  return slices.map((taken) => figures(taken, overallRate));
}

/** Starts a server for each spec, warms each of its loads up, and gives the loads (in the specs' order) to `measure`; stops them all after. */
async function withServers<T>(specs: readonly ServerSpec[], measure: (loads: readonly Load[]) => Promise<T>): Promise<T> {
  const servers: Server[] = [];
  const loads: Load[] = [];
  try {
    for (const { mode, loads: taken } of specs) {
      const { port, chart } = await startServer(mode);
      const server = { port, child: chart.child, chart };
      servers.push(server);
      for (const [pods, world] of taken) loads.push({ server, pods, world });
    }
    // Warm-up: JIT, TLS sessions.
    for (const { server, pods, world } of loads) await loadSlice(server.port, server.child.pid, { durationSeconds: 2, pods, world });
    return await measure(loads);
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

interface Measured {
  bare: ServerFigures;
  decorate: ServerFigures;
  decorateDistinct: ServerFigures;
  decorateCluster: ServerFigures;
  decorateClusterNamespaced: ServerFigures;
  decorateClusterDistinct: ServerFigures;
  decorateClusterNamespacedDistinct: ServerFigures;
  runtime: ChartRuntime;
}

/** The servers of the load run and their loads; the fleet's servers take the all-namespaced pods too. */
const SERVERS: readonly ServerSpec[] = [
  { mode: "bare", loads: [["replicas", "namespaced"]] },
  { mode: "decorate", loads: [["replicas", "namespaced"]] },
  { mode: "decorate", loads: [["distinct", "namespaced"]] },
  { mode: "decorate-cluster", loads: [["replicas", "fleet"], ["replicas", "namespaced"]] },
  { mode: "decorate-cluster", loads: [["distinct", "fleet"], ["distinct", "namespaced"]] },
];

async function measureAll(seconds: number): Promise<Measured> {
  return withServers(SERVERS, async (loads) => {
    const saturation = await inTurns(loads, seconds, undefined);
    const fixedRate = await inTurns(loads, seconds, FIXED_RATE);
    const of = (index: number): ServerFigures => ({ saturation: saturation[index]!, fixedRate: fixedRate[index]!, peakRssMiB: peakRssMiB(loads[index]!.server.child.pid) });
    return {
      bare: of(0),
      decorate: of(1),
      decorateDistinct: of(2),
      decorateCluster: of(3),
      decorateClusterNamespaced: of(4),
      decorateClusterDistinct: of(5),
      decorateClusterNamespacedDistinct: of(6),
      runtime: loads[0]!.server.chart.runtime,
    };
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
  const specs = BREAKDOWN.map(([mode, pods]): ServerSpec => ({ mode, loads: [[pods, "namespaced"]] }));
  const saturation = await withServers(specs, (loads) => inTurns(loads, seconds, undefined));
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
  const { bare, decorate, decorateDistinct, decorateCluster, decorateClusterNamespaced, decorateClusterDistinct, decorateClusterNamespacedDistinct, runtime } = await measureAll(seconds);
  const sameServer = { replicas: ratios(decorateClusterNamespaced, bare), distinct: ratios(decorateClusterNamespacedDistinct, bare) };
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
    cluster: {
      ...clusterRatios(ratios(decorateCluster, bare), sameServer.replicas),
      sameServerNamespaced: sameServer.replicas,
      distinctPods: { ...clusterRatios(ratios(decorateClusterDistinct, bare), sameServer.distinct), sameServerNamespaced: sameServer.distinct },
      peakRssMiB: Math.max(decorateCluster.peakRssMiB, decorateClusterDistinct.peakRssMiB),
    },
    decorateCluster,
    decorateClusterDistinct,
    decorateClusterNamespaced,
    decorateClusterNamespacedDistinct,
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
    console.log(row("fleet server: fleet pods, replicas, saturation", result.decorateCluster.saturation));
    console.log(row("fleet server: all-namespaced pods, replicas, saturation", result.decorateClusterNamespaced.saturation));
    console.log(row("fleet server: fleet pods, distinct pods, saturation", result.decorateClusterDistinct.saturation));
    console.log(row("fleet server: all-namespaced pods, distinct pods, saturation", result.decorateClusterNamespacedDistinct.saturation));
    console.log(row(`fleet server: fleet pods, replicas, ${FIXED_RATE} req/s`, result.decorateCluster.fixedRate));
    console.log(row(`fleet server: all-namespaced pods, replicas, ${FIXED_RATE} req/s`, result.decorateClusterNamespaced.fixedRate));
    console.log(row(`fleet server: fleet pods, distinct pods, ${FIXED_RATE} req/s`, result.decorateClusterDistinct.fixedRate));
    console.log(row(`fleet server: all-namespaced pods, distinct pods, ${FIXED_RATE} req/s`, result.decorateClusterNamespacedDistinct.fixedRate));
    const summary = (name: string, figures: WebhookRatios) =>
      `${name}: throughput ${(figures.throughputRatio * 100).toFixed(1)}% of the bare server's by req/s, ${(figures.cpuThroughputRatio * 100).toFixed(1)}% by server CPU per request; p99 ${figures.p99Ratio}×`;
    console.log(summary("replicas of one pod template", result));
    console.log(summary("a different pod in every request", result.distinctPods));
    const versus = (name: string, figures: ClusterRatios) =>
      `${summary(name, figures)}; against the all-namespaced pods of the same server: ${figures.slowdownPercent}% slower by req/s, ${figures.cpuSlowdownPercent}% by server CPU, p99 ${figures.p99SlowdownPercent}% higher`;
    console.log(versus("fleet, replicas", result.cluster));
    console.log(versus("fleet, a different pod in every request", result.cluster.distinctPods));
    console.log(`peak RSS: pod webhook ${result.decorate.peakRssMiB} MiB (replicas), ${result.decorateDistinct.peakRssMiB} MiB (distinct pods); fleet ${result.decorateCluster.peakRssMiB} and ${result.decorateClusterDistinct.peakRssMiB} MiB; bare server ${result.bare.peakRssMiB} MiB; NODE_OPTIONS "${result.nodeOptions}", memory limit ${JSON.stringify(result.memoryLimit)}`);
  }
}
