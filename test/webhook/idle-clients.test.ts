// Idle and slow clients cannot hold the admission budget (issue 29, DESIGN §10): on a real
// socket, over plain HTTP and TLS, clients that declare 3 MiB bodies and send nothing (or trickle
// a byte at a time) stay connected while real AdmissionReviews are answered 200, and are closed
// at the arrival deadline. The deadlines are short here; the defaults are seconds.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import type { AdmissionLimitsOptions } from "../../src/webhook/admission-limits.ts";
import { allow } from "../../src/webhook/admission-review.ts";
import { createWebhookMetrics } from "../../src/webhook/metrics.ts";
import { createWebhookServer, type WebhookServer } from "../../src/webhook/server.ts";
import { selfSignedCertificates, type ServingCertificates } from "../../src/webhook/serving-certificates.ts";
import { declaredSizes } from "../bench/idle-clients.ts";

type Transport = "plain HTTP" | "TLS";
const MiB = 1024 * 1024;
/** Long enough for 50 TLS handshakes and the reviews on a loaded 2-core machine; short for a test. */
const ARRIVAL_DEADLINE_MS = 1500;
const REAL_REVIEWS = 20;

interface Target {
  port: number;
  ca: string | undefined;
  /** Resolves once the server has read the headers of this many requests. */
  requestsSeen(count: number): Promise<void>;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startServer(transport: Transport, limits: AdmissionLimitsOptions = {}): Promise<Target> {
  let certificates: ServingCertificates | undefined;
  if (transport === "TLS") {
    const issued = await selfSignedCertificates({ hosts: ["127.0.0.1"], certValidityDays: 1 });
    certificates = issued;
    cleanups.push(() => issued.stop());
  }
  const app: WebhookServer = await createWebhookServer({
    logger: pino({ level: "silent" }),
    metrics: createWebhookMetrics(new Registry()),
    readiness: () => ({ ready: true }),
    handlers: { "mutate-pods": (request) => ({ response: allow(request.uid), result: "allowed" }) },
    limits: { arrivalDeadlineMs: ARRIVAL_DEADLINE_MS, ...limits },
    ...(certificates === undefined ? {} : { certificates }),
  });
  cleanups.push(() => app.close());
  await app.listen({ host: "127.0.0.1", port: 0 });
  let seen = 0;
  const waiting: { count: number; resolve: () => void }[] = [];
  app.server.on("request", () => {
    seen++;
    for (const waiter of waiting.filter((entry) => entry.count <= seen)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  return {
    port: (app.server.address() as { port: number }).port,
    ca: certificates?.caBundle(),
    requestsSeen: (count) => (seen >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve }))),
  };
}

interface IdleClient {
  socket: Socket;
  /** What the server wrote before it closed the connection (its first line), and when. */
  closed: Promise<{ afterMs: number; answer: string }>;
}

/**
 * A raw connection that sends the headers of a POST declaring `declared` bytes and then nothing,
 * or one byte every `trickleEveryMs`. Node's own client would not send the headers at all until
 * the first byte of the body (it buffers them), so this writes them itself.
 */
function idleClient(target: Target, declared: number, options: { trickleEveryMs?: number; localAddress?: string; sendNothing?: "after the handshake" | "at all"; bodyBytesFirst?: number } = {}): IdleClient {
  const address = { host: "127.0.0.1", port: target.port, ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }) };
  const tls = target.ca !== undefined && options.sendNothing !== "at all";
  const socket = tls ? tlsConnect({ ...address, ca: target.ca }) : netConnect(address);
  let openedAt = performance.now();
  let answer = "";
  let trickle: NodeJS.Timeout | undefined;
  socket.on(tls ? "secureConnect" : "connect", () => {
    openedAt = performance.now();
    if (options.sendNothing !== undefined) return;
    socket.write(`POST /mutate-pods?timeout=10s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`);
    if (options.bodyBytesFirst !== undefined) socket.write(" ".repeat(options.bodyBytesFirst));
    if (options.trickleEveryMs !== undefined) trickle = setInterval(() => socket.write("{"), options.trickleEveryMs);
  });
  socket.setEncoding("utf8").on("data", (text: string) => (answer += text));
  socket.on("error", () => undefined);
  const closed = new Promise<{ afterMs: number; answer: string }>((resolve) => {
    socket.once("close", () => {
      clearInterval(trickle);
      resolve({ afterMs: performance.now() - openedAt, answer: answer.split("\r\n")[0] ?? "" });
    });
  });
  cleanups.push(() => socket.destroy());
  return { socket, closed };
}

const review = JSON.stringify({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "4f6c6d1e-0000-4000-8000-000000000029",
    kind: { group: "", version: "v1", kind: "Pod" },
    operation: "CREATE",
    namespace: "default",
    object: { metadata: { name: "p" }, spec: { containers: [{ name: "app", image: "app:1" }] } },
  },
});

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
  reusedSocket: boolean;
  ms: number;
}

/** One request; a body `chunked` declares no length. */
function send(target: Target, options: { method: "GET" | "POST"; path: string; agent: HttpAgent | false; body?: string; chunked?: boolean }): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const length = options.chunked === true ? { "transfer-encoding": "chunked" } : { "content-length": Buffer.byteLength(options.body ?? "") };
    const headers = options.body === undefined ? {} : { "content-type": "application/json", ...length };
    const call = (target.ca === undefined ? httpRequest : httpsRequest)({ host: "127.0.0.1", port: target.port, method: options.method, path: options.path, agent: options.agent, ca: target.ca, headers }, (response: IncomingMessage) => {
      let body = "";
      response.setEncoding("utf8").on("data", (text: string) => (body += text));
      response.once("end", () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers["retry-after"], body, reusedSocket: call.reusedSocket, ms: performance.now() - started }));
    });
    call.once("error", reject);
    call.end(options.body);
  });
}

/** Real AdmissionReviews one after another on kept connections, as the API server sends them; their statuses counted. */
async function realReviews(target: Target, count = REAL_REVIEWS): Promise<Record<number, number>> {
  const agent = target.ca === undefined ? new HttpAgent({ keepAlive: true, maxSockets: 2 }) : new HttpsAgent({ keepAlive: true, maxSockets: 2, ca: target.ca });
  const statuses: Record<number, number> = {};
  try {
    for (let sent = 0; sent < count; sent++) {
      const { status } = await send(target, { method: "POST", path: "/mutate-pods?timeout=10s", agent, body: review });
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  } finally {
    agent.destroy();
  }
  return statuses;
}

/** /healthz as a kubelet asks it: a new connection each time. The slowest of `probes`, in ms. */
async function slowestHealthz(target: Target, probes = 10): Promise<number> {
  let slowest = 0;
  for (let probe = 0; probe < probes; probe++) {
    const { status, ms } = await send(target, { method: "GET", path: "/healthz", agent: false });
    expect(status).toBe(200);
    slowest = Math.max(slowest, ms);
  }
  return slowest;
}

function stillOpen(clients: readonly IdleClient[]): number {
  return clients.filter((client) => !client.socket.destroyed && !client.socket.closed).length;
}

async function expectClosedAtTheArrivalDeadline(clients: readonly IdleClient[]): Promise<void> {
  for (const { afterMs, answer } of await Promise.all(clients.map((client) => client.closed))) {
    // Node's request timeout: 408 to a request whose headers and body did not all arrive in time.
    expect(answer).toBe("HTTP/1.1 408 Request Timeout");
    expect(afterMs).toBeGreaterThanOrEqual(ARRIVAL_DEADLINE_MS - 20);
    expect(afterMs).toBeLessThan(ARRIVAL_DEADLINE_MS + 2000);
  }
}

describe.for(["plain HTTP", "TLS"] as const)("idle and slow clients over %s", (transport) => {
  it.for([4, 50])("%i clients declaring 3 MiB bodies and sending nothing leave real AdmissionReviews answered 200 and /healthz fast, and are closed at the arrival deadline", async (clients) => {
    const target = await startServer(transport);
    const idle = declaredSizes(clients).map((declared) => idleClient(target, declared));
    await target.requestsSeen(clients);
    expect(await realReviews(target)).toEqual({ 200: REAL_REVIEWS });
    expect(await slowestHealthz(target)).toBeLessThan(250);
    // They were connected all along: the reviews went through beside them, not after them.
    expect(stillOpen(idle)).toBe(clients);
    await expectClosedAtTheArrivalDeadline(idle);
  });

  it("50 clients trickling their 3 MiB bodies a byte at a time leave real AdmissionReviews answered 200, and are closed at the arrival deadline", async () => {
    const target = await startServer(transport);
    const slow = declaredSizes(50).map((declared) => idleClient(target, declared, { trickleEveryMs: 50 }));
    await target.requestsSeen(50);
    expect(await realReviews(target)).toEqual({ 200: REAL_REVIEWS });
    expect(stillOpen(slow)).toBe(50);
    await expectClosedAtTheArrivalDeadline(slow);
  });

  it.for(transport === "TLS" ? (["at all", "after the handshake"] as const) : (["at all"] as const))("a connection that sends nothing %s is closed at the arrival deadline", async (sendNothing) => {
    const target = await startServer(transport);
    const silent = idleClient(target, 0, { sendNothing });
    const { afterMs } = await silent.closed;
    expect(afterMs).toBeGreaterThanOrEqual(ARRIVAL_DEADLINE_MS - 20);
    expect(afterMs).toBeLessThan(ARRIVAL_DEADLINE_MS + 2000);
  });
});

describe("a client that sends part of its body and stalls", () => {
  it("holds what it sent until the arrival deadline: a review that would overrun the budget meanwhile is answered 429 with Retry-After as its bytes arrive, and 200 once it is closed", async () => {
    const target = await startServer("plain HTTP", { maxInFlightBytes: 64 * 1024 });
    const stalled = idleClient(target, MiB, { bodyBytesFirst: 60 * 1024 });
    const large = review.replace('"name":"p"', `"name":"p","annotations":{"padding":"${"x".repeat(16 * 1024)}"}`);
    const agent = new HttpAgent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    // Declaring no length, it is refused by its bytes, not at its headers; until the server has
    // read the stalled client's 60 KiB it still fits.
    let answer = await send(target, { method: "POST", path: "/mutate-pods", agent, body: large, chunked: true });
    while (answer.status === 200 && stillOpen([stalled]) === 1) answer = await send(target, { method: "POST", path: "/mutate-pods", agent, body: large, chunked: true });
    expect(answer.status).toBe(429);
    expect(answer.retryAfter).toBe("1");
    expect((JSON.parse(answer.body) as { message: string }).message).toMatch(/^pod-decorator: 0\.1 MiB of other admission requests are in flight and this one has 0\.0 MiB so far \(at most 0\.1 MiB at once\); retry after 1 s$/);
    expect((await stalled.closed).answer).toBe("HTTP/1.1 408 Request Timeout");
    expect((await send(target, { method: "POST", path: "/mutate-pods", agent, body: large, chunked: true })).status).toBe(200);
  });
});

describe("connections per source address", () => {
  it.for(["plain HTTP", "TLS"] as const)("over %s, one beyond the cap is closed at once without an answer, and other sources are served meanwhile", async (transport) => {
    const target = await startServer(transport, { maxConnectionsPerSource: 8 });
    const held = Array.from({ length: 8 }, () => idleClient(target, 3 * MiB, { localAddress: "127.0.0.2" }));
    await target.requestsSeen(8);
    const beyond = idleClient(target, 3 * MiB, { localAddress: "127.0.0.2" });
    const { afterMs, answer } = await beyond.closed;
    expect(answer).toBe("");
    expect(afterMs).toBeLessThan(ARRIVAL_DEADLINE_MS / 2);
    expect(await realReviews(target)).toEqual({ 200: REAL_REVIEWS });
    expect(stillOpen(held)).toBe(8);
  });
});

describe("kept connections", () => {
  it.for(["plain HTTP", "TLS"] as const)("over %s, a connection idle after its answer is closed after the idle timeout, while a client that keeps sending keeps its connection", { timeout: 15_000 }, async (transport) => {
    // Node announces it as Keep-Alive: timeout=2, and its own client reuses a socket only when
    // that says more than a second.
    const keepAliveTimeoutMs = 2000;
    const target = await startServer(transport, { keepAliveTimeoutMs });
    const quiet = answeredThenIdle(target);
    const busy = target.ca === undefined ? new HttpAgent({ keepAlive: true, maxSockets: 1 }) : new HttpsAgent({ keepAlive: true, maxSockets: 1, ca: target.ca });
    cleanups.push(() => busy.destroy());
    let quietClosed = false;
    void quiet.closed.then(() => (quietClosed = true));
    const reused: boolean[] = [];
    // One review after another on the other connection until the quiet one is gone.
    while (!quietClosed) {
      const answer = await send(target, { method: "POST", path: "/mutate-pods", agent: busy, body: review });
      expect(answer.status).toBe(200);
      reused.push(answer.reusedSocket);
    }
    const { answer, idleMs } = await quiet.closed;
    expect(answer).toBe("HTTP/1.1 200 OK");
    // Node closes it keepAliveTimeoutBuffer (a second) after the timeout it announced.
    expect(idleMs).toBeGreaterThanOrEqual(keepAliveTimeoutMs - 20);
    expect(idleMs).toBeLessThan(keepAliveTimeoutMs + 1000 + 1500);
    expect(reused.length).toBeGreaterThan(5);
    expect(reused.slice(1).every(Boolean)).toBe(true);
  });
});

/** A raw connection that sends one review, reads its answer and then says nothing. */
function answeredThenIdle(target: Target): { closed: Promise<{ answer: string; idleMs: number }> } {
  const address = { host: "127.0.0.1", port: target.port };
  const socket = target.ca === undefined ? netConnect(address) : tlsConnect({ ...address, ca: target.ca });
  socket.on(target.ca === undefined ? "connect" : "secureConnect", () => {
    socket.write(`POST /mutate-pods HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(review)}\r\n\r\n${review}`);
  });
  let answeredAt = 0;
  let answer = "";
  socket.setEncoding("utf8").on("data", (text: string) => {
    if (answer === "") answeredAt = performance.now();
    answer += text;
  });
  socket.on("error", () => undefined);
  cleanups.push(() => socket.destroy());
  return { closed: new Promise((resolve) => socket.once("close", () => resolve({ answer: answer.split("\r\n")[0] ?? "", idleMs: performance.now() - answeredAt }))) };
}
