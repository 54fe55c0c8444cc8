// make image: the project's image as an OCI archive, without a Docker engine (project-image.ts).
// usage: node image/build.ts --node NODE24_BINARY --out FILE
// Needs `dist/` (make build). Production dependencies are installed with `npm ci --omit=dev`
// into build/image/app, reused while package-lock.json is unchanged.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import { writeOciArchive } from "./oci-archive.ts";
import { projectImage } from "./project-image.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { node: { type: "string" }, out: { type: "string" } } });
if (values.node === undefined || values.out === undefined) {
  console.error("usage: node image/build.ts --node NODE24_BINARY --out FILE");
  process.exit(2);
}

const nodeVersion = execFileSync(values.node, ["--version"], { encoding: "utf8" }).trim();
if (!nodeVersion.startsWith("v24.")) throw new Error(`${values.node} is Node ${nodeVersion}; the image runs Node 24`);
await stat(join(root, "dist", "cli", "main.js")).catch(() => {
  throw new Error("dist/cli/main.js is missing: run make build first");
});

const started = Date.now();
const app = join(root, "build", "image", "app");
await productionDependencies(app);
const chart = parseYaml(await readFile(join(root, "charts", "pod-decorator", "Chart.yaml"), "utf8")) as { appVersion: string };
const reference = `pod-decorator:${chart.appVersion}`;
const image = await projectImage({
  reference,
  nodeBinary: values.node,
  app: { "package.json": join(root, "package.json"), node_modules: join(app, "node_modules"), dist: join(root, "dist") },
});
await mkdir(dirname(resolve(values.out)), { recursive: true });
const [written] = await writeOciArchive(resolve(values.out), [image]);
const size = (await stat(values.out)).size;
console.log(`${written?.name} (Node ${nodeVersion}, image id ${written?.configDigest}): ${values.out}, ${(size / 2 ** 20).toFixed(1)} MiB, built in ${((Date.now() - started) / 1000).toFixed(1)}s`);

/** `npm ci --omit=dev --ignore-scripts` as the Dockerfile's build stage ends up with, once per lock file. */
async function productionDependencies(folder: string): Promise<void> {
  const lock = await readFile(join(root, "package-lock.json"));
  const key = createHash("sha256").update(lock).update(await readFile(join(root, "package.json"))).digest("hex");
  const marker = join(folder, ".installed");
  if ((await readFile(marker, "utf8").catch(() => "")) === key) return;
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  await copyFile(join(root, "package.json"), join(folder, "package.json"));
  await copyFile(join(root, "package-lock.json"), join(folder, "package-lock.json"));
  console.error("installing production dependencies (npm ci --omit=dev) into build/image/app");
  execFileSync("npm", ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: folder, stdio: ["ignore", "inherit", "inherit"] });
  await writeFile(marker, key);
}
