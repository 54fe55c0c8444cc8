// The bench's processes as the image runs the program: compiled by tsc with the build's options
// (tsconfig.build.json, what the Dockerfile compiles src with) into build/bench/, and run as
// JavaScript. Run through Node's type stripping instead, the bench's webhook server idles ~35 MiB
// larger (the stripper itself, loaded by the first .ts file, and the sources' text), which no
// replica in a cluster pays. tsconfig.compiled.json names what is compiled: the bench's webhook
// server (webhook-server.ts), `pod-decorator` itself (src/cli/main.ts) and the health thread's
// script, which is loaded by path, not imported. They run with the node flags the image's entrypoint
// gives (image/project-image.ts, the Dockerfile's ENTRYPOINT as data).
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { PROJECT_IMAGE_CONFIG } from "../../image/project-image.ts";

const PROJECT = fileURLToPath(new URL("./tsconfig.compiled.json", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OUT = join(ROOT, "build", "bench");

let compiledOnce = false;

/** The path of `source` (a .ts file tsconfig.compiled.json names) compiled to JavaScript; compiles on the first call of a bench run. */
export function compiledScript(source: URL): string {
  if (!compiledOnce) {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const run = spawnSync(process.execPath, [tsc, "-p", PROJECT], { encoding: "utf8" });
    if (run.status !== 0) throw new Error(`compiling the bench's programs failed:\n${run.stdout}${run.stderr}`);
    compiledOnce = true;
  }
  return join(OUT, relative(ROOT, fileURLToPath(source)).replace(/\.ts$/, ".js"));
}

/** The node flags of the image's entrypoint: what comes between `node` and the program. */
export function imageNodeFlags(): string[] {
  const [, ...rest] = PROJECT_IMAGE_CONFIG.entrypoint;
  return rest.slice(0, rest.findIndex((argument) => !argument.startsWith("-")));
}

/** Node's arguments for `source` as the image runs the program: its node flags, then `source` compiled. */
export function asImageRuns(source: URL): string[] {
  return [...imageNodeFlags(), compiledScript(source)];
}

/** Node's arguments for the bench's webhook server (webhook-server.ts), as the image runs the program. */
export function webhookServerArgs(): string[] {
  return asImageRuns(new URL("./webhook-server.ts", import.meta.url));
}
