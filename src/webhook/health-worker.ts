// The health endpoints' own thread (see health-server.ts): a plain-HTTP server that answers
// /healthz and /readyz from what the main thread last published, so a probe is answered in
// microseconds however busy the main thread's event loop is with admission requests.
import { createServer } from "node:http";
import { parentPort, workerData } from "node:worker_threads";

interface HealthWorkerData {
  host: string;
  port: number;
  /** [0]: the main thread's last heartbeat (ms since epoch); [1]: 1 when ready. */
  state: SharedArrayBuffer;
  staleAfterMs: number;
}

const { host, port, state, staleAfterMs } = workerData as HealthWorkerData;
const shared = new BigInt64Array(state);
let notReadyReason = "starting";

parentPort?.on("message", (message: { reason?: string }) => {
  if (typeof message.reason === "string") notReadyReason = message.reason;
});

function stalledFor(): number {
  return Date.now() - Number(Atomics.load(shared, 0));
}

const server = createServer((request, response) => {
  const path = (request.url ?? "").split("?")[0];
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.writeHead(405, { "content-type": "text/plain", allow: "GET, HEAD" }).end("method not allowed\n");
    return;
  }
  const stalled = stalledFor();
  const alive = stalled < staleAfterMs;
  if (path === "/healthz") {
    if (alive) response.writeHead(200, { "content-type": "text/plain" }).end("ok");
    else response.writeHead(500, { "content-type": "text/plain" }).end(`the main event loop has not run for ${stalled} ms`);
  } else if (path === "/readyz") {
    const ready = Atomics.load(shared, 1) === 1n;
    if (alive && ready) response.writeHead(200, { "content-type": "text/plain" }).end("ok");
    else response.writeHead(503, { "content-type": "text/plain" }).end(`not ready: ${alive ? notReadyReason : `the main event loop has not run for ${stalled} ms`}`);
  } else {
    response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  }
});
server.listen(port, host, () => {
  const address = server.address();
  parentPort?.postMessage({ listening: typeof address === "object" && address !== null ? address.port : port });
});
parentPort?.on("close", () => server.close());
