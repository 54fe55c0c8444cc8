// The controller at ten times DESIGN §9's scale (issue 15): 100,000 realistic pods and 1,000
// PodDecorations in one namespace (pod-population.ts: 1,000 workloads). Measures, in one
// process:
//   cacheMiB     heap retained by the pod informer as `serve` runs it (podCacheProjection as
//                transform, the PodDecoration controller's label and recorded-decoration
//                indexes), after a forced GC, minus the heap before the informer existed
//   one changed decoration: CPU of the status work the reconciler does for it (its selectable
//                pods through the indexes, desiredStatus, the dirty check against the stored
//                status), for the widest decoration (every pod) and for one selecting a workload;
//                each run gets the decoration as the watch brings it after a spec change (a new
//                object, the next generation), so nothing derived from the old object serves it
//   full pass    the same for all 1,000 decorations, steady state (statuses stored)
//   afterPassesMiB  heap retained once the passes ran: the pod cache, what status derives
//                once per cached pod (statusFacts, held per index bucket), and the decorations
//                with their statuses
//   pod event    CPU µs to map one pod event to the decorations to reconcile (through the
//                decoration cache's selector index), averaged over 10,000 cached pods
// Then the fleet (issue 38, `fleet` in the output): the same number of pods and workloads spread
// over 1,000 namespaces, and one ClusterPodDecoration selecting them all (fleet-status.ts, the
// real reconciler): its status CPU after a spec change (the status derivation alone, and the
// whole reconcile), its status write against etcd's limit, and a pod event's mapping to the
// cluster decorations to reconcile.
// Every pod has its own name (the cache would hold fewer otherwise: checked).
//   node test/bench/scale.ts [--pods N] [--decorations N] [--workloads N] [--namespaces N] [--fleet-only]
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { podCacheProjection } from "../../src/controller/pod-cache.ts";
import { indexDecorationsBySelector, indexPodsForDecorations } from "../../src/controller/poddecoration/pod-indexes.ts";
import { indexPodsByWorkload } from "../../src/controller/workload-rollout/workloads.ts";
import { podDecorationKeysForPod } from "../../src/controller/poddecoration/mappers.ts";
import type { CachedDecoration } from "../../src/controller/poddecoration/reconciler.ts";
import { Cache } from "../../src/controller/runtime/cache.ts";
import { deepFreeze } from "../../src/controller/runtime/deep-freeze.ts";
import { Informer } from "../../src/controller/runtime/informer.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { fleetReconcile } from "./fleet-status.ts";
import { generatedListWatch, syncInformer } from "./generated-list-watch.ts";
import { podPopulation } from "./pod-population.ts";
import { median } from "./statistics.ts";
import { statusPass, statusWork } from "./status-pass.ts";

export interface ScaleResult {
  pods: number;
  decorations: number;
  workloads: number;
  /** Heap retained by the pod cache (with its indexes), MiB. */
  cacheMiB: number;
  /** Heap retained after the status passes (pod cache, status facts, decorations with statuses), MiB. */
  afterPassesMiB: number;
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
  /** The largest status any decoration writes (the widest selects every pod), KiB of JSON. */
  maxStatusWriteKiB: number;
  coldPassMs: number;
  passCpuMs: number[];
  syncSeconds: number;
}

/** One ClusterPodDecoration over every pod of N namespaces (issue 38). */
export interface FleetScaleResult {
  pods: number;
  namespaces: number;
  workloads: number;
  /** Heap retained by the pod cache (with its indexes), MiB. */
  cacheMiB: number;
  syncSeconds: number;
  /** Median CPU ms of its status derivation after a spec change: views, pods recording it, fleetStatus, the dirty check. */
  statusMs: number;
  /** Median CPU ms of the whole reconcile after a spec change (revisions, standing in each namespace, status, pruning). */
  reconcileMs: number;
  statusCpuMs: number[];
  reconcileCpuMs: number[];
  /** The largest status write's request body, KiB (the JSON Patch sent to the status subresource). */
  statusWriteKiB: number;
  matchedPods: number;
  updatedPods: number;
  selectedNamespaces: number;
  /** Namespaces status.namespaces lists, and those it counts only. */
  namespacesListed: number;
  omittedNamespaces: number;
  /** CPU µs to map one pod event to the cluster decorations to reconcile, and how many it maps to. */
  podEventMappingUs: number;
  decorationsPerPodEvent: number;
}

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

/**
 * `podCount` generated pods listed into a pod cache as `serve` keeps it (projected, indexed by
 * label, recorded decoration and workload), timed; the heap it retains, measured from a baseline
 * taken once generating a pod is compiled.
 */
async function cachedPods(podCount: number, generate: (index: number) => Pod, text: (index: number) => string) {
  generate(0);
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const informer = new Informer<Pod>({
    name: "pods",
    listWatch: generatedListWatch({ count: podCount, generate, text, apiVersion: "v1", kind: "Pod" }),
    transform: podCacheProjection,
    watchdogMs: 3_600_000,
  });
  indexPodsForDecorations(informer.cache);
  // The rollout to pods of other owners files every pod by workload too, in serve.
  indexPodsByWorkload(informer.cache);
  const stop = await syncInformer(informer);
  const syncSeconds = (performance.now() - started) / 1000;
  collectGarbage();
  const retained = process.memoryUsage().heapUsed - heapBefore;
  if (informer.cache.size !== podCount) throw new Error(`expected ${podCount} cached pods (unique names), got ${informer.cache.size}`);
  return { pods: informer.cache, heapBefore, retained, syncSeconds, stop };
}

export async function benchScale(podCount: number, decorationCount: number, workloads: number): Promise<ScaleResult> {
  const population = podPopulation(podCount, { workloads, decorations: decorationCount });
  let wireBytes = 0;
  const text = (index: number) => {
    const pod = population.podText(index);
    wireBytes += pod.length;
    return pod;
  };
  const { pods, heapBefore, retained, syncSeconds, stop } = await cachedPods(podCount, population.pod, text);

  const decorations = new Cache<CachedDecoration>();
  for (const pd of population.decorations) decorations.upsert(deepFreeze(structuredClone(pd) as CachedDecoration));
  indexDecorationsBySelector(decorations);
  const sample = pods.list().filter((_, index) => index % Math.max(1, Math.floor(podCount / 10_000)) === 0).slice(0, 10_000);
  let mappedDecorations = 0;
  const podEventMs = cpuMs(() => {
    for (const pod of sample) mappedDecorations += podDecorationKeysForPod(decorations, [pod]).size;
  });
  const passes = Array.from({ length: 4 }, (_, pass) => statusPass(pods, decorations, population.updatedRevisions, pass, population.template));
  const passCpuMs = passes.map((pass) => pass.cpuMs);
  const largestWriteBytes = Math.max(...passes.map((pass) => pass.largestWriteBytes));

  // One changed decoration: its status work alone, as a reconcile after its spec changed.
  const one = (name: string) => {
    const stored = decorations.list().find((pd) => pd.metadata.name === name)!;
    const updatedRevision = population.updatedRevisions.get(name);
    const times = Array.from({ length: 5 }, (_, run) => {
      const changed = deepFreeze({ ...structuredClone(stored), metadata: { ...structuredClone(stored.metadata), generation: (stored.metadata.generation ?? 0) + run + 1 } });
      return cpuMs(() => void statusWork(pods, changed, updatedRevision, `2026-04-02T00:00:0${run}Z`, population.template));
    });
    return { ms: round(median(times)), matched: stored.status?.matchedPods ?? 0 };
  };
  const widest = one(population.decorations[0]!.metadata.name ?? "");
  const workload = one(population.decorations[10]!.metadata.name ?? "");
  // Measured last: forced collections just before would make the runs above start cold.
  collectGarbage();
  const retainedAfterPasses = process.memoryUsage().heapUsed - heapBefore;
  await stop();
  return {
    pods: podCount,
    decorations: decorationCount,
    workloads,
    cacheMiB: round(retained / MiB),
    afterPassesMiB: round(retainedAfterPasses / MiB),
    kibPerPod: round(retained / podCount / 1024),
    wireKibPerPod: round(wireBytes / podCount / 1024),
    widestDecorationMs: widest.ms,
    widestDecorationMatchedPods: widest.matched,
    workloadDecorationMs: workload.ms,
    workloadDecorationMatchedPods: workload.matched,
    fullPassMs: round(median(passCpuMs.slice(1))),
    maxStatusWriteKiB: round(largestWriteBytes / 1024),
    coldPassMs: round(passCpuMs[0] ?? Number.NaN),
    passCpuMs: passCpuMs.map(round),
    podEventMappingUs: round((podEventMs * 1000) / sample.length),
    decorationsPerPodEvent: round(mappedDecorations / sample.length),
    syncSeconds: round(syncSeconds),
  };
}

/** One ClusterPodDecoration over `podCount` pods of `workloads` workloads in `namespaceCount` namespaces. */
export async function benchFleetScale(podCount: number, namespaceCount: number, workloads: number): Promise<FleetScaleResult> {
  const population = podPopulation(podCount, { workloads, decorations: 0, fleet: { namespaces: namespaceCount } });
  const { pods, retained, syncSeconds, stop } = await cachedPods(podCount, population.pod, population.podText);
  const fleet = await fleetReconcile({
    pods,
    namespaces: population.namespaces,
    cpd: population.clusterDecorations[0]!,
    previous: population.previousClusterDecorations[0]!,
    runs: 5,
  });
  await stop();
  const status = fleet.status;
  return {
    pods: podCount,
    namespaces: namespaceCount,
    workloads,
    cacheMiB: round(retained / MiB),
    syncSeconds: round(syncSeconds),
    statusMs: round(median(fleet.statusMs)),
    reconcileMs: round(median(fleet.reconcileMs)),
    statusCpuMs: fleet.statusMs.map(round),
    reconcileCpuMs: fleet.reconcileMs.map(round),
    statusWriteKiB: round(Math.max(...fleet.writeBytes) / 1024),
    matchedPods: status.matchedPods ?? 0,
    updatedPods: status.updatedPods ?? 0,
    selectedNamespaces: status.selectedNamespaces ?? 0,
    namespacesListed: status.namespaces?.length ?? 0,
    omittedNamespaces: status.omittedNamespaces ?? 0,
    podEventMappingUs: round(fleet.podEventMappingUs),
    decorationsPerPodEvent: round(fleet.decorationsPerPodEvent),
  };
}

if (import.meta.main) {
  const [pods, workloads] = [option("--pods", 100_000), option("--workloads", 1_000)];
  const result = process.argv.includes("--fleet-only") ? {} : await benchScale(pods, option("--decorations", 1_000), workloads);
  // The first case's caches are garbage by now: the fleet's are measured alone.
  const fleet = await benchFleetScale(pods, option("--namespaces", 1_000), workloads);
  process.stdout.write(`${JSON.stringify({ ...result, fleet })}\n`);
}
