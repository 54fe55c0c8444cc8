// The controller at ten times DESIGN §9's scale (issue 15): 100,000 realistic pods and 1,000
// PodDecorations in one namespace (pod-population.ts: 1,000 workloads). Measures, in one
// process:
//   cacheMiB     heap retained by the pod informer as `serve` runs it (podCacheProjection as
//                transform, the PodDecoration controller's label and recorded-decoration
//                indexes), after a forced GC, minus the heap before the informer existed
//   one changed decoration: CPU of the status work the reconciler does for it (its selectable
//                pods through the indexes, desiredStatus, the dirty check against the stored
//                status), for the widest decoration (every pod) and for one selecting a workload
//   full pass    the same for all 1,000 decorations, steady state (statuses stored)
//   pod event    CPU µs to map one pod event to the decorations to reconcile (through the
//                decoration cache's selector index), averaged over 10,000 cached pods
// Every pod has its own name (the cache would hold fewer otherwise: checked).
//   node test/bench/scale.ts [--pods N] [--decorations N] [--workloads N]
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Condition } from "../../src/api/kubernetes.ts";
import type { PodDecorationStatus } from "../../src/api/poddecoration.ts";
import { podCacheProjection } from "../../src/controller/pod-cache.ts";
import { indexDecorationsBySelector, indexPodsForDecorations, selectablePods } from "../../src/controller/poddecoration/pod-indexes.ts";
import { podDecorationKeysForPod } from "../../src/controller/poddecoration/mappers.ts";
import type { CachedDecoration } from "../../src/controller/poddecoration/reconciler.ts";
import { desiredStatus } from "../../src/controller/poddecoration/status.ts";
import { Cache, type Lister } from "../../src/controller/runtime/cache.ts";
import { deepFreeze } from "../../src/controller/runtime/deep-freeze.ts";
import { Informer } from "../../src/controller/runtime/informer.ts";
import { objectKey, type Pod } from "../../src/kube/objects.ts";
import { sameJson } from "../../src/api/json.ts";
import { generatedListWatch, syncInformer } from "./generated-list-watch.ts";
import { podPopulation, type PodPopulation } from "./pod-population.ts";
import { median } from "./statistics.ts";

export interface ScaleResult {
  pods: number;
  decorations: number;
  workloads: number;
  /** Heap retained by the pod cache (with its indexes), MiB. */
  cacheMiB: number;
  kibPerPod: number;
  wireKibPerPod: number;
  /** CPU µs to map one pod event to the decorations it may concern, and how many it maps to. */
  podEventMappingUs: number;
  decorationsPerPodEvent: number;
  /** Median CPU ms of the status work for the widest decoration (it selects every pod). */
  widestDecorationMs: number;
  widestDecorationMatchedPods: number;
  /** Median CPU ms of the status work for a decoration selecting one workload. */
  workloadDecorationMs: number;
  workloadDecorationMatchedPods: number;
  /** Median CPU ms of a steady full status pass over every decoration. */
  fullPassMs: number;
  coldPassMs: number;
  passCpuMs: number[];
  syncSeconds: number;
}

const TEMPLATE_VALID: Omit<Condition, "lastTransitionTime" | "observedGeneration"> = {
  type: "TemplateValid", status: "True", reason: "DryRunAccepted", message: "a pod rendered with the updated revision passes a server-side dry run",
};
const MiB = 1024 * 1024;
const round = (value: number) => Math.round(value * 10) / 10;

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
}

// `make bench` starts sections without node flags: expose the collector from here.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function collectGarbage(): void {
  for (let round = 0; round < 4; round++) gc();
}

function cpuMs(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** What the reconciler computes for one decoration's status; the status when it differs from the stored one. */
function statusWork(pods: Lister<Pod>, decoration: CachedDecoration, population: PodPopulation, now: string): PodDecorationStatus | undefined {
  const status = desiredStatus({
    decoration,
    pods: selectablePods(pods, decoration),
    updatedRevision: population.updatedRevisions.get(decoration.metadata.name ?? ""),
    collisionCount: decoration.status?.collisionCount ?? 0,
    templateValid: TEMPLATE_VALID,
    now,
  });
  return sameJson(status, decoration.status ?? {}) ? undefined : status;
}

export async function benchScale(podCount: number, decorationCount: number, workloads: number): Promise<ScaleResult> {
  const population = podPopulation(podCount, { workloads, decorations: decorationCount });
  let wireBytes = 0;
  const text = (index: number) => {
    const pod = population.podText(index);
    wireBytes += pod.length;
    return pod;
  };
  population.pod(0); // compile what generating a pod needs before the baseline
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const informer = new Informer<Pod>({
    name: "pods",
    listWatch: generatedListWatch({ count: podCount, generate: population.pod, text, apiVersion: "v1", kind: "Pod" }),
    transform: podCacheProjection,
    watchdogMs: 3_600_000,
  });
  indexPodsForDecorations(informer.cache);
  const stop = await syncInformer(informer);
  const syncSeconds = (performance.now() - started) / 1000;
  collectGarbage();
  const retained = process.memoryUsage().heapUsed - heapBefore;
  if (informer.cache.size !== podCount) throw new Error(`expected ${podCount} cached pods (unique names), got ${informer.cache.size}`);
  const pods = informer.cache;

  const decorations = new Cache<CachedDecoration>();
  for (const pd of population.decorations) decorations.upsert(deepFreeze(structuredClone(pd) as CachedDecoration));
  indexDecorationsBySelector(decorations);
  const sample = pods.list().filter((_, index) => index % Math.max(1, Math.floor(podCount / 10_000)) === 0).slice(0, 10_000);
  let mappedDecorations = 0;
  const podEventMs = cpuMs(() => {
    for (const pod of sample) mappedDecorations += podDecorationKeysForPod(decorations, [pod]).size;
  });
  const passCpuMs: number[] = [];
  for (let pass = 0; pass < 4; pass++) {
    const now = new Date(Date.UTC(2026, 3, 1, 0, 0, pass)).toISOString().replace(".000Z", "Z");
    const changed = new Map<string, PodDecorationStatus>();
    passCpuMs.push(cpuMs(() => {
      for (const decoration of decorations.list()) {
        const status = statusWork(pods, decoration, population, now);
        if (status !== undefined) changed.set(objectKey(decoration), status);
      }
    }));
    // Each status write comes back through the watch as a new (frozen) decoration object.
    for (const [key, status] of changed) decorations.upsert(deepFreeze({ ...decorations.getByKey(key)!, status }));
  }

  // One changed decoration: its status work alone, as a reconcile after its spec changed.
  const one = (name: string) => {
    const decoration = decorations.list().find((pd) => pd.metadata.name === name)!;
    const times = Array.from({ length: 5 }, (_, run) => cpuMs(() => void statusWork(pods, decoration, population, `2026-04-02T00:00:0${run}Z`)));
    return { ms: round(median(times)), matched: decoration.status?.matchedPods ?? 0 };
  };
  const widest = one(population.decorations[0]!.metadata.name ?? "");
  const workload = one(population.decorations[10]!.metadata.name ?? "");
  await stop();
  return {
    pods: podCount,
    decorations: decorationCount,
    workloads,
    cacheMiB: round(retained / MiB),
    kibPerPod: round(retained / podCount / 1024),
    wireKibPerPod: round(wireBytes / podCount / 1024),
    widestDecorationMs: widest.ms,
    widestDecorationMatchedPods: widest.matched,
    workloadDecorationMs: workload.ms,
    workloadDecorationMatchedPods: workload.matched,
    fullPassMs: round(median(passCpuMs.slice(1))),
    coldPassMs: round(passCpuMs[0] ?? Number.NaN),
    passCpuMs: passCpuMs.map(round),
    podEventMappingUs: round((podEventMs * 1000) / sample.length),
    decorationsPerPodEvent: round(mappedDecorations / sample.length),
    syncSeconds: round(syncSeconds),
  };
}

if (import.meta.main) {
  const result = await benchScale(option("--pods", 100_000), option("--decorations", 1_000), option("--workloads", 1_000));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
