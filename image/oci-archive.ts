// Container images as OCI archives (an OCI image layout in one tar), assembled from files in
// hand, with no registry and no Docker engine: what `make image` and the real node's test images
// are made of. containerd imports them with `ctr images import`. The same inputs give the same
// bytes (fixed timestamps and order), so the same image gets the same id and any change a new one.
import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { pack as tarPack, type Header } from "tar-stream";
import { normalizedImageReference } from "../src/api/image-reference.ts";

/** One entry of a layer; directories are created for every path that needs them. */
export type LayerEntry =
  | { path: string; content: Buffer | string; mode?: number; uid?: number; gid?: number }
  | { path: string; symlink: string }
  | { path: string; directory: true; mode?: number; uid?: number; gid?: number };

/** The parts of the OCI image configuration a runtime reads (see the image-spec's config.md). */
export interface ImageConfig {
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
  workingDir?: string;
  user?: string;
  exposedPorts?: string[];
  labels?: Record<string, string>;
}

export interface Image {
  /** A reference as a pod spells it (`pod-decorator:0.1.0`, `e2e.local/app:1`). */
  reference: string;
  layers: LayerEntry[][];
  config: ImageConfig;
}

export interface WrittenImage {
  /** The reference containerd stores the image under (`docker.io/library/...` where implied). */
  name: string;
  /** The image id: the digest of its configuration, as the kubelet reports it in `imageID`. */
  configDigest: string;
  manifestDigest: string;
}

/** Timestamps of every file and of the image: a fixed instant, so equal inputs are equal images. */
const EPOCH = new Date("2026-01-01T00:00:00Z");

/** Writes one OCI archive holding every image (layers shared between them are stored once). */
export async function writeOciArchive(file: string, images: readonly Image[]): Promise<WrittenImage[]> {
  const blobs = new Map<string, Buffer>();
  const addBlob = (content: Buffer): { digest: string; size: number } => {
    const digest = `sha256:${sha256(content)}`;
    blobs.set(digest, content);
    return { digest, size: content.length };
  };

  // A layer shared by several images (the same array) is packed and compressed once.
  const packed = new Map<readonly LayerEntry[], { tar: Buffer; gzip: Buffer }>();
  const pack = async (layer: readonly LayerEntry[]) => {
    let result = packed.get(layer);
    if (result === undefined) {
      const tar = await layerTar(layer);
      packed.set(layer, (result = { tar, gzip: gzipSync(tar, { level: 1 }) }));
    }
    return result;
  };
  const written: WrittenImage[] = [];
  const manifests: object[] = [];
  for (const image of images) {
    const packedLayers = await Promise.all(image.layers.map(pack));
    const layers = packedLayers.map((layer) => layer.tar);
    const layerDescriptors = packedLayers.map((layer) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", ...addBlob(layer.gzip) }));
    const config = addBlob(Buffer.from(JSON.stringify(imageConfigDocument(image.config, layers))));
    const manifest = addBlob(Buffer.from(JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", ...config },
      layers: layerDescriptors,
    })));
    const name = normalizedImageReference(image.reference);
    manifests.push({
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      ...manifest,
      platform: { architecture: "amd64", os: "linux" },
      annotations: { "io.containerd.image.name": name, "org.opencontainers.image.ref.name": name.slice(name.lastIndexOf(":") + 1) },
    });
    written.push({ name, configDigest: config.digest, manifestDigest: manifest.digest });
  }

  const archive: LayerEntry[] = [
    { path: "oci-layout", content: JSON.stringify({ imageLayoutVersion: "1.0.0" }) },
    { path: "index.json", content: JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests }) },
    ...[...blobs].map(([digest, content]) => ({ path: `blobs/sha256/${digest.slice("sha256:".length)}`, content })),
  ];
  await writeFile(file, await layerTar(archive));
  return written;
}

function imageConfigDocument(config: ImageConfig, layers: readonly Buffer[]): object {
  return {
    created: EPOCH.toISOString(),
    architecture: "amd64",
    os: "linux",
    config: {
      ...(config.user === undefined ? {} : { User: config.user }),
      ...(config.env === undefined ? {} : { Env: config.env }),
      ...(config.entrypoint === undefined ? {} : { Entrypoint: config.entrypoint }),
      ...(config.cmd === undefined ? {} : { Cmd: config.cmd }),
      ...(config.workingDir === undefined ? {} : { WorkingDir: config.workingDir }),
      ...(config.exposedPorts === undefined ? {} : { ExposedPorts: Object.fromEntries(config.exposedPorts.map((port) => [port, {}])) }),
      ...(config.labels === undefined ? {} : { Labels: config.labels }),
    },
    rootfs: { type: "layers", diff_ids: layers.map((tar) => `sha256:${sha256(tar)}`) },
    history: layers.map(() => ({ created: EPOCH.toISOString(), created_by: "pod-decorator image/oci-archive.ts" })),
  };
}

/** An uncompressed tar of the entries, parent directories first, in the order given. */
async function layerTar(entries: readonly LayerEntry[]): Promise<Buffer> {
  const tar = tarPack();
  const chunks: Buffer[] = [];
  tar.on("data", (chunk) => {
    chunks.push(chunk as Buffer);
  });
  const finished = new Promise<void>((done, fail) => {
    tar.on("end", done);
    tar.on("error", fail);
  });
  const directories = new Set<string>();
  const add = (header: Partial<Header> & Pick<Header, "name">, content: Buffer = Buffer.alloc(0)) =>
    new Promise<void>((done, fail) => tar.entry({ mtime: EPOCH, uid: 0, gid: 0, uname: "", gname: "", ...header }, content, (error) => (error ? fail(error) : done())));
  const addParents = async (path: string) => {
    const parts = path.split("/").slice(0, -1);
    for (let index = 1; index <= parts.length; index += 1) {
      const directory = parts.slice(0, index).join("/");
      if (directories.has(directory)) continue;
      directories.add(directory);
      await add({ name: `${directory}/`, type: "directory", mode: 0o755 });
    }
  };
  for (const entry of entries) {
    const path = entry.path.replace(/^\/+/, "");
    await addParents(path);
    if ("symlink" in entry) {
      await add({ name: path, type: "symlink", linkname: entry.symlink, mode: 0o777 });
    } else if ("directory" in entry) {
      directories.add(path);
      await add({ name: `${path}/`, type: "directory", mode: entry.mode ?? 0o755, uid: entry.uid ?? 0, gid: entry.gid ?? 0 });
    } else {
      await add({ name: path, type: "file", mode: entry.mode ?? 0o644, uid: entry.uid ?? 0, gid: entry.gid ?? 0 }, Buffer.from(entry.content));
    }
  }
  tar.finalize();
  await finished;
  return Buffer.concat(chunks);
}

function sha256(content: Buffer): string {
  return createHash("sha256").update(content).digest("hex");
}
