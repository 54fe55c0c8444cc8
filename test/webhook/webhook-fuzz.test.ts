// Fuzzing the admission webhook over HTTPS (issue 8): whatever reaches the port, every answer is
// a 4xx with a reason or a well-formed AdmissionReview, within a deadline; the process never
// crashes, and after thousands of requests its heap and its open handles are where they were.
// The server runs in a child process so that a crash is an exit and what is measured is its own.
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { Agent } from "node:https";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeRequest, fuzzRequest, oversizedRequest, type FuzzRequest } from "./fuzz/admission-inputs.ts";
import { answerProblems, isPodCreate } from "./fuzz/answer-checks.ts";
import { send } from "./fuzz/fuzz-client.ts";
import type { FromServer, ToServer } from "./fuzz/webhook-under-fuzz.ts";

type Measurement = Extract<FromServer, { type: "measurement" }>;

const SERVER_SCRIPT = fileURLToPath(new URL("./fuzz/webhook-under-fuzz.ts", import.meta.url));
/** Generous for a loaded 2-core machine; the slowest valid request takes milliseconds. */
const ANSWER_DEADLINE_MS = 10_000;
/**
 * Growth after GC allowed over the leak phase, on the V8 heap and outside it (Buffers): what
 * warming up new code paths costs stays under 0.5 MiB; retaining 1 KiB per request exceeds it.
 */
const GROWTH_BOUND_BYTES = 1.5 * 1024 * 1024;

class ServerUnderFuzz {
  readonly log: string[] = [];
  port = 0;
  ca = "";
  /** The keep-alive pool most requests share; built once the server's CA is known. */
  agent: Agent | undefined;
  readonly #child: ChildProcess;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor() {
    this.#child = fork(SERVER_SCRIPT, [], { execArgv: ["--expose-gc", "--no-flush-bytecode"], stdio: ["ignore", "ignore", "pipe", "ipc"] });
    this.#child.stderr?.setEncoding("utf8").on("data", (text: string) => this.log.push(...text.split("\n").filter((line) => line !== "")));
    this.#child.once("exit", (code, signal) => (this.#exit = { code, signal }));
  }

  async started(): Promise<void> {
    const [message] = (await Promise.race([once(this.#child, "message"), once(this.#child, "exit").then(() => [undefined])])) as [FromServer | undefined];
    if (message?.type !== "listening") throw new Error(`the webhook did not start:\n${this.log.join("\n")}`);
    this.port = message.port;
    this.ca = message.ca;
    this.agent = this.#newAgent();
  }

  get exited() {
    return this.#exit;
  }

  async measure(): Promise<Measurement> {
    this.#send({ type: "measure" });
    const [message] = (await once(this.#child, "message")) as [FromServer];
    if (message.type !== "measurement") throw new Error(`expected a measurement, got ${message.type}`);
    return message;
  }

  /** Closes the client's pooled connections and starts a fresh pool. */
  resetConnections(): void {
    this.agent?.destroy();
    this.agent = this.#newAgent();
  }

  async stop(): Promise<number | null> {
    this.agent?.destroy();
    if (this.#exit !== undefined) return this.#exit.code;
    const exited = once(this.#child, "exit");
    this.#send({ type: "stop" });
    const [code] = (await exited) as [number | null];
    return code;
  }

  #send(message: ToServer): void {
    this.#child.send(message);
  }

  #newAgent(): Agent {
    return new Agent({ keepAlive: true, maxSockets: 6, ca: this.ca });
  }
}

interface Tally {
  requests: number;
  byStatus: Map<number, number>;
  /** By kind of input (the generator's `what`, without the mutation detail). */
  byKind: Map<string, number>;
  patched: number;
  denied: number;
  /** Pod CREATEs the pod webhook answered, and how many of them it refused (a decoration's failure only). */
  podCreates: number;
  podsRefused: number;
}

function tally(): Tally {
  return { requests: 0, byStatus: new Map(), byKind: new Map(), patched: 0, denied: 0, podCreates: 0, podsRefused: 0 };
}

/** Sends a batch at once (concurrency on the shared pool) and checks every answer. */
async function sendBatch(server: ServerUnderFuzz, batch: readonly FuzzRequest[], counts: Tally): Promise<void> {
  const agent = server.agent;
  if (agent === undefined) throw new Error("the server has not started");
  const outcomes = await Promise.all(batch.map((request) => send({ port: server.port, ca: server.ca, agent }, request, ANSWER_DEADLINE_MS)));
  const problems: string[] = [];
  outcomes.forEach((outcome, index) => {
    const request = batch[index]!;
    counts.requests++;
    if ("failure" in outcome) {
      problems.push(`${outcome.failure} — ${describeRequest(request)}`);
      return;
    }
    const { answer } = outcome;
    counts.byStatus.set(answer.status, (counts.byStatus.get(answer.status) ?? 0) + 1);
    const text = answer.body.toString("utf8");
    const kind = request.what.replace(/ \(.*\)$/, "");
    counts.byKind.set(kind, (counts.byKind.get(kind) ?? 0) + 1);
    if (answer.status === 200 && text.includes('"patch":')) counts.patched++;
    if (answer.status === 200 && text.includes('"allowed":false')) counts.denied++;
    if (answer.status === 200 && sentPodCreate(request)) {
      counts.podCreates++;
      if (text.includes('"allowed":false')) counts.podsRefused++;
    }
    for (const problem of answerProblems(request, answer)) problems.push(`${problem} — ${describeRequest(request)}`);
  });
  if (server.exited !== undefined) problems.push(`the server exited (${JSON.stringify(server.exited)}):\n${server.log.slice(-20).join("\n")}`);
  if (problems.length > 0) throw new Error(problems.join("\n"));
}

async function fuzz(server: ServerUnderFuzz, requests: fc.Arbitrary<FuzzRequest>, batches: number, counts: Tally, batchSize = { min: 2, max: 8 }): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(requests, { minLength: batchSize.min, maxLength: batchSize.max }), (batch) => sendBatch(server, batch, counts)),
    { numRuns: batches },
  );
}

function summary(counts: Tally): string {
  const statuses = [...counts.byStatus].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`).join(" ");
  const kinds = [...counts.byKind].sort(([a], [b]) => a.localeCompare(b)).map(([kind, count]) => `${kind} ${count}`).join(", ");
  return `${counts.requests} requests (${kinds}): ${statuses}; ${counts.patched} patched, ${counts.denied} denied; ` +
    `${counts.podCreates} pod creates answered, ${counts.podsRefused} refused (each for a decoration that cannot be rendered; any other refusal fails the test)`;
}

function sentPodCreate(request: FuzzRequest): boolean {
  if (!Buffer.isBuffer(request.body)) return false;
  try {
    const review = JSON.parse(request.body.toString("utf8")) as { request?: Record<string, unknown> };
    return typeof review.request === "object" && review.request !== null && isPodCreate(request.path, review.request);
  } catch {
    return false;
  }
}

describe("the webhook under fuzzing", () => {
  let server: ServerUnderFuzz;
  let atStart: Measurement;

  // Bounds for a loaded 2-core machine; a quiet one takes a fraction.
  beforeAll(async () => {
    server = new ServerUnderFuzz();
    await server.started();
    atStart = await server.measure();
  });

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it("answers every generated request with a 4xx and a reason, or a well-formed AdmissionReview", async () => {
    const counts = tally();
    await fuzz(server, fuzzRequest, 150, counts);
    console.log(`fuzz: ${summary(counts)}`);
    // The generators reach every kind of answer, or the run proved little.
    expect(counts.patched).toBeGreaterThan(0);
    expect(counts.denied).toBeGreaterThan(0);
    expect(counts.byStatus.get(400)).toBeGreaterThan(0);
    expect(counts.byStatus.get(404)).toBeGreaterThan(0);
    expect(counts.byStatus.get(415)).toBeGreaterThan(0);
    expect(counts.podCreates).toBeGreaterThan(30);
  }, 60_000);

  it("answers bodies over the limit with 413 before their end, whether their length is announced or not", async () => {
    const counts = tally();
    await fuzz(server, oversizedRequest, 8, counts, { min: 1, max: 1 });
    expect(counts.byStatus).toEqual(new Map([[413, 8]]));
  }, 30_000);

  it("neither crashes nor leaks: heap after GC and open handles return to where they were", async () => {
    // Warm up whatever is created on first use (JIT, metric series, memo tables) before the baseline.
    const warmUp = tally();
    await fuzz(server, fuzzRequest, 40, warmUp);
    const before = await settled(server, atStart);

    const counts = tally();
    await fuzz(server, fuzzRequest, 300, counts);
    console.log(`leak phase: ${summary(counts)}`);
    expect(counts.requests).toBeGreaterThan(1000);

    const after = await settled(server, atStart);
    expect(after.connections).toBe(0);
    expect(after.resources).toEqual(atStart.resources);
    const growth = { heap: after.heapUsedBytes - before.heapUsedBytes, external: after.externalBytes - before.externalBytes };
    console.log(`after GC: heap ${mib(before.heapUsedBytes)} → ${mib(after.heapUsedBytes)} MiB, external ${mib(before.externalBytes)} → ${mib(after.externalBytes)} MiB`);
    expect(growth.heap).toBeLessThan(GROWTH_BOUND_BYTES);
    expect(growth.external).toBeLessThan(GROWTH_BOUND_BYTES);
    expect(after.polluted).toEqual([]);
    expect(server.exited).toBeUndefined();
    // Errors are what the server logs for a 5xx or a handler that threw.
    expect(server.log.filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
  }, 90_000);
});

/**
 * Closes the client's connections and polls until the server has let go of them (a round
 * trip on each side), then measures: its handles are back to `baseline` unless something leaks.
 */
async function settled(server: ServerUnderFuzz, baseline: Measurement): Promise<Measurement> {
  server.resetConnections();
  const deadline = Date.now() + 10_000;
  let measured = await server.measure();
  while ((measured.connections > 0 || !sameResources(measured, baseline)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    measured = await server.measure();
  }
  return measured;
}

function mib(bytes: number): string {
  return (bytes / 1048576).toFixed(2);
}

function sameResources(a: Measurement, b: Measurement): boolean {
  return JSON.stringify(Object.entries(a.resources).sort()) === JSON.stringify(Object.entries(b.resources).sort());
}
