// The `pod-decorator` command as a user runs it: a real process, its streams and exit codes.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURES = "test/fixtures/render";

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], stdin?: string): Promise<Result> {
  return new Promise((done) => {
    const child = execFile(process.execPath, ["src/cli/main.ts", ...args], { cwd: ROOT, timeout: 30_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
    });
    child.stdin?.end(stdin ?? "");
  });
}

const fixture = (name: string, file: string) => `${FIXTURES}/${name}/${file}`;

describe("pod-decorator render", () => {
  it("prints only the pod on stdout and the warnings on stderr", async () => {
    const result = await cli(["render", "--pod", fixture("init-containers", "pod.yaml"), "--decorations", fixture("init-containers", "decorations.yaml")]);
    expect(result.code).toBe(0);
    expect(parse(result.stdout)).toEqual(parse(await readFile(join(ROOT, fixture("init-containers", "expected.yaml")), "utf8")));
    expect(result.stderr).toBe(await readFile(join(ROOT, fixture("init-containers", "warnings.txt")), "utf8"));
  });

  it("prints JSON with -o json and the explanation on stderr with --explain", async () => {
    const result = await cli(["render", "-o", "json", "--explain", "--pod", fixture("group-exclusive", "pod.yaml"), "--decorations", fixture("group-exclusive", "decorations.yaml")]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(parse(await readFile(join(ROOT, fixture("group-exclusive", "expected.yaml")), "utf8")));
    expect(result.stderr).toBe(await readFile(join(ROOT, fixture("group-exclusive", "explain.txt")), "utf8"));
  });

  it("reads the pod from standard input with --pod -", async () => {
    const pod = await readFile(join(ROOT, fixture("volumes", "pod.yaml")), "utf8");
    const result = await cli(["render", "--pod", "-", "--decorations", fixture("volumes", "decorations.yaml")], pod);
    expect(result.code).toBe(0);
    expect(parse(result.stdout)).toEqual(parse(await readFile(join(ROOT, fixture("volumes", "expected.yaml")), "utf8")));
  });

  it("exits 2 with Kind/name: field.path: reason for invalid decorations, and no stack trace", async () => {
    const result = await cli(["render", "--pod", fixture("invalid-partition", "pod.yaml"), "--decorations", fixture("invalid-partition", "decorations.yaml")]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.split("\n")).toContain("PodDecoration/negative: spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0");
    expect(result.stderr).not.toMatch(/\n[ \t]+at /);
  });

  it.each([
    [["render", "--decorations", "x.yaml"], /^--pod FILE is required\nusage: pod-decorator render/],
    [["render", "--pod", "x.yaml"], /^--decorations FILE is required\n/],
    [["render", "--pod", "a", "--decorations", "b", "--frobnicate"], /Unknown option '--frobnicate'/],
    [["render", "--pod", "a", "--decorations", "b", "-o", "xml"], /^-o xml: supported values: yaml, json\n/],
    [["render", "--pod", "missing.yaml", "--decorations", "b"], /^--pod missing.yaml: no such file\n$/],
    [["explain", "--pod", "a", "--decorations", "b", "--explain"], /Unknown option '--explain'/],
    [["frobnicate"], /^pod-decorator: unknown command "frobnicate"\n/],
    [[], /^usage: pod-decorator <command>/],
  ])("exits 2 for %j", async (args, message) => {
    const result = await cli(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
  });

  it("prints help on request", async () => {
    const result = await cli(["--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/render .*\n.*explain .*\n.*crds /);
  });

  it("prints each command's usage for --help, with exit 0", async () => {
    for (const [command, usage] of [["render", "--pod FILE --decorations FILE"], ["explain", "--pod FILE"], ["crds", "--output-dir DIR"], ["serve", "--webhook-config-url URL"]] as const) {
      const result = await cli([command, "--help"]);
      expect(result.code, command).toBe(0);
      expect(result.stdout, command).toContain(`usage: pod-decorator ${command}`);
      expect(result.stdout, command).toContain(usage);
      expect(result.stderr, command).toBe("");
    }
  }, 60_000);
});

describe("pod-decorator explain", () => {
  it("explains as JSON with -o json", async () => {
    const result = await cli(["explain", "-o", "json", "--pod", fixture("kusionstack-weight-alias", "pod.yaml"), "--decorations", fixture("kusionstack-weight-alias", "decorations.yaml")]);
    expect(result.code).toBe(0);
    const explanation = JSON.parse(result.stdout) as { applied: { name: string }[]; excluded: { name: string; reason: string }[] };
    expect(explanation.applied.map((item) => item.name)).toEqual(["kusion-light", "kusion-heavy", "alias-in-group", "proxy"]);
    expect(explanation.excluded.map((item) => [item.name, item.reason])).toEqual([["explicit-in-group", "group"], ["alias-overridden", "group"]]);
  });
});

describe("pod-decorator crds", () => {
  it("prints every CRD, and writes the committed files with --output-dir", async () => {
    const printed = await cli(["crds"]);
    expect(printed.code).toBe(0);
    expect(parseAllDocuments(printed.stdout).map((document) => (document.toJS() as { metadata: { name: string } }).metadata.name)).toEqual([
      "collasets.apps.kusionstack.io",
      "operationjobs.apps.kusionstack.io",
      "poddecorations.apps.kusionstack.io",
      "podtransitionrules.apps.kusionstack.io",
      "resourcecontexts.apps.kusionstack.io",
      "clusterpoddecorations.pod-decorator.io",
    ]);

    const dir = await mkdtemp(join(tmpdir(), "pod-decorator-crds-"));
    try {
      const written = await cli(["crds", "--output-dir", dir]);
      expect(written.code).toBe(0);
      for (const file of ["apps.kusionstack.io_collasets.yaml", "apps.kusionstack.io_operationjobs.yaml", "apps.kusionstack.io_poddecorations.yaml", "apps.kusionstack.io_podtransitionrules.yaml", "apps.kusionstack.io_resourcecontexts.yaml", "pod-decorator.io_clusterpoddecorations.yaml"]) {
        expect(await readFile(join(dir, file), "utf8")).toBe(await readFile(join(ROOT, "config/crd", file), "utf8"));
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
