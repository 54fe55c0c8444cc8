// Reads an OCI archive back (what writeOciArchive wrote, or any image layout in a tar): the
// configuration of each image and the paths in its layers. For checking what an image holds.
import { readFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";
import { extract } from "tar-stream";

export interface ArchivedImage {
  name: string;
  config: { User?: string; Env?: string[]; Entrypoint?: string[]; Cmd?: string[]; WorkingDir?: string; ExposedPorts?: Record<string, object> };
  configDigest: string;
  /** Every path in the image's layers (no leading slash; directories end with "/"). */
  paths: string[];
}

export async function readOciArchive(file: string): Promise<ArchivedImage[]> {
  const files = await untar(await readFile(file));
  const blob = (digest: string) => {
    const content = files.get(`blobs/sha256/${digest.replace(/^sha256:/, "")}`);
    if (content === undefined) throw new Error(`${file}: blob ${digest} is missing`);
    return content;
  };
  const json = <T>(content: Buffer | undefined): T => JSON.parse((content ?? Buffer.from("null")).toString("utf8")) as T;
  const index = json<{ manifests: { digest: string; annotations?: Record<string, string> }[] }>(files.get("index.json"));
  const images: ArchivedImage[] = [];
  for (const entry of index.manifests) {
    const manifest = json<{ config: { digest: string }; layers: { digest: string }[] }>(blob(entry.digest));
    const config = json<{ config: ArchivedImage["config"] }>(blob(manifest.config.digest)).config;
    const paths: string[] = [];
    for (const layer of manifest.layers) paths.push(...(await untar(gunzipSync(blob(layer.digest)))).keys());
    images.push({ name: entry.annotations?.["io.containerd.image.name"] ?? "", config, configDigest: manifest.config.digest, paths });
  }
  return images;
}

async function untar(tar: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const reader = extract();
  const done = new Promise<void>((resolve, reject) => {
    reader.on("finish", resolve);
    reader.on("error", reject);
  });
  reader.on("entry", (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk) => {
      chunks.push(chunk as Buffer);
    });
    stream.on("end", () => {
      files.set(header.name, Buffer.concat(chunks));
      next();
    });
  });
  reader.end(tar);
  await done;
  return files;
}
