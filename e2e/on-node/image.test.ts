// `make image` and the Dockerfile must build the same image: the archive the node runs is read
// back and compared with the Dockerfile's runtime stage (entrypoint, user, working directory,
// environment, ports, and the files it copies), so neither can change without the other.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readOciArchive } from "../../image/read-oci-archive.ts";
import { NODE_PATH_IN_IMAGE } from "../../image/project-image.ts";
import { PROJECT_IMAGE_ARCHIVE } from "../node/cluster.ts";

interface RuntimeStage {
  base: string;
  env: Record<string, string>;
  workdir: string;
  user: string;
  expose: string[];
  entrypoint: string[];
  /** COPY destinations, relative to the working directory. */
  copies: string[];
}

/** The Dockerfile's last stage, the one the image runs. */
function runtimeStage(dockerfile: string): RuntimeStage {
  const lines = dockerfile.replace(/\\\n/g, " ").split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"));
  const last = lines.map((line, index) => (line.startsWith("FROM ") ? index : -1)).filter((index) => index >= 0).at(-1) ?? 0;
  const stage: RuntimeStage = { base: (lines[last] ?? "").split(/\s+/)[1] ?? "", env: {}, workdir: "/", user: "", expose: [], entrypoint: [], copies: [] };
  for (const line of lines.slice(last + 1)) {
    const [instruction = "", ...rest] = line.split(/\s+/);
    const argument = line.slice(instruction.length).trim();
    if (instruction === "ENV") for (const pair of rest) stage.env[pair.split("=")[0] ?? ""] = pair.split("=").slice(1).join("=");
    if (instruction === "WORKDIR") stage.workdir = argument;
    if (instruction === "USER") stage.user = argument;
    if (instruction === "EXPOSE") stage.expose.push(...rest.map((port) => (port.includes("/") ? port : `${port}/tcp`)));
    if (instruction === "ENTRYPOINT") stage.entrypoint = JSON.parse(argument) as string[];
    if (instruction === "COPY") stage.copies.push((rest.at(-1) ?? "").replace(/^\.\//, "").replace(/\/$/, ""));
  }
  return stage;
}

describe("make image", () => {
  it("builds what the Dockerfile builds: entrypoint, user, environment, ports and files", async () => {
    const stage = runtimeStage(readFileSync(fileURLToPath(new URL("../../Dockerfile", import.meta.url)), "utf8"));
    expect(stage.base).toMatch(/^node:24-/);
    const [image] = await readOciArchive(PROJECT_IMAGE_ARCHIVE);
    expect(image?.name).toBe("docker.io/library/pod-decorator:0.1.0");
    expect(image?.config.Entrypoint).toEqual(stage.entrypoint);
    expect(image?.config.User).toBe(stage.user);
    expect(image?.config.WorkingDir).toBe(stage.workdir);
    expect(Object.keys(image?.config.ExposedPorts ?? {}).sort()).toEqual([...stage.expose].sort());
    for (const [name, value] of Object.entries(stage.env)) expect(image?.config.Env).toContain(`${name}=${value}`);
    // The node image's PATH finds `node` where that image keeps it.
    expect(image?.config.Env?.find((entry) => entry.startsWith("PATH="))).toContain("/usr/local/bin");
    const paths = new Set(image?.paths);
    expect(paths.has(NODE_PATH_IN_IMAGE.slice(1))).toBe(true);
    const copied = [...new Set((image?.paths ?? []).filter((path) => path.startsWith("app/")).map((path) => path.split("/")[1]))].filter((name) => name !== "");
    expect(copied.sort()).toEqual([...stage.copies].sort());
    expect(paths.has("app/dist/cli/main.js")).toBe(true);
    // Production dependencies only, as `npm prune --omit=dev` leaves them.
    expect(paths.has("app/node_modules/fastify/package.json")).toBe(true);
    expect([...paths].some((path) => path.startsWith("app/node_modules/vitest/"))).toBe(false);
  });
});
