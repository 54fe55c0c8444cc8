// What a request allocates must die young: in the scavenge after it is answered, not promoted to
// the old generation to wait for a full collection. Three things in the server once kept every
// request alive through scavenges, each on its own (issue 32): a WeakMap keyed by the request (a
// scavenge holds a WeakMap's values strongly), @fastify/helmet's closure on every reply and the
// Transform the body went through (V8 allocates a function literal assigned to a property in the
// old generation, and from there it kept the request's objects alive). Each promoted ~8 KB per
// request; now it is a few bytes.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const child = fileURLToPath(new URL("./requests-die-young-child.ts", import.meta.url));

/** Bytes the scavenges promoted while the server started and answered `requests`. */
function promotedBytes(requests: number): number {
  const run = spawnSync(process.execPath, ["--max-semi-space-size=1", "--trace-gc-nvp", child, String(requests)], { encoding: "utf8", timeout: 60_000 });
  if (run.status !== 0) throw new Error(`child exited ${String(run.status)}: ${run.stderr}`);
  const scavenges = run.stdout.split("\n").filter((line) => line.includes(" gc=s "));
  return scavenges.reduce((sum, line) => sum + Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0), 0);
}

describe("the webhook server's requests", () => {
  it("die young: 3,000 more requests promote under 1 KiB each to the old generation (the request's objects are ~8 KiB)", () => {
    // Starting the server promotes its modules and caches; the difference is the requests' own.
    const perRequest = (promotedBytes(4000) - promotedBytes(1000)) / 3000;
    expect(perRequest).toBeLessThan(1024);
  }, 120_000);
});
