// Golden render cases (test/fixtures/render/<case>/): every case runs through the CLI as a
// user would (in process), and every successful render is rendered again to prove that
// re-rendering changes nothing. A case holds pod.yaml and decorations.yaml, and either
// expected.yaml (plus warnings.txt when the render warns) or expected-error.txt (exit 2);
// explain.txt, when present, is what `explain` prints.
// UPDATE_GOLDEN=1 rewrites the expectations from the current output, for review in the diff.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { CommandIO } from "../../src/cli/command.ts";
import { main } from "../../src/cli/main.ts";

const ROOT = fileURLToPath(new URL("../fixtures/render/", import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === "1";
const cases = readdirSync(ROOT, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(args: string[], files: Record<string, string> = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const io: CommandIO = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    readFile: (path) => (Object.hasOwn(files, path) ? Promise.resolve(files[path] ?? "") : readFile(path, "utf8")),
    writeFile: () => Promise.reject(new Error("render never writes files")),
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

function expectation(dir: string, file: string, actual: string | undefined): string | undefined {
  const path = join(dir, file);
  if (UPDATE) {
    if (actual === undefined || actual === "") rmSync(path, { force: true });
    else writeFileSync(path, actual);
  }
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}

describe("golden render cases", () => {
  it("has cases", () => {
    expect(cases.length).toBeGreaterThan(30);
  });

  it.each(cases)("%s", async (name) => {
    // Relative paths: file names appear in error messages, which must not depend on the checkout.
    const dir = relative(process.cwd(), join(ROOT, name));
    const pod = join(dir, "pod.yaml");
    const decorations = join(dir, "decorations.yaml");
    const first = await run(["render", "--pod", pod, "--decorations", decorations]);

    const expectedError = expectation(dir, "expected-error.txt", first.code === 2 ? first.stderr : undefined);
    if (expectedError !== undefined) {
      expect(first.code).toBe(2);
      expect(first.stdout).toBe("");
      expect(first.stderr).toBe(expectedError);
      return;
    }

    expect(first.code, first.stderr).toBe(0);
    const expectedPod = expectation(dir, "expected.yaml", first.stdout);
    const warnings = expectation(dir, "warnings.txt", first.stderr) ?? "";
    expect(parse(first.stdout)).toEqual(parse(expectedPod ?? ""));
    expect(first.stderr).toBe(warnings);

    // Idempotency: the rendered pod, rendered again with the same decorations, is unchanged.
    const second = await run(["render", "--pod", "rendered.yaml", "--decorations", decorations], { "rendered.yaml": first.stdout });
    expect(second.code, second.stderr).toBe(0);
    expect(parse(second.stdout)).toEqual(parse(first.stdout));
    expect(second.stderr).toBe("");

    if (existsSync(join(dir, "explain.txt"))) {
      const explained = await run(["explain", "--pod", pod, "--decorations", decorations]);
      expect(explained.code, explained.stderr).toBe(0);
      expect(explained.stdout).toBe(expectation(dir, "explain.txt", explained.stdout));
    }
  });
});
