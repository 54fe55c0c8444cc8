// DESIGN §9 rollout target on a real control plane: a CollaSet of 100 pods decorated with a
// sidecar (partition 0, maxUnavailable 10) moved to a new sidecar image in place, against 100
// bare pods whose sidecar image is patched directly, at most 10 at a time, each slot reused
// once the node runs the new image. Beside them (issue 17) the same rollout for a Deployment of
// 100 pods, which the PodDecoration controller moves (the decoration's maxUnavailable 10), and
// its wall time ÷ the CollaSet's. All run on the same simulated kubelet and are observed the
// same way; the decorated rollouts must keep every pod (same UIDs; CollaSet instance ids 0..n-1).
// Starts its own control plane (with the deployment and replicaset controllers), `pod-decorator
// serve` and the node simulator, and stops them.
// CollaSet pods carry PodOpsLifecycle's readiness gate, so each of their updates waits serve's
// drain delay (5 s unless --drain-delay-ms sets it); the Deployment's pods do not opt in.
//   node test/bench/rollout.ts [--pods N] [--max-unavailable N] [--restart-delay-ms N] [--rounds N] [--drain-delay-ms N]
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AppsV1Api, CoreV1Api, type V1Deployment } from "@kubernetes/client-node";
import { startControlPlane, stopControlPlane } from "../../e2e/controlplane/controlplane.ts";
import { startNodeSimulator, type NodeSimulator } from "../../e2e/support/node-simulator.ts";
import { loadKubeConfigFile, startServeProcess, type ServeProcess } from "../../e2e/support/serve-process.ts";
import { createKubeClient, type KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Pod } from "../../src/kube/objects.ts";
import { PodWatch, runsImage, specNames } from "../../e2e/support/pod-watch.ts";
import { summarizeTimeline, type PodTimes, type TimelineSummary } from "./rollout-timeline.ts";

const INSTANCE_ID = "collaset.kusionstack.io/instance-id";
const REVISIONS = "poddecoration.kusionstack.io/revisions";
const SIDECAR = "log-shipper";
const image = (version: number) => `fluent-bit:v${version}`;

interface Options {
  pods: number;
  maxUnavailable: number;
  restartDelayMs: number;
  rounds: number;
  /** serve's --lifecycle-drain-delay in ms; undefined: serve's default. */
  drainDelayMs: number | undefined;
}

interface Phase {
  seconds: number;
  timeline: TimelineSummary;
}

interface DecoratedPhase extends Phase {
  /** The reconciles of the controller that moves the pods during the rollout (from serve's metrics), by result. */
  reconciles: Record<string, number>;
  /** Mean wall ms of one of its reconciles during the rollout. */
  reconcileMeanMs: number;
}

export interface RolloutResult {
  /** CollaSet seconds ÷ bare seconds (sums over the rounds). */
  ratio: number;
  /** Deployment seconds ÷ CollaSet seconds (sums over the rounds). */
  deploymentRatio: number;
  collaSetSeconds: number;
  deploymentSeconds: number;
  bareSeconds: number;
  pods: number;
  maxUnavailable: number;
  restartDelayMs: number;
  /** serve's PodOpsLifecycle drain delay, when the run set it. */
  drainDelayMs?: number;
  rounds: { collaSet: DecoratedPhase; deployment: DecoratedPhase; bare: Phase }[];
  loadAverage1m: { atStart: number; atEnd: number };
  cpus: number;
}

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  const value = index < 0 ? fallback : Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name}: expected a whole number, got ${process.argv[index + 1]}`);
  return value;
}

const seconds = (ms: number) => Math.round(ms / 10) / 100;

async function createNamespace(kube: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${Date.now().toString(36)}`;
  await kube.config.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
  return name;
}

/** Runs `task` over items with at most `concurrency` in flight. */
async function pool<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await task(item);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** Records, per pod uid, when the watch first saw the new image in the spec and then running. */
function recordTimeline(watch: PodWatch, target: string, started: number): { times(): Map<string, PodTimes>; stop(): void } {
  const spec = new Map<string, number>();
  const running = new Map<string, number>();
  const stop = watch.onPod((pod) => {
    const uid = pod.metadata?.uid ?? "";
    const now = performance.now() - started;
    if (!spec.has(uid) && specNames(pod, SIDECAR, target)) spec.set(uid, now);
    if (!running.has(uid) && runsImage(pod, SIDECAR, target)) running.set(uid, now);
  });
  return {
    times: () => new Map([...running].map(([uid, runningAt]) => [uid, { specAt: spec.get(uid) ?? runningAt, runningAt }])),
    stop,
  };
}

/** The controller that moves a workload's pods, as serve's metrics name it. */
type MovingController = "collaset" | "poddecoration";

async function scrapeReconciles(serve: ServeProcess, controller: MovingController): Promise<{ results: Record<string, number>; seconds: number; count: number }> {
  const text = await (await fetch(`http://127.0.0.1:${serve.metricsPort}/metrics`)).text();
  const results: Record<string, number> = {};
  let sum = 0;
  let count = 0;
  for (const line of text.split("\n")) {
    const total = /^controller_runtime_reconcile_total\{([^}]*)\} (\S+)$/.exec(line);
    const result = total !== null && total[1]!.includes(`controller="${controller}"`) ? /result="([a-z_]+)"/.exec(total[1]!) : null;
    if (result !== null) results[result[1]!] = Number(total![2]);
    const time = /^controller_runtime_reconcile_time_seconds_(sum|count)\{([^}]*)\} (\S+)$/.exec(line);
    if (time === null || !time[2]!.includes(`controller="${controller}"`)) continue;
    if (time[1] === "sum") sum = Number(time[3]);
    else count = Number(time[3]);
  }
  return { results, seconds: sum, count };
}

/** The replicas, selector and pod template the CollaSet and the Deployment share. */
function webReplicas(replicas: number) {
  return {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } },
  };
}

function collaSetManifest(namespace: string, replicas: number, maxUnavailable: number): KubeObject & { spec: object } {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "CollaSet",
    metadata: { name: "web", namespace },
    spec: {
      ...webReplicas(replicas),
      updateStrategy: { podUpgradePolicy: "InPlaceIfPossible", rollingUpdate: { maxUnavailable, byPartition: { partition: 0 } } },
    },
  };
}

function deploymentManifest(namespace: string, replicas: number): V1Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace },
    spec: webReplicas(replicas),
  };
}

/** `maxUnavailable` paces the decoration's own rollout (pods not owned by a CollaSet); CollaSet pods follow their CollaSet's. */
function decorationManifest(namespace: string, version: number, maxUnavailable?: number): KubeObject & { spec: object } {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name: "logging", namespace },
    spec: {
      selector: { matchLabels: { app: "web" } },
      updateStrategy: { rollingUpdate: { partition: 0, ...(maxUnavailable === undefined ? {} : { maxUnavailable }) } },
      template: { containers: [{ name: SIDECAR, image: image(version) }] },
    },
  };
}

interface Decoration extends KubeObject {
  metadata: NonNullable<KubeObject["metadata"]> & { generation?: number };
  status?: { observedGeneration?: number; updatedRevision?: string };
}

/** A decorated workload whose pods a controller moves to the decoration's new sidecar image in place. */
interface DecoratedWorkload {
  kind: "CollaSet" | "Deployment";
  controller: MovingController;
  /** The decoration's rollingUpdate.maxUnavailable, when it is the one that paces this workload. */
  decorationMaxUnavailable?: number;
  create(kube: KubeClient<Decoration>, namespace: string, options: Options): Promise<void>;
  /** Throws unless the pods (after a rollout) are what the workload must have. */
  checkPods?(pods: readonly Pod[], options: Options): void;
}

const collaSetWorkload: DecoratedWorkload = {
  kind: "CollaSet",
  controller: "collaset",
  create: async (kube, namespace, options) => void (await kube.kusion.collaSets.create(collaSetManifest(namespace, options.pods, options.maxUnavailable))),
  checkPods: (pods, options) => {
    const ids = pods.map((pod) => Number(pod.metadata?.labels?.[INSTANCE_ID])).sort((a, b) => a - b);
    if (ids.some((id, index) => id !== index)) throw new Error(`instance ids are not 0..${options.pods - 1}: ${ids.join(",")}`);
  },
};

const deploymentWorkload = (maxUnavailable: number): DecoratedWorkload => ({
  kind: "Deployment",
  controller: "poddecoration",
  decorationMaxUnavailable: maxUnavailable,
  create: async (kube, namespace, options) => void (await kube.config.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body: deploymentManifest(namespace, options.pods) })),
});

/** Which pods, and each one's instance id (none for a Deployment's). */
const identities = (pods: readonly Pod[]) => pods.map((pod) => `${pod.metadata?.uid ?? ""}/${pod.metadata?.labels?.[INSTANCE_ID] ?? ""}`).sort();

async function decoratedRounds(kube: KubeClient<Decoration>, serve: ServeProcess, options: Options, workload: DecoratedWorkload): Promise<{ namespace: string; watch: PodWatch; rollTo(version: number): Promise<DecoratedPhase> }> {
  const namespace = await createNamespace(kube, `rollout-${workload.kind.toLowerCase()}`);
  const watch = await PodWatch.start(kube, namespace);
  const live = () => watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null);
  await kube.kusion.podDecorations.create(decorationManifest(namespace, 1, workload.decorationMaxUnavailable) as Decoration);
  await workload.create(kube, namespace, options);
  await watch.waitFor(() => {
    const pods = live();
    return pods.length === options.pods && pods.every((pod) => runsImage(pod, SIDECAR, image(1))) ? true : undefined;
  }, 300_000, `${options.pods} ${workload.kind} pods running the sidecar`);

  const rollTo = async (version: number): Promise<DecoratedPhase> => {
    const before = identities(live());
    const reconcilesBefore = await scrapeReconciles(serve, workload.controller);
    const started = performance.now();
    const timeline = recordTimeline(watch, image(version), started);
    await kube.kusion.podDecorations.mergePatch(namespace, "logging", { spec: { template: { containers: [{ name: SIDECAR, image: image(version) }] } } });
    await watch.waitFor(() => {
      const pods = live();
      return pods.length === options.pods && pods.every((pod) => runsImage(pod, SIDECAR, image(version))) ? true : undefined;
    }, 600_000, `${options.pods} ${workload.kind} pods running ${image(version)}`);
    const elapsed = performance.now() - started;
    timeline.stop();
    const reconcilesAfter = await scrapeReconciles(serve, workload.controller);

    // It must have been the rollout we meant: every pod kept (in place), each on the new revision.
    const decoration = await kube.kusion.podDecorations.get(namespace, "logging");
    const revision = decoration.status?.updatedRevision;
    const pods = watch.pods();
    if (JSON.stringify(identities(pods)) !== JSON.stringify(before)) throw new Error(`the ${workload.kind} rollout replaced pods: UIDs or instance ids changed`);
    workload.checkPods?.(pods, options);
    const expected = JSON.stringify([{ name: "logging", revision }]);
    const wrong = pods.filter((pod) => pod.metadata?.annotations?.[REVISIONS] !== expected);
    if (revision === undefined || wrong.length > 0) throw new Error(`${wrong.length} ${workload.kind} pods do not record the updated revision ${revision ?? "(none)"}`);

    const results: Record<string, number> = {};
    for (const [result, total] of Object.entries(reconcilesAfter.results)) results[result] = total - (reconcilesBefore.results[result] ?? 0);
    const count = reconcilesAfter.count - reconcilesBefore.count;
    return {
      seconds: seconds(elapsed),
      timeline: summarizeTimeline([...timeline.times().values()], options.maxUnavailable),
      reconciles: results,
      reconcileMeanMs: count === 0 ? 0 : Math.round(((reconcilesAfter.seconds - reconcilesBefore.seconds) / count) * 10_000) / 10,
    };
  };
  return { namespace, watch, rollTo };
}

function barePod(namespace: string, index: number): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `bare-${index}`, namespace, labels: { app: "bare" } },
    spec: { containers: [{ name: SIDECAR, image: image(1) }, { name: "app", image: "nginx:1.27" }] },
  };
}

async function bareRounds(kube: KubeClient, options: Options): Promise<{ namespace: string; watch: PodWatch; rollTo(version: number): Promise<Phase> }> {
  const namespace = await createNamespace(kube, "rollout-bare");
  const watch = await PodWatch.start(kube, namespace);
  const indexes = Array.from({ length: options.pods }, (_, index) => index);
  await pool(indexes, options.maxUnavailable, async (index) => {
    await kube.core.pods.create(barePod(namespace, index));
  });
  await watch.waitFor(() => {
    const pods = watch.pods();
    return pods.length === options.pods && pods.every((pod) => runsImage(pod, SIDECAR, image(1))) ? true : undefined;
  }, 300_000, `${options.pods} bare pods running`);

  const rollTo = async (version: number): Promise<Phase> => {
    const before = watch.pods().map((pod) => pod.metadata?.uid ?? "").sort();
    const started = performance.now();
    const timeline = recordTimeline(watch, image(version), started);
    // The same budget as maxUnavailable: a slot is taken by a patch and freed when the node runs the image.
    await pool(indexes, options.maxUnavailable, async (index) => {
      const name = `bare-${index}`;
      await kube.core.pods.jsonPatch(namespace, name, [
        { op: "test", path: "/spec/containers/0/name", value: SIDECAR },
        { op: "replace", path: "/spec/containers/0/image", value: image(version) },
      ]);
      await watch.waitFor(() => {
        const pod = watch.get(name);
        return pod !== undefined && runsImage(pod, SIDECAR, image(version)) ? true : undefined;
      }, 120_000, `${name} running ${image(version)}`);
    });
    const elapsed = performance.now() - started;
    timeline.stop();
    const after = watch.pods().map((pod) => pod.metadata?.uid ?? "").sort();
    if (JSON.stringify(after) !== JSON.stringify(before)) throw new Error("bare pods changed identity during the patches");
    return { seconds: seconds(elapsed), timeline: summarizeTimeline([...timeline.times().values()], options.maxUnavailable) };
  };
  return { namespace, watch, rollTo };
}

export async function benchRollout(options: Options, log: (line: string) => void): Promise<RolloutResult> {
  const loadAtStart = loadavg()[0]!;
  const dir = await mkdtemp(join(tmpdir(), "pod-decorator-bench-rollout-"));
  let serve: ServeProcess | undefined;
  let simulator: NodeSimulator | undefined;
  const watches: PodWatch[] = [];
  try {
    // The deployment and replicaset controllers make the Deployment's pods; the simulator runs them.
    const plane = await startControlPlane(dir, { ownerPid: process.pid, crds: [fileURLToPath(new URL("../../config/crd/", import.meta.url))], controllers: ["deployment-controller", "replicaset-controller"], log });
    // Info level: startServeProcess waits for serve's "caches synced; ready" line (at warn it never came, and the bench hung).
    const drain = options.drainDelayMs === undefined ? [] : [`--lifecycle-drain-delay=${options.drainDelayMs}ms`];
    serve = await startServeProcess({ kubeconfig: plane.kubeconfig, args: ["--log-level=info", ...drain] });
    const config = loadKubeConfigFile(plane.kubeconfig);
    const kube = createKubeClient<Decoration>(config);
    simulator = await startNodeSimulator({ config, restartDelayMs: options.restartDelayMs });
    log("control plane, serve and node simulator running");

    const collaSet = await decoratedRounds(kube, serve, options, collaSetWorkload);
    watches.push(collaSet.watch);
    log(`${options.pods} CollaSet pods running`);
    const deployment = await decoratedRounds(kube, serve, options, deploymentWorkload(options.maxUnavailable));
    watches.push(deployment.watch);
    log(`${options.pods} Deployment pods running`);
    const bare = await bareRounds(kube, options);
    watches.push(bare.watch);
    log(`${options.pods} bare pods running`);

    const rounds: RolloutResult["rounds"] = [];
    for (let round = 0; round < options.rounds; round++) {
      const version = round + 2;
      const collaSetPhase = await collaSet.rollTo(version);
      log(`round ${round + 1}: CollaSet ${collaSetPhase.seconds}s (${JSON.stringify(collaSetPhase.reconciles)} reconciles, mean ${collaSetPhase.reconcileMeanMs} ms)`);
      const deploymentPhase = await deployment.rollTo(version);
      log(`round ${round + 1}: Deployment ${deploymentPhase.seconds}s (${JSON.stringify(deploymentPhase.reconciles)} poddecoration reconciles, mean ${deploymentPhase.reconcileMeanMs} ms)`);
      const barePhase = await bare.rollTo(version);
      log(`round ${round + 1}: bare ${barePhase.seconds}s`);
      rounds.push({ collaSet: collaSetPhase, deployment: deploymentPhase, bare: barePhase });
    }
    const total = (phase: (round: RolloutResult["rounds"][number]) => Phase) => seconds(rounds.reduce((sum, round) => sum + phase(round).seconds * 1000, 0));
    const collaSetSeconds = total((round) => round.collaSet);
    const deploymentSeconds = total((round) => round.deployment);
    const bareSeconds = total((round) => round.bare);
    return {
      ratio: Math.round((collaSetSeconds / bareSeconds) * 100) / 100,
      deploymentRatio: Math.round((deploymentSeconds / collaSetSeconds) * 100) / 100,
      collaSetSeconds,
      deploymentSeconds,
      bareSeconds,
      pods: options.pods,
      maxUnavailable: options.maxUnavailable,
      restartDelayMs: options.restartDelayMs,
      ...(options.drainDelayMs === undefined ? {} : { drainDelayMs: options.drainDelayMs }),
      rounds,
      loadAverage1m: { atStart: loadAtStart, atEnd: loadavg()[0]! },
      cpus: availableParallelism(),
    };
  } finally {
    for (const watch of watches) await watch.stop();
    await simulator?.stop();
    await serve?.stop();
    await stopControlPlane(dir);
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const options: Options = {
    pods: option("--pods", 100),
    maxUnavailable: option("--max-unavailable", 10),
    restartDelayMs: option("--restart-delay-ms", 100),
    rounds: option("--rounds", 2),
    drainDelayMs: process.argv.includes("--drain-delay-ms") ? option("--drain-delay-ms", 0) : undefined,
  };
  const result = await benchRollout(options, (line) => console.error(`rollout: ${line}`));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
