// The webhook the fuzz test attacks: the real HTTPS server with the handlers `serve` mounts,
// over caches holding valid, invalid and broken decorations. It runs in a process of its own
// (forked with --expose-gc), so that a crash is an exit, and the heap and handles measured
// are the server's alone. Talks to its parent over IPC: "listening" once up, and a
// "measurement" (after a full GC) whenever asked.
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { Registry } from "prom-client";
import { admissionHandlers } from "../../../src/webhook/admission-handlers.ts";
import { createWebhookMetrics } from "../../../src/webhook/metrics.ts";
import { createWebhookServer } from "../../../src/webhook/server.ts";
import { selfSignedCertificates } from "../../../src/webhook/serving-certificates.ts";
import { trustUsernames } from "../../../src/webhook/requester-trust.ts";
import { cachedDecorations, FUZZ_CONTROLLER } from "./cached-decorations.ts";

export type ToServer = { type: "measure" } | { type: "stop" };

export type FromServer =
  | { type: "listening"; port: number; ca: string }
  | {
    type: "measurement";
    heapUsedBytes: number;
    /** Memory outside the V8 heap (Buffers): where request bodies live. */
    externalBytes: number;
    /** process.getActiveResourcesInfo() counted by kind (sockets, timers…). */
    resources: Record<string, number>;
    connections: number;
    /** Properties that appeared on Object.prototype: prototype pollution. */
    polluted: string[];
  };

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");
const send = (message: FromServer) => process.send?.(message);

// Warnings and errors go to stderr, where the test collects them.
const logger = pino({ level: "warn" }, pino.destination(2));
const certificates = await selfSignedCertificates({ hosts: ["127.0.0.1"] });
const app = await createWebhookServer({
  logger,
  metrics: createWebhookMetrics(new Registry()),
  readiness: () => ({ ready: true }),
  handlers: admissionHandlers({
    source: cachedDecorations(),
    onDecorationError: "reject",
    trustRequester: trustUsernames([FUZZ_CONTROLLER]),
    onInternalError: (error) => logger.error({ err: error }, "pod webhook failed"),
    // The memory of answers is bounded (its own tests say how); kept small here, so that what
    // it holds, full or not, stays far below the growth that counts as a leak.
    memoLimits: { entries: 8, characters: 128 * 1024, keyCharacters: 64 * 1024 },
  }),
  certificates,
});
await app.listen({ host: "127.0.0.1", port: 0 });

const pristinePrototype = new Set(Object.getOwnPropertyNames(Object.prototype));

async function measure(): Promise<FromServer> {
  // Twice: the first pass can leave finalizers' garbage for the second.
  gc!();
  gc!();
  const resources: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) resources[kind] = (resources[kind] ?? 0) + 1;
  const connections = await new Promise<number>((done) => app.server.getConnections((_error, count) => done(count)));
  const polluted = Object.getOwnPropertyNames(Object.prototype).filter((name) => !pristinePrototype.has(name));
  const memory = process.memoryUsage();
  return { type: "measurement", heapUsedBytes: memory.heapUsed, externalBytes: memory.external, resources, connections, polluted };
}
process.on("message", (message: ToServer) => {
  if (message.type === "measure") void measure().then(send);
  else void app.close().then(() => {
    certificates.stop();
    process.exit(0);
  });
});
// A test that dies must not leave its server behind.
process.once("disconnect", () => process.exit(0));
send({ type: "listening", port: (app.server.address() as AddressInfo).port, ca: certificates.caBundle() ?? "" });
