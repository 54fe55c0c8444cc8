// Prometheus metrics on their own plain-HTTP port, apart from the admission server, so a
// scrape never competes with the API server's calls and needs no client certificate.
import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

export function createMetricsServer(registry: Registry): Server {
  return createServer((request, response) => {
    if (request.method !== "GET" || (request.url ?? "").split("?")[0] !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    registry
      .metrics()
      .then((text) => response.writeHead(200, { "content-type": registry.contentType }).end(text))
      .catch((error: unknown) => response.writeHead(500, { "content-type": "text/plain" }).end(`${String(error)}\n`));
  });
}
