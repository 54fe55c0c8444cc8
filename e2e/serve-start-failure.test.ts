// `pod-decorator serve` that cannot start must fail, not linger half-started: with one of its
// ports taken (seen in a `make test` run: another process took the metrics port between the test choosing it and
// serve binding it), the first serve left its webhook port open and its informers watching, and
// waited for nothing until it was killed. It now stops what it had started and exits 1, naming
// the cause, so that its pod is restarted.
import { createServer, type Server } from "node:net";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { startOperator } from "./support/operator.ts";

async function listening(): Promise<Server> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return server;
}

describe("serve that cannot start", () => {
  it("exits 1 at once, naming the port it could not take, with nothing left running", async () => {
    const taken = await listening();
    const port = (taken.address() as { port: number }).port;
    try {
      const started = Date.now();
      const failure = await startOperator({ args: [`--metrics-port=${port}`], waitForWebhook: false }).then(
        () => new Error("serve started with its metrics port taken"),
        (error: unknown) => error as Error,
      );
      expect(failure.message).toMatch(/^serve exited with code 1, signal none, before it logged "msg":"caches synced; ready"/);
      expect(failure.message).toContain(`EADDRINUSE: address already in use 127.0.0.1:${port}`);
      // Its caches would have synced within seconds; it did not wait for the start-up timeout (2 min).
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      taken.close();
    }
  });
});
