// serve reads the API server's version at start, retries until it knows it, and reads it again
// while it runs: clusters are upgraded underneath it (src/kube/server-version.ts).
import { createServer, type Server } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { watchServerVersion } from "../../src/kube/server-version.ts";
import { eventually } from "../../e2e/support/polling.ts";

let server: Server | undefined;
const stop = new AbortController();
afterEach(async () => {
  stop.abort();
  server?.close();
  if (server !== undefined) await once(server, "close");
});

/** A stand-in API server whose /version answers what `answer()` says at the time. */
async function apiServer(answer: () => { status: number; gitVersion?: string }): Promise<KubeConfig> {
  server = createServer((request, response) => {
    const { status, gitVersion } = answer();
    response.writeHead(status, { "Content-Type": "application/json" });
    response.end(JSON.stringify(status === 200 ? { major: "1", minor: "30", gitVersion, gitCommit: "", gitTreeState: "", buildDate: "", goVersion: "", compiler: "", platform: "" } : { kind: "Status", code: status }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const config = new KubeConfig();
  config.loadFromOptions({ clusters: [{ name: "c", server: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`, skipTLSVerify: true }], users: [{ name: "u" }], contexts: [{ name: "x", cluster: "c", user: "u" }], currentContext: "x" });
  return config;
}

describe("watchServerVersion", () => {
  it("retries a failed first read soon, then follows an upgrade", async () => {
    let answer: { status: number; gitVersion?: string } = { status: 503 };
    const config = await apiServer(() => answer);
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(line) });
    const version = await watchServerVersion(config, logger, stop.signal, { retryMs: 20, intervalMs: 40, firstReadMs: 1_000 });
    expect(version.current()).toBeUndefined();
    expect(lines.join("")).toContain("the API server's version is not known yet");

    answer = { status: 200, gitVersion: "v1.30.14" };
    await eventually(() => Promise.resolve(version.current()?.minor === 30 ? true : undefined), 5_000, "the version once the API server answers");
    expect(lines.join("")).toContain("Kubernetes v1.30.14: PodDecorations that use recursiveReadOnly volume mounts (1.31, RecursiveReadOnlyMounts)");

    answer = { status: 200, gitVersion: "v1.37.2" };
    await eventually(() => Promise.resolve(version.current()?.gitVersion === "v1.37.2" ? true : undefined), 5_000, "the upgraded version");
    expect(lines.join("")).toContain("Kubernetes v1.37.2: every template field pod-decorator knows is available");
    // A failed read later keeps the version last read.
    answer = { status: 500 };
    await eventually(() => Promise.resolve(lines.join("").includes("reading the API server's version failed") ? true : undefined), 5_000, "a failed read");
    expect(version.current()?.gitVersion).toBe("v1.37.2");
  });
});
