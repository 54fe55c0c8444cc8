import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeOciArchive, type Image } from "../../image/oci-archive.ts";
import { readOciArchive } from "../../image/read-oci-archive.ts";

const folder = await mkdtemp(join(tmpdir(), "oci-archive-test-"));
afterAll(() => rm(folder, { recursive: true, force: true }));

const shared = [{ path: "bin/tool", content: "#!/bin/tool\n", mode: 0o755 }, { path: "bin/alias", symlink: "tool" }];
const image = (tag: string): Image => ({
  reference: `e2e.local/thing:${tag}`,
  layers: [shared, [{ path: "etc/tag", content: `${tag}\n` }]],
  config: { entrypoint: ["/bin/tool"], user: "65532:65532", env: ["A=1"] },
});

describe("OCI archives", () => {
  it("names images as containerd and the kubelet store them", async () => {
    const written = await writeOciArchive(join(folder, "names.tar"), ["pod-decorator:0.1.0", "team/app:2", "e2e.local/app:1", "localhost/app"].map((reference) => ({ ...image("1"), reference })));
    expect(written.map((entry) => entry.name)).toEqual(["docker.io/library/pod-decorator:0.1.0", "docker.io/team/app:2", "e2e.local/app:1", "localhost/app:latest"]);
  });

  it("writes every image with its configuration and files, parent directories included", async () => {
    const file = join(folder, "two.tar");
    const written = await writeOciArchive(file, [image("1"), image("2")]);
    const read = await readOciArchive(file);
    expect(read.map((entry) => entry.name)).toEqual(["e2e.local/thing:1", "e2e.local/thing:2"]);
    expect(read.map((entry) => entry.configDigest)).toEqual(written.map((entry) => entry.configDigest));
    expect(read[0]?.config).toMatchObject({ Entrypoint: ["/bin/tool"], User: "65532:65532", Env: ["A=1"] });
    expect(read[0]?.paths).toEqual(["bin/", "bin/tool", "bin/alias", "etc/", "etc/tag"]);
  });

  it("gives each tag its own image id, and the same inputs the same bytes", async () => {
    const [one, two] = await writeOciArchive(join(folder, "a.tar"), [image("1"), image("2")]);
    expect(one?.configDigest).not.toBe(two?.configDigest);
    await writeOciArchive(join(folder, "b.tar"), [image("1"), image("2")]);
    expect((await readFile(join(folder, "a.tar"))).equals(await readFile(join(folder, "b.tar")))).toBe(true);
  });

  it("stores a layer that images share once", async () => {
    const file = join(folder, "shared.tar");
    await writeOciArchive(file, [image("1"), image("2")]);
    const { extract } = await import("tar-stream");
    const names: string[] = [];
    const reader = extract();
    reader.on("entry", (header, stream, next) => {
      names.push(header.name);
      stream.resume();
      stream.on("end", next);
    });
    const finished = new Promise<void>((resolve) => reader.on("finish", () => resolve()));
    reader.end(await readFile(file));
    await finished;
    // 2 manifests + 2 configs + 1 shared layer + 2 tag layers.
    expect(names.filter((name) => name.startsWith("blobs/sha256/") && !name.endsWith("/"))).toHaveLength(7);
  });
});
