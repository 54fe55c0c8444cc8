// The webhook beside idle clients (issue 29, DESIGN §10): 50 connections to its HTTPS port, each
// declaring a 3 MiB AdmissionReview (3 + 3 + 3 + 1 MiB repeated, issue 29's probe) and sending
// nothing, reopened whenever the server closes one; meanwhile 4 kept connections send the typical
// pod's AdmissionReview as the API server does (each every 20 ms), and /healthz is probed as a
// kubelet would (a new connection every 100 ms) on the webhook port, whose main thread serves the
// idle connections too, and on the health port. Reports how the reviews were answered (429s:
// the idle clients held the budget), the probes' latency and how the idle connections ended.
//   node test/bench/webhook-idle-clients.ts [--json]        (IDLE_SECONDS=20)
import { once } from "node:events";
import { Agent } from "node:https";
import { availableParallelism, loadavg } from "node:os";
import { declaredSizes, idleClients } from "./idle-clients.ts";
import { NAMESPACE, podAdmissionReview, typicalPod } from "./typical-workload.ts";
import { probeFigures, probeInThread, send, startServer, type ProbeFigures } from "./webhook-flood.ts";

export interface IdleClientsResult {
  clients: number;
  declaredMiB: number[];
  durationSeconds: number;
  /** Real reviews by HTTP status ("error" for a failed connection). */
  reviews: Record<string, number>;
  realReview429s: number;
  /** /healthz on the webhook's HTTPS port, answered by the main thread the idle clients connect to. */
  webhookPortHealthz: ProbeFigures;
  webhookPortHealthzP99Ms: number;
  /** The health thread's /healthz (plain HTTP, what the chart's probes ask). */
  healthz: ProbeFigures;
  idleConnectionsMade: number;
  /** How the server ended idle connections, by the first line of its answer. */
  idleEndings: Record<string, number>;
  crashes: number;
  loadAverage1m: number;
  cpus: number;
}

const CLIENTS = 50;
const REVIEWERS = 4;
const REVIEW_INTERVAL_MS = 20;

export async function measureIdleClients(seconds = Number(process.env.IDLE_SECONDS ?? 20)): Promise<IdleClientsResult> {
  const server = await startServer();
  let crashes = 0;
  let stopping = false;
  server.child.once("exit", () => {
    if (!stopping) crashes++;
  });
  const declared = declaredSizes(CLIENTS);
  const loadAverage1m = loadavg()[0]!;
  const reviews: Record<string, number> = {};
  let idle: Awaited<ReturnType<typeof idleClients>> | undefined;
  try {
    idle = await idleClients(server.port, declared);
    const until = performance.now() + seconds * 1000;
    // Probed from threads of their own: this one is busy keeping the idle connections.
    const probers = [probeInThread({ port: server.port, ca: server.ca }, until), probeInThread({ port: server.healthPort }, until)];
    const body = Buffer.from(podAdmissionReview(typicalPod(), NAMESPACE));
    const reviewers = Array.from({ length: REVIEWERS }, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: server.ca });
      while (performance.now() < until && crashes === 0) {
        const answer = await send({ port: server.port, ca: server.ca, agent, method: "POST", path: "/mutate-pods?timeout=10s", body });
        const key = "status" in answer ? String(answer.status) : "error";
        reviews[key] = (reviews[key] ?? 0) + 1;
        await new Promise((resume) => setTimeout(resume, REVIEW_INTERVAL_MS));
      }
      agent.destroy();
    });
    await Promise.all(reviewers);
    const [webhookPort, health] = await Promise.all(probers);
    const webhookPortHealthz = probeFigures(webhookPort!.latencies, webhookPort!.failed);
    return {
      clients: CLIENTS,
      declaredMiB: [...new Set(declared.map((bytes) => bytes / 1048576))],
      durationSeconds: seconds,
      reviews,
      realReview429s: reviews["429"] ?? 0,
      webhookPortHealthz,
      webhookPortHealthzP99Ms: webhookPortHealthz.p99Ms,
      healthz: probeFigures(health!.latencies, health!.failed),
      idleConnectionsMade: idle.opened(),
      idleEndings: idle.endings(),
      crashes,
      loadAverage1m,
      cpus: availableParallelism(),
    };
  } finally {
    idle?.stop();
    if (crashes === 0) {
      stopping = true;
      server.child.kill("SIGTERM");
      await once(server.child, "exit");
    }
    server.chart.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureIdleClients();
  if (process.argv.includes("--json")) console.log(JSON.stringify({ idleClients: result }));
  else {
    const line = (figures: ProbeFigures) => `p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms over ${figures.probes} probes (${figures.failed} failed)`;
    console.log(`${result.clients} idle clients declaring ${result.declaredMiB.join(" or ")} MiB, for ${result.durationSeconds} s:`);
    console.log(`  real reviews: ${JSON.stringify(result.reviews)} (${result.realReview429s} answered 429)`);
    console.log(`  /healthz on the webhook port: ${line(result.webhookPortHealthz)}`);
    console.log(`  /healthz on the health port: ${line(result.healthz)}`);
    console.log(`  ${result.idleConnectionsMade} idle connections made, ended by the server with ${JSON.stringify(result.idleEndings)}; crashes ${result.crashes}`);
  }
}
