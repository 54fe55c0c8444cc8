// Heap retained by the pod informer's cache at 10,000 pods (DESIGN §9: under 300 MiB): the
// real Informer and Cache (frozen objects, default indexes) fed by a list of realistic pods
// (pod-population.ts) parsed from JSON text as the REST list delivers them. Heap used after a
// forced GC, minus the same before the informer existed. Two variants, each in a fresh
// process: as `serve` runs it ("stripped": the informer's transform keeps only what
// controllers read, src/controller/pod-cache.ts) and keeping everything the API server sent.
//   node test/bench/informer-memory.ts [--pods N]
//   node --expose-gc test/bench/informer-memory.ts --variant stripped|full [--pods N]
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Informer } from "../../src/controller/runtime/informer.ts";
import { podCacheProjection } from "../../src/controller/pod-cache.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { generatedListWatch, syncInformer } from "./generated-list-watch.ts";
import { podPopulation } from "./pod-population.ts";

type Variant = "stripped" | "full";

interface VariantResult {
  variant: Variant;
  pods: number;
  retainedMiB: number;
  kibPerPod: number;
  /** Average size of one pod as compact JSON (what the list sent). */
  wireKibPerPod: number;
}

export interface InformerMemoryResult {
  /** Heap retained by the pod informer at `pods` pods, as serve configures it (podCacheProjection). */
  cacheMiB: number;
  pods: number;
  /** The same cache keeping managedFields. */
  cacheWithManagedFieldsMiB: number;
  /** What stripping managedFields saves. */
  managedFieldsMiB: number;
  kibPerPod: number;
  wireKibPerPod: number;
}

const MiB = 1024 * 1024;
const round = (value: number) => Math.round(value * 10) / 10;

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index < 0 ? undefined : process.argv[index + 1];
}

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with node --expose-gc");
  for (let round = 0; round < 4; round++) gc();
}

async function measureVariant(variant: Variant, count: number): Promise<VariantResult> {
  const population = podPopulation(count);
  let wireBytes = 0;
  const generate = (index: number) => {
    const pod = population.pod(index);
    wireBytes += JSON.stringify(pod).length;
    return pod;
  };
  population.pod(0); // compile and cache what generating a pod needs before the baseline
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const informer = new Informer<Pod>({
    name: "pods",
    listWatch: generatedListWatch({ count, generate, apiVersion: "v1", kind: "Pod" }),
    ...(variant === "stripped" ? { transform: podCacheProjection } : {}),
    watchdogMs: 3_600_000,
  });
  const stop = await syncInformer(informer);
  collectGarbage();
  const retained = process.memoryUsage().heapUsed - before;
  if (informer.cache.size !== count) throw new Error(`expected ${count} cached pods, got ${informer.cache.size}`);
  await stop();
  return { variant, pods: count, retainedMiB: round(retained / MiB), kibPerPod: round(retained / count / 1024), wireKibPerPod: round(wireBytes / count / 1024) };
}

function runVariant(variant: Variant, count: number): VariantResult {
  const script = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, ["--expose-gc", script, "--variant", variant, "--pods", String(count)], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (child.status !== 0) throw new Error(`informer memory (${variant}) exited with ${child.status ?? child.signal}`);
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as VariantResult;
}

export function benchInformerMemory(count: number): InformerMemoryResult {
  const stripped = runVariant("stripped", count);
  const full = runVariant("full", count);
  return {
    cacheMiB: stripped.retainedMiB,
    pods: count,
    cacheWithManagedFieldsMiB: full.retainedMiB,
    managedFieldsMiB: round(full.retainedMiB - stripped.retainedMiB),
    kibPerPod: stripped.kibPerPod,
    wireKibPerPod: full.wireKibPerPod,
  };
}

if (import.meta.main) {
  const count = Number(option("--pods") ?? 10_000);
  const variant = option("--variant");
  const result = variant === "stripped" || variant === "full" ? await measureVariant(variant, count) : benchInformerMemory(count);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
