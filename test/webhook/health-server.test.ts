// The health thread answers while the main thread is busy, and says so when it is hung.
import { execFile } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { startHealthServer, type HealthServer } from "../../src/webhook/health-server.ts";

const started: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.stop()));
});

/** GETs a path from another process, after `delayMs`, so the answer does not need this thread. */
function probeFromOutside(port: number, path: string, delayMs: number): Promise<{ status: number; body: string; ms: number }> {
  const script = `setTimeout(() => { const t = performance.now(); require("node:http").get({ host: "127.0.0.1", port: ${port}, path: ${JSON.stringify(path)} }, (r) => { let b = ""; r.on("data", (c) => (b += c)); r.on("end", () => console.log(JSON.stringify({ status: r.statusCode, body: b, ms: performance.now() - t }))); }); }, ${delayMs});`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["-e", script], (error, stdout) => {
      if (error === null) resolve(JSON.parse(stdout) as { status: number; body: string; ms: number });
      else reject(new Error(`the probe failed: ${error.message}`));
    });
  });
}

/** Asks from this thread (it is not busy) until the path answers `status`: the heartbeat has carried the main thread's state over. */
async function untilStatus(port: number, path: string, status: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`http://127.0.0.1:${port}${path}`);
    const body = await response.text();
    if (response.status === status) return;
    if (Date.now() > deadline) throw new Error(`${path} still answers ${response.status} (${body}) after ${timeoutMs} ms`);
    await new Promise((resume) => setTimeout(resume, 20));
  }
}

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the main thread's event loop is stuck here
  }
}

describe("the health server", () => {
  it("answers /healthz while the main thread is busy, and /readyz with the main thread's readiness", async () => {
    let ready = false;
    const health = await startHealthServer({ host: "127.0.0.1", port: 0, readiness: () => (ready ? { ready: true } : { ready: false, reason: "caches not synced" }) });
    started.push(health);
    expect(await probeFromOutside(health.port, "/readyz", 0)).toMatchObject({ status: 503, body: "not ready: caches not synced" });
    ready = true;
    await untilStatus(health.port, "/readyz", 200);
    // Started before the main thread blocks, answered while it is blocked.
    const probe = probeFromOutside(health.port, "/healthz", 400);
    const readyProbe = probeFromOutside(health.port, "/readyz", 400);
    busy(1500);
    const [live, readiness] = await Promise.all([probe, readyProbe]);
    expect(live.status).toBe(200);
    expect(live.ms).toBeLessThan(500);
    expect(readiness.status).toBe(200);
  });

  it("fails /healthz and /readyz when the main thread's event loop has not run for staleAfterMs", async () => {
    const health = await startHealthServer({ host: "127.0.0.1", port: 0, readiness: () => ({ ready: true }), staleAfterMs: 300 });
    started.push(health);
    const probe = probeFromOutside(health.port, "/healthz", 900);
    const readyProbe = probeFromOutside(health.port, "/readyz", 900);
    // Long enough that the probes land inside it even when a loaded machine is slow to start them.
    busy(3000);
    const [live, readiness] = await Promise.all([probe, readyProbe]);
    expect(live.status).toBe(500);
    expect(live.body).toMatch(/^the main event loop has not run for \d+ ms$/);
    expect(readiness.status).toBe(503);
    // The main thread runs again: its next heartbeat makes the health thread answer 200 again.
    await untilStatus(health.port, "/healthz", 200);
  });
});
