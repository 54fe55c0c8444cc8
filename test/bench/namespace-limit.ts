// The worst a pod can cost within a namespace's limits (DESIGN §10, "No namespace can stall
// another"; the measured default of decorationLimits.perNamespace): N decorations that all select
// the pod, each injecting a sidecar with ten env variables, a mount and a volume, patching the
// primary containers' env, and setting labels and an annotation, chained so that selection takes
// every round it is given. Prints the in-process render time per pod, the median of 5, by N.
//   node test/bench/namespace-limit.ts [--rounds R] [N...]
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { decoratePod, liveRevision } from "../../src/decoration/decorate.ts";
import { DEFAULT_MAX_SELECTION_ROUNDS } from "../../src/decoration/engine-bounds.ts";
import { median } from "./statistics.ts";
import { NAMESPACE, typicalPod } from "./typical-workload.ts";

/** N decorations: the first selects the pod's own label, each of the next rounds-2 the label the one before sets, the rest the last of them. */
export function chainedDecorations(count: number, rounds: number): PodDecoration[] {
  return Array.from({ length: count }, (_, index) => {
    const link = Math.min(index, rounds - 1);
    return {
      apiVersion: "apps.kusionstack.io/v1alpha1",
      kind: "PodDecoration",
      metadata: { name: `worst-${String(index).padStart(4, "0")}`, namespace: NAMESPACE, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: {
        selector: { matchLabels: link === 0 ? { app: "web" } : { [`chain-${link}`]: "on" } },
        template: {
          metadata: [{ patchPolicy: "Overwrite", labels: { [`chain-${index + 1}`]: "on", [`team-${index}`]: "platform" }, annotations: { [`note-${index}`]: "n".repeat(100) } }],
          containers: [{
            name: `side-${index}`,
            image: `registry.example.com/side:${index}`,
            env: Array.from({ length: 10 }, (_unused, variable) => ({ name: `E${variable}`, value: `v${variable}` })),
            volumeMounts: [{ name: `vol-${index}`, mountPath: `/var/side-${index}` }],
            resources: { requests: { cpu: "10m", memory: "16Mi" } },
          }],
          volumes: [{ name: `vol-${index}`, emptyDir: {} }],
          primaryContainers: [{ env: [{ name: `P${index}`, value: "1" }] }],
        },
      },
    };
  });
}

export function worstRenderMs(count: number, rounds: number): number {
  const decorations = chainedDecorations(count, rounds);
  const times: number[] = [];
  for (let run = 0; run < 5; run++) {
    const pod = typicalPod();
    const started = performance.now();
    const result = decoratePod(pod, decorations, liveRevision, { maxSelectionRounds: rounds });
    times.push(performance.now() - started);
    if (result.applied.length !== count) throw new Error(`expected all ${count} decorations to apply, got ${result.applied.length}`);
  }
  return median(times);
}

if (import.meta.main) {
  const roundsAt = process.argv.indexOf("--rounds");
  const rounds = roundsAt < 0 ? DEFAULT_MAX_SELECTION_ROUNDS : Number(process.argv[roundsAt + 1]);
  const counts = process.argv.slice(2).filter((arg, index, all) => arg !== "--rounds" && all[index - 1] !== "--rounds").map(Number);
  for (const count of counts.length > 0 ? counts : [50, 100, 200, 400]) {
    console.log(JSON.stringify({ decorations: count, rounds, renderMs: Number(worstRenderMs(count, rounds).toFixed(1)) }));
  }
}
