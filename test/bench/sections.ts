// The benchmarks `make bench` runs, in order, each in its own process. A section is a script
// in this folder whose last line on stdout is one JSON object, merged into bench-results.json
// under `key`; several sections may fill one key. Adding a benchmark is adding an entry here.

export interface BenchSection {
  /** Top-level key of bench-results.json this section's JSON is merged into. */
  key: string;
  title: string;
  /** A script in test/bench. */
  script: string;
  args?: readonly string[];
  /** Pins the section's process to these CPUs (taskset -c), e.g. a load generator off the server's core. */
  cpus?: string;
}

export const sections: readonly BenchSection[] = [
  { key: "engine", title: "engine: render + patch", script: "render.ts", args: ["--json"] },
  // The servers it starts pin themselves to core 1; autocannon stays on core 0.
  { key: "webhook", title: "webhook: load (autocannon)", script: "webhook.ts", args: ["--json"], cpus: "0" },
  // The server pins itself to core 1 (its health thread with it); the flood comes from core 0.
  { key: "flood", title: "webhook: 12 concurrent 3 MiB bodies", script: "webhook-flood.ts", args: ["--json"], cpus: "0" },
  // The same server beside 50 connections that declare 3 MiB bodies and send nothing (issue 29).
  { key: "flood", title: "webhook: 50 idle clients declaring 3 MiB beside real reviews", script: "webhook-idle-clients.ts", args: ["--json"], cpus: "0" },
  { key: "controller", title: "controller: status pass", script: "status-pass.ts" },
  { key: "controller", title: "controller: informer cache memory", script: "informer-memory.ts" },
  { key: "scale", title: "controller at 100,000 pods and 1,000 decorations: cache heap, status CPU", script: "scale.ts" },
  // Starts its own control plane (built on first use) and serve as the image and the chart run it,
  // at 0 and 10,000 pods (docs/operations.md, Sizing; 100,000 pods take ~10 minutes more to create:
  // node test/bench/serve-idle.ts runs all three).
  { key: "serveIdle", title: "serve: idle memory at 0 and 10,000 pods, and the memory limit it needs", script: "serve-idle.ts", args: ["--pods", "0,10000", "--json"] },
  // Starts its own control plane (built on first use): why API calls keep their connections.
  { key: "kubeClient", title: "kube client: GETs over a connection each vs kept connections", script: "api-client.ts" },
  // Starts its own control plane (built on first use), serve and the node simulator. The drain
  // delay is a wait the operator configures (DESIGN §9 times the controller's own work; serve's
  // default of 5 s would add 5 s per batch of maxUnavailable pods to the CollaSet alone).
  { key: "rollout", title: "rollout: 100 CollaSet pods in place vs 100 bare pod patches, and a Deployment's 100 pods", script: "rollout.ts", args: ["--drain-delay-ms", "0"] },
];
