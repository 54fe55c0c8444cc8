// The Helm binary built from Go modules by build.sh (once per machine), and the chart rendered
// with it: what the chart tests and `make manifests` use.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const here = dirname(fileURLToPath(import.meta.url));
export const repositoryRoot = resolve(here, "../..");
export const chartDir = join(repositoryRoot, "charts", "pod-decorator");

let binary: string | undefined;

/** Builds Helm when this machine has not built this version yet, and returns its path. */
export function helmBinary(): string {
  if (binary !== undefined) return binary;
  const output = execFileSync(join(here, "build.sh"), { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  const path = output.trim().split("\n").at(-1) ?? "";
  if (!existsSync(path)) throw new Error(`helm build did not produce a binary (got ${JSON.stringify(output)})`);
  binary = path;
  return path;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs helm; never throws on a non-zero exit. */
export function helm(args: readonly string[]): HelmResult {
  // No user configuration or repository cache leaks in, and nothing is written to $HOME.
  const home = join(tmpdir(), "pod-decorator-helm-home");
  const result = spawnSync(helmBinary(), args, {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, HELM_CONFIG_HOME: join(home, "config"), HELM_CACHE_HOME: join(home, "cache"), HELM_DATA_HOME: join(home, "data") },
  });
  if (result.error !== undefined) throw result.error;
  return { code: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

export interface RenderOptions {
  release?: string;
  namespace: string;
  /** Values on top of the chart's values.yaml. */
  values?: object;
  /** Also print the crds/ folder (helm template --include-crds). */
  includeCrds?: boolean;
}

/** Runs helm with `values` in a values file (a temporary one, removed after). */
async function withValues(values: object, args: (valuesFile: string) => string[]): Promise<HelmResult> {
  const dir = await mkdtemp(join(tmpdir(), "pod-decorator-values-"));
  try {
    const valuesFile = join(dir, "values.json");
    await writeFile(valuesFile, JSON.stringify(values));
    return helm(args(valuesFile));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `helm template` of the chart; throws with Helm's message when it refuses the values. */
export async function renderChart(options: RenderOptions): Promise<string> {
  const result = await withValues(options.values ?? {}, (valuesFile) => [
    "template", options.release ?? "pod-decorator", chartDir,
    "--namespace", options.namespace,
    "--values", valuesFile,
    ...(options.includeCrds === true ? ["--include-crds"] : []),
  ]);
  if (result.code !== 0) throw new Error(`helm template failed (exit ${result.code}):\n${result.stderr}`);
  return result.stdout;
}

/**
 * `helm install --dry-run=server` of the chart into a cluster: Helm checks the chart's
 * kubeVersion against the API server's, renders with its version and APIs (NOTES included)
 * and has the API server judge every object, storing nothing.
 */
export function installChartDryRun(options: RenderOptions & { kubeconfig: string }): Promise<HelmResult> {
  return withValues(options.values ?? {}, (valuesFile) => [
    "install", options.release ?? "pod-decorator", chartDir,
    "--kubeconfig", options.kubeconfig,
    "--namespace", options.namespace,
    "--values", valuesFile,
    "--dry-run=server",
  ]);
}

/** `helm lint --strict` of the chart with these values. */
export function lintChart(values: object): Promise<HelmResult> {
  return withValues(values, (valuesFile) => ["lint", "--strict", chartDir, "--values", valuesFile]);
}

export interface KubeManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** The objects of a YAML stream, empty documents left out. */
export function manifestObjects(text: string): KubeManifest[] {
  return parseAllDocuments(text)
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`invalid YAML from helm: ${document.errors[0]?.message ?? ""}`);
      return document.toJS() as KubeManifest | null;
    })
    .filter((object): object is KubeManifest => object !== null);
}
