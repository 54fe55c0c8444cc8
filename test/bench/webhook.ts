// Load benchmark of the pod webhook over HTTPS keep-alive (DESIGN §9): requests/s at
// saturation and p50/p99 latency at a fixed 1,000 requests/s, for the real pod webhook over
// 50 decorations (5 matching) and for a bare server of the same stack answering allowed: true.
// Each server runs in its own process pinned to one core; autocannon drives it from the other.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { typicalPod } from "./typical-workload.ts";

export interface LoadFigures {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export interface WebhookBenchResult {
  decorate: { saturation: LoadFigures; fixedRate: LoadFigures };
  bare: { saturation: LoadFigures; fixedRate: LoadFigures };
  /** decorate.saturation.rps / bare.saturation.rps */
  throughputRatio: number;
}

const serverScript = fileURLToPath(new URL("./webhook-server.ts", import.meta.url));
const hasTaskset = spawnSync("taskset", ["--version"]).status === 0;

async function startServer(mode: "decorate" | "bare"): Promise<{ port: number; child: ChildProcess }> {
  const command = hasTaskset ? "taskset" : process.execPath;
  const args = hasTaskset ? ["-c", "1", process.execPath, serverScript, mode] : [serverScript, mode];
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  const [chunk] = (await once(child.stdout, "data")) as [Buffer];
  const { port } = JSON.parse(chunk.toString().split("\n")[0]!) as { port: number };
  return { port, child };
}

function body(): string {
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "8b2f6a9e-2d0c-4b7e-9f10-3c2a1d5e7f00",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      operation: "CREATE",
      namespace: "bench",
      userInfo: { username: "system:serviceaccount:kube-system:replicaset-controller" },
      object: typicalPod(),
      dryRun: false,
    },
  });
}

async function load(port: number, options: { durationSeconds: number; connections: number; overallRate?: number }): Promise<LoadFigures> {
  const result = await autocannon({
    url: `https://127.0.0.1:${port}/mutate-pods`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: body(),
    connections: options.connections,
    duration: options.durationSeconds,
    ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate }),
  });
  return {
    rps: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

async function measure(mode: "decorate" | "bare", seconds: number) {
  const { port, child } = await startServer(mode);
  try {
    await load(port, { durationSeconds: 2, connections: 10 }); // warm-up: JIT, TLS sessions
    const saturation = await load(port, { durationSeconds: seconds, connections: 10 });
    const fixedRate = await load(port, { durationSeconds: seconds, connections: 10, overallRate: 1000 });
    return { saturation, fixedRate };
  } finally {
    child.kill("SIGTERM");
    await once(child, "exit");
  }
}

export async function benchWebhook(seconds = 10): Promise<WebhookBenchResult> {
  const bare = await measure("bare", seconds);
  const decorate = await measure("decorate", seconds);
  return { decorate, bare, throughputRatio: decorate.saturation.rps / bare.saturation.rps };
}

if (import.meta.main) {
  const result = await benchWebhook(Number(process.env.BENCH_SECONDS ?? 10));
  const row = (name: string, figures: LoadFigures) => `| ${name} | ${figures.rps} | ${figures.p50Ms} | ${figures.p99Ms} | ${figures.errors} |`;
  console.log(`server pinned to one core: ${hasTaskset ? "yes (taskset -c 1)" : "no"}`);
  console.log("| webhook, load | req/s | p50 ms | p99 ms | errors |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  console.log(row("pod webhook, saturation", result.decorate.saturation));
  console.log(row("bare server, saturation", result.bare.saturation));
  console.log(row("pod webhook, 1000 req/s", result.decorate.fixedRate));
  console.log(row("bare server, 1000 req/s", result.bare.fixedRate));
  console.log(`throughput ratio (pod webhook / bare): ${(result.throughputRatio * 100).toFixed(1)}%`);
}
