// Micro-benchmark of the engine (DESIGN §9: render + patch of a typical pod with 5 matching
// decorations in under 100 µs), over the typical workload the webhook benchmark also uses: 50
// decorations in the pod's namespace, 5 of them matching; revisions resolved up front, as the
// webhook has them in its caches. Measures selection + rendering + JSON Patch generation per pod.
//   node test/bench/render.ts [--json]
import { performance } from "node:perf_hooks";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { type DecorationRevision, decoratePod, liveRevision } from "../../src/decoration/decorate.ts";
import { createJsonPatch } from "../../src/webhook/json-patch.ts";
import { median } from "./statistics.ts";
import { typicalDecorations, typicalPod } from "./typical-workload.ts";

export interface EngineBenchResult {
  /** Median µs per pod of selection + render + JSON Patch, one thread. */
  renderMicros: number;
  bestMicros: number;
  /**
   * The same in CPU time (the thread's, over all rounds): unlike wall time, barely moved by
   * other processes taking the core, so comparable between runs on a shared machine.
   */
  cpuMicros: number;
  /** Selection + render without the patch. */
  renderOnlyMicros: number;
  decorations: number;
  matching: number;
  patchOperations: number;
}

const pod = typicalPod();
const decorations = typicalDecorations();
const revisions = new Map<PodDecoration, DecorationRevision>(decorations.map((pd) => [pd, liveRevision(pd)]));
const revisionFor = (pd: PodDecoration) => revisions.get(pd);

function decorate(): number {
  return decoratePod(pod, decorations, revisionFor).applied.length;
}

function decorateAndPatch(): number {
  const result = decoratePod(pod, decorations, revisionFor);
  return createJsonPatch(pod, result.pod).length;
}

/** Median and best wall µs per call over rounds of 1,000 calls after a warm-up, and CPU µs per call over all rounds. */
function measure(run: () => number): { median: number; best: number; cpu: number } {
  for (let warm = 0; warm < 5_000; warm++) run();
  const samples: number[] = [];
  // Thread CPU time is read at the scheduler's granularity (milliseconds): summed over every round, not per round.
  const cpuBefore = process.threadCpuUsage();
  for (let round = 0; round < 20; round++) {
    const start = performance.now();
    for (let index = 0; index < 1_000; index++) run();
    samples.push(performance.now() - start);
  }
  const cpu = process.threadCpuUsage(cpuBefore);
  return { median: median(samples), best: Math.min(...samples), cpu: (cpu.user + cpu.system) / 20_000 };
}

const tenths = (value: number) => Math.round(value * 10) / 10;

export function benchEngine(): EngineBenchResult {
  const applied = decorate();
  if (applied !== 5) throw new Error(`expected 5 decorations to apply, got ${applied}`);
  const patchOperations = decorateAndPatch();
  const total = measure(decorateAndPatch);
  const renderOnly = measure(decorate);
  return { renderMicros: total.median, bestMicros: total.best, cpuMicros: tenths(total.cpu), renderOnlyMicros: renderOnly.median, decorations: decorations.length, matching: applied, patchOperations };
}

if (import.meta.main) {
  const result = benchEngine();
  if (process.argv.includes("--json")) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    process.stdout.write(
      `render + JSON Patch, ${result.matching} of ${result.decorations} decorations matching (${result.patchOperations} patch operations): ` +
        `median ${result.renderMicros.toFixed(1)} µs/pod, best ${result.bestMicros.toFixed(1)} µs/pod, CPU ${result.cpuMicros.toFixed(1)} µs/pod (target < 100 µs); ` +
        `selection + render alone: median ${result.renderOnlyMicros.toFixed(1)} µs/pod\n`,
    );
  }
}
