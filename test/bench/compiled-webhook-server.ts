// The bench's webhook server (webhook-server.ts) as the image runs the program: compiled by tsc
// with the build's options (tsconfig.build.json, what the Dockerfile compiles src with) into
// build/bench/, and run as JavaScript. Run through Node's type stripping instead, the same server
// idles ~35 MiB larger (the stripper itself, loaded by the first .ts file, and the sources' text),
// which no replica in a cluster pays. tsconfig.webhook-server.json names what to compile: the
// server and the health thread's script, which is loaded by path, not imported.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const PROJECT = new URL("./tsconfig.webhook-server.json", import.meta.url);
const COMPILED = new URL("../../build/bench/test/bench/webhook-server.js", import.meta.url);

let compiled: string | undefined;

/** The path of webhook-server.ts compiled to JavaScript, compiled on the first call of a bench run. */
export function compiledWebhookServer(): string {
  if (compiled !== undefined) return compiled;
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const run = spawnSync(process.execPath, [tsc, "-p", fileURLToPath(PROJECT)], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`compiling the bench's webhook server failed:\n${run.stdout}${run.stderr}`);
  compiled = fileURLToPath(COMPILED);
  return compiled;
}
