// Child of requests-die-young.test.ts: the webhook server answering `count` pod AdmissionReviews
// over HTTP keep-alive, on ten connections from a bare socket client in this process (inject()
// would not do: light-my-request's own responses live long), under --trace-gc-nvp, which the
// parent reads from stdout.
import { connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { Registry } from "prom-client";
import { allow } from "../../src/webhook/admission-review.ts";
import { createWebhookMetrics } from "../../src/webhook/metrics.ts";
import { createWebhookServer } from "../../src/webhook/server.ts";

const count = Number(process.argv[2]);
const CONNECTIONS = 10;
const app = await createWebhookServer({
  logger: pino({ level: "silent" }),
  metrics: createWebhookMetrics(new Registry()),
  readiness: () => ({ ready: true }),
  handlers: { "mutate-pods": (request) => ({ response: allow(request.uid), result: "allowed" }) },
});
await app.listen({ host: "127.0.0.1", port: 0 });
const { port } = app.server.address() as AddressInfo;

const labels = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`label-${String(i)}`, "x".repeat(40)]));
const review = JSON.stringify({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid: "uid", kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE", namespace: "default", object: { metadata: { name: "p", labels }, spec: { containers: [{ name: "app", image: "app:1" }] } } },
});
const request = `POST /mutate-pods HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${String(Buffer.byteLength(review))}\r\n\r\n${review}`;

/** Sends `requests` one after another on one kept connection; resolves when all are answered 200. */
function sendOn(socket: Socket, requests: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let received = "";
    let answered = 0;
    socket.setEncoding("utf8");
    socket.on("error", reject);
    socket.on("data", (chunk: string) => {
      received += chunk;
      for (;;) {
        const headerEnd = received.indexOf("\r\n\r\n");
        if (headerEnd < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(received.slice(0, headerEnd))?.[1]);
        if (received.length < headerEnd + 4 + length) return;
        if (!received.startsWith("HTTP/1.1 200")) {
          reject(new Error(received.slice(0, headerEnd)));
          return;
        }
        received = received.slice(headerEnd + 4 + length);
        if (++answered === requests) {
          socket.end();
          resolve();
          return;
        }
        socket.write(request);
      }
    });
    socket.write(request);
  });
}

await Promise.all(Array.from({ length: CONNECTIONS }, () => sendOn(connect(port, "127.0.0.1"), Math.ceil(count / CONNECTIONS))));
await app.close();
