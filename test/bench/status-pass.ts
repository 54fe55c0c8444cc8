// CPU time of one full status pass of the PodDecoration controller (DESIGN §9: 10,000 pods and
// 100 decorations in under 1 s CPU), on the real code path: for each decoration, what the
// reconciler computes for status (the pods its selector can match, through the pod cache's
// label index; desiredStatus; the dirty check against the stored status). The pods come through
// a real Informer (frozen, only what controllers read, as `serve` caches them); the decorations sit in a
// real Cache. The first pass is cold (nothing parsed or compiled yet, no status stored); its
// writes are then stored as the watch would, so later passes are the steady state.
//   node test/bench/status-pass.ts [--pods N] [--passes N]
import { performance } from "node:perf_hooks";
import type { Condition } from "../../src/api/kubernetes.ts";
import type { PodDecorationStatus } from "../../src/api/poddecoration.ts";
import { podCacheProjection } from "../../src/controller/pod-cache.ts";
import { indexPodsForDecorations } from "../../src/controller/poddecoration/pod-indexes.ts";
import { decorationStatus, type CachedDecoration } from "../../src/controller/poddecoration/reconciler.ts";
import { RolloutReports } from "../../src/controller/workload-rollout/reports.ts";
import { Cache, type Lister } from "../../src/controller/runtime/cache.ts";
import { deepFreeze } from "../../src/controller/runtime/deep-freeze.ts";
import { Informer } from "../../src/controller/runtime/informer.ts";
import { objectKey, type Pod } from "../../src/kube/objects.ts";
import { sameJson } from "../../src/api/json.ts";
import type { TemplateOf } from "../../src/decoration/running-revisions.ts";
import { generatedListWatch, syncInformer } from "./generated-list-watch.ts";
import { podPopulation } from "./pod-population.ts";
import { median } from "./statistics.ts";

export interface StatusPassResult {
  /** Median CPU ms (user + system, every thread of the process) of the steady-state passes. */
  statusPassMs: number;
  /** CPU ms of the first pass: cold caches and JIT, every status written. */
  coldPassMs: number;
  passCpuMs: number[];
  medianWallMs: number;
  pods: number;
  decorations: number;
  namespaces: number;
  /** Sum over decorations of status.matchedPods. */
  matchedPods: number;
  /** Per-pod entries written into status.details. */
  detailPods: number;
  writesInColdPass: number;
  writesInSteadyPasses: number;
}

const TEMPLATE_VALID: Omit<Condition, "lastTransitionTime" | "observedGeneration"> = {
  type: "TemplateValid", status: "True", reason: "DryRunAccepted", message: "a pod rendered with the updated revision passes a server-side dry run",
};

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
}

/** What the reconciler computes for one decoration's status (#writeStatus); the status when it differs from the stored one. */
export function statusWork(pods: Lister<Pod>, decoration: CachedDecoration, updatedRevision: string | undefined, now: string, template: TemplateOf): PodDecorationStatus | undefined {
  // With the rollout's reports, as serve runs it (none of these pods has a report: nothing is
  // moving), and what each pod runs judged against its recorded revisions' templates.
  const status = decorationStatus(pods, decoration, updatedRevision, TEMPLATE_VALID, now, NO_REPORTS, undefined, (_namespace, name, revision) => template(name, revision));
  return sameJson(status, decoration.status ?? {}) ? undefined : status;
}

const NO_REPORTS = new RolloutReports();

export interface PassCost {
  cpuMs: number;
  wallMs: number;
  writes: number;
  /** The largest status written in the pass, bytes of JSON. */
  largestWriteBytes: number;
}

/**
 * One status pass over every decoration, pass number `pass` (its clock). The statuses it would
 * write are then stored as the watch brings them back: new frozen decoration objects.
 */
export function statusPass(pods: Lister<Pod>, decorations: Cache<CachedDecoration>, updatedRevisions: ReadonlyMap<string, string>, pass: number, template: TemplateOf): PassCost {
  const now = new Date(Date.UTC(2026, 3, 1, 0, 0, pass)).toISOString().replace(".000Z", "Z");
  const changed = new Map<string, PodDecorationStatus>();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const decoration of decorations.list()) {
    const status = statusWork(pods, decoration, updatedRevisions.get(decoration.metadata.name ?? ""), now, template);
    if (status !== undefined) changed.set(objectKey(decoration), status);
  }
  const used = process.cpuUsage(cpu);
  const wallMs = performance.now() - started;
  let largestWriteBytes = 0;
  for (const [key, status] of changed) {
    // What the status subresource would be sent (outside the timing).
    largestWriteBytes = Math.max(largestWriteBytes, Buffer.byteLength(JSON.stringify(status)));
    decorations.upsert(deepFreeze({ ...decorations.getByKey(key)!, status }));
  }
  return { cpuMs: (used.user + used.system) / 1000, wallMs, writes: changed.size, largestWriteBytes };
}

export async function benchStatusPass(podCount: number, passes: number): Promise<StatusPassResult> {
  const population = podPopulation(podCount);
  const pods = new Informer<Pod>({
    name: "pods",
    listWatch: generatedListWatch({ count: podCount, generate: population.pod, apiVersion: "v1", kind: "Pod" }),
    transform: podCacheProjection,
    watchdogMs: 3_600_000,
  });
  indexPodsForDecorations(pods.cache);
  const stopPods = await syncInformer(pods);
  const decorations = new Cache<CachedDecoration>();
  for (const pd of population.decorations) decorations.upsert(deepFreeze(structuredClone(pd) as CachedDecoration));

  const passCpuMs: number[] = [];
  const wallMs: number[] = [];
  const writes: number[] = [];
  for (let pass = 0; pass < passes; pass++) {
    const cost = statusPass(pods.cache, decorations, population.updatedRevisions, pass, population.template);
    passCpuMs.push(cost.cpuMs);
    wallMs.push(cost.wallMs);
    writes.push(cost.writes);
  }
  await stopPods();

  const statuses = decorations.list().map((decoration) => decoration.status ?? {});
  return {
    statusPassMs: round(median(passCpuMs.slice(1))),
    coldPassMs: round(passCpuMs[0] ?? Number.NaN),
    passCpuMs: passCpuMs.map(round),
    medianWallMs: round(median(wallMs.slice(1))),
    pods: pods.cache.size,
    decorations: decorations.size,
    namespaces: new Set(pods.cache.list().map((pod) => pod.metadata?.namespace)).size,
    matchedPods: statuses.reduce((sum, status) => sum + (status.matchedPods ?? 0), 0),
    detailPods: statuses.reduce((sum, status) => sum + (status.details ?? []).reduce((count, detail) => count + (detail.pods?.length ?? 0), 0), 0),
    writesInColdPass: writes[0] ?? 0,
    writesInSteadyPasses: writes.slice(1).reduce((sum, count) => sum + count, 0),
  };
}

const round = (value: number) => Math.round(value * 10) / 10;

if (import.meta.main) {
  const result = await benchStatusPass(option("--pods", 10_000), option("--passes", 10));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
