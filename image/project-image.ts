// The project's own image, made without a Docker engine from the inputs the Dockerfile uses:
// the Node 24 binary (with the C libraries it links, from this Debian 12 machine — the
// Dockerfile's base is Debian 12 too), `dist/`, production `node_modules` and `package.json`,
// with the Dockerfile's entrypoint, user, working directory, environment and ports. The
// Dockerfile stays the published build; test/image/dockerfile-parity.test.ts keeps the two alike.
import { execFileSync } from "node:child_process";
import { lstat, readdir, readFile, readlink, realpath } from "node:fs/promises";
import { join } from "node:path";
import type { Image, ImageConfig, LayerEntry } from "./oci-archive.ts";

/** What the Dockerfile's runtime stage declares, here as data. */
export const PROJECT_IMAGE_CONFIG: Required<Pick<ImageConfig, "entrypoint" | "env" | "workingDir" | "user" | "exposedPorts">> = {
  entrypoint: ["node", "--no-maglev", "/app/dist/cli/main.js", "serve"],
  env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "NODE_ENV=production"],
  workingDir: "/app",
  user: "65532:65532",
  exposedPorts: ["9443/tcp", "8081/tcp", "8080/tcp"],
};

/** Where the node binary lives in the Dockerfile's base image (node:24-bookworm-slim). */
export const NODE_PATH_IN_IMAGE = "/usr/local/bin/node";

/** The files under /app, as the Dockerfile copies them from its build stage. */
export const APP_PATHS = ["package.json", "node_modules", "dist"] as const;

export interface ProjectImageInputs {
  reference: string;
  nodeBinary: string;
  /** Where each of APP_PATHS comes from (node_modules: production dependencies only). */
  app: Record<(typeof APP_PATHS)[number], string>;
}

export async function projectImage(inputs: ProjectImageInputs): Promise<Image> {
  const runtime: LayerEntry[] = [
    ...(await sharedLibraries(inputs.nodeBinary)),
    { path: NODE_PATH_IN_IMAGE, content: await readFile(inputs.nodeBinary), mode: 0o755 },
    { path: "tmp", directory: true, mode: 0o1777 },
  ];
  const app: LayerEntry[] = [];
  for (const path of APP_PATHS) app.push(...(await tree(inputs.app[path], `app/${path}`)));
  return { reference: inputs.reference, layers: [runtime, app], config: PROJECT_IMAGE_CONFIG };
}

/** The C libraries the binary links (as `ldd` resolves them here), each at the path it is looked up by. */
async function sharedLibraries(binary: string): Promise<LayerEntry[]> {
  const output = execFileSync("ldd", [binary], { encoding: "utf8" });
  // Line by line (`libc.so.6 => /lib/…/libc.so.6 (0x…)`, `/lib64/ld-linux-x86-64.so.2 (0x…)`): the path
  // is the last word before the load address.
  const paths = output.split("\n").flatMap((line) => {
    const address = line.indexOf(" (0x");
    const path = address < 0 ? "" : (line.slice(0, address).trim().split(/\s+/).at(-1) ?? "");
    return path.startsWith("/") ? [path] : [];
  });
  if (paths.length === 0) throw new Error(`ldd found no libraries for ${binary}:\n${output}`);
  return Promise.all(paths.map(async (path) => ({ path, content: await readFile(await realpath(path)), mode: 0o755 })));
}

/** Every file, directory and symbolic link under `source`, as entries under `target`, sorted. */
async function tree(source: string, target: string): Promise<LayerEntry[]> {
  const stat = await lstat(source);
  if (stat.isSymbolicLink()) return [{ path: target, symlink: await readlink(source) }];
  if (stat.isFile()) return [{ path: target, content: await readFile(source), mode: stat.mode & 0o111 ? 0o755 : 0o644 }];
  if (!stat.isDirectory()) throw new Error(`${source}: neither a file, a directory nor a link`);
  const entries: LayerEntry[] = [{ path: target, directory: true }];
  const names = (await readdir(source)).sort();
  for (const name of names) entries.push(...(await tree(join(source, name), `${target}/${name}`)));
  return entries;
}
