// Micro-benchmark of the engine (DESIGN §9: render + patch of a typical pod with 5 matching
// decorations in under 100 µs): a pod with two containers, env, mounts and volumes; 50
// decorations in its namespace of which 5 match; revisions resolved up front, as the webhook
// has them in its caches. Measures selection + rendering + JSON Patch generation per pod.
//   node test/bench/render.ts [--json]
import { performance } from "node:perf_hooks";
import type { Pod } from "../../src/api/pod.ts";
import { defaultPodDecoration, type PodDecoration } from "../../src/api/poddecoration.ts";
import { type DecorationRevision, decoratePod, liveRevision } from "../../src/decoration/decorate.ts";
import { createJsonPatch } from "../../src/webhook/json-patch.ts";

const pod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "checkout-7d9f8b6c5-x2x4z",
    namespace: "shop",
    labels: { app: "checkout", tier: "backend", "pod-template-hash": "7d9f8b6c5" },
    annotations: { "kubectl.kubernetes.io/default-container": "app" },
    ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "checkout-7d9f8b6c5", uid: "3f1c", controller: true }],
  },
  spec: {
    containers: [
      {
        name: "app",
        image: "example.com/checkout:1.42.0",
        ports: [{ containerPort: 8080, name: "http" }],
        env: [{ name: "PORT", value: "8080" }, { name: "DB_HOST", value: "db" }],
        resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "256Mi" } },
        volumeMounts: [{ name: "config", mountPath: "/etc/checkout" }],
        readinessProbe: { httpGet: { path: "/ready", port: 8080 } },
      },
      { name: "cache", image: "registry.k8s.io/pause:3.10" },
    ],
    volumes: [{ name: "config", configMap: { name: "checkout" } }],
    serviceAccountName: "checkout",
  },
};

function decoration(index: number, matches: boolean): PodDecoration {
  return defaultPodDecoration({
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name: `decoration-${index}`, namespace: "shop", creationTimestamp: `2024-01-${String((index % 28) + 1).padStart(2, "0")}T00:00:00Z` },
    spec: {
      selector: matches ? { matchLabels: { tier: "backend" } } : { matchLabels: { app: `other-${index}` } },
      injectStrategy: { group: index % 2 === 0 ? "" : `group-${index}`, weight: index % 3 },
      template: {
        metadata: [{ patchPolicy: "Overwrite", labels: { [`example.com/decorated-${index}`]: "true" }, annotations: { [`example.com/note-${index}`]: "added" } }],
        containers: [{
          name: `sidecar-${index}`,
          image: "cr.fluentbit.io/fluent/fluent-bit:3.2.2",
          resources: { requests: { cpu: "10m", memory: "32Mi" } },
          volumeMounts: [{ name: `shared-${index}`, mountPath: `/var/shared/${index}` }],
        }],
        primaryContainers: [{ targetPolicy: "ByName", name: "app", env: [{ name: `FEATURE_${index}`, value: "on" }], volumeMounts: [{ name: `shared-${index}`, mountPath: `/var/shared/${index}` }] }],
        volumes: [{ name: `shared-${index}`, emptyDir: {} }],
        tolerations: [{ key: `example.com/pool-${index}`, operator: "Exists", effect: "NoSchedule" }],
      },
    },
  });
}

const decorations = Array.from({ length: 50 }, (_, index) => decoration(index, index % 10 === 0));
const revisions = new Map<PodDecoration, DecorationRevision>(decorations.map((pd) => [pd, liveRevision(pd)]));
const revisionFor = (pd: PodDecoration) => revisions.get(pd);

function decorate(): number {
  return decoratePod(pod, decorations, revisionFor).applied.length;
}

function decorateAndPatch(): number {
  const result = decoratePod(pod, decorations, revisionFor);
  return createJsonPatch(pod, result.pod).length;
}

/** Median and best µs per call over rounds of calls, after a warm-up. */
function measure(run: () => number): { median: number; best: number } {
  for (let warm = 0; warm < 5_000; warm++) run();
  const samples: number[] = [];
  for (let round = 0; round < 20; round++) {
    const start = performance.now();
    for (let index = 0; index < 1_000; index++) run();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(samples.length / 2)] ?? Number.NaN, best: samples[0] ?? Number.NaN };
}

const applied = decorate();
if (applied !== 5) throw new Error(`expected 5 decorations to apply, got ${applied}`);
const patchOperations = decorateAndPatch();
const total = measure(decorateAndPatch);
const engine = measure(decorate);

if (process.argv.includes("--json")) {
  process.stdout.write(`${JSON.stringify({ benchmark: "render", decorations: decorations.length, matching: applied, patchOperations, medianMicros: total.median, bestMicros: total.best, engineMedianMicros: engine.median, targetMicros: 100 })}\n`);
} else {
  process.stdout.write(
    `render + JSON Patch, ${applied} of ${decorations.length} decorations matching (${patchOperations} patch operations): ` +
      `median ${total.median.toFixed(1)} µs/pod, best ${total.best.toFixed(1)} µs/pod (target < 100 µs); ` +
      `selection + render alone: median ${engine.median.toFixed(1)} µs/pod\n`,
  );
}
