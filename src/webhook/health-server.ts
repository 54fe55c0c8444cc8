// /healthz and /readyz on a port of their own, served by a worker thread (DESIGN §10): the
// main thread parses and answers admission requests, and a flood of large ones keeps its event
// loop busy for as long as the flood lasts; a probe answered there would wait behind them and a
// kubelet would restart a replica that is working. The worker answers from a heartbeat the main
// thread writes into shared memory every 100 ms: /healthz fails only when the main loop has not
// run for `staleAfterMs` (a real hang), /readyz also needs the caches synced.
import { once } from "node:events";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Readiness } from "./server.ts";

export interface HealthServerOptions {
  host: string;
  port: number;
  readiness: () => Readiness;
  staleAfterMs?: number;
}

export interface HealthServer {
  port: number;
  stop(): Promise<void>;
}

const HEARTBEAT_MS = 100;

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const state = new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT);
  const shared = new BigInt64Array(state);
  // The worker is a sibling module, compiled or not.
  const script = new URL(`./health-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  const worker = new Worker(script, { workerData: { host: options.host, port: options.port, state, staleAfterMs: options.staleAfterMs ?? 10_000 } });
  let reason: string | undefined;
  const beat = () => {
    Atomics.store(shared, 0, BigInt(Date.now()));
    const readiness = options.readiness();
    Atomics.store(shared, 1, readiness.ready ? 1n : 0n);
    const next = readiness.ready ? undefined : readiness.reason ?? "starting";
    if (next !== undefined && next !== reason) worker.postMessage({ reason: next });
    reason = next;
  };
  beat();
  const heartbeat = setInterval(beat, HEARTBEAT_MS);
  heartbeat.unref();
  const [message] = (await Promise.race([once(worker, "message"), once(worker, "error").then(([error]) => Promise.reject(error as Error))])) as [{ listening: number }];
  return {
    port: message.listening,
    async stop() {
      clearInterval(heartbeat);
      await worker.terminate();
    },
  };
}
