// Traffic-safe CollaSet updates on the real node: a client sends requests to the pod IPs the
// Service's EndpointSlice lists as ready while a decoration's sidecar image rolls out in place.
// With PodOpsLifecycle the EndpointSlice marks each pod not ready before its sidecar restarts
// and ready again after, and no request fails; without it the sidecar restarts while the pod is
// still listed ready. A protection finalizer holds an update back until it is released, and a
// PodDisruptionBudget with maxUnavailable 0 holds a recreation back, reported in status.
// TRAFFIC_REPLICAS (default 3) sizes the rollout; the figures are printed for the record.
import { request } from "node:http";
import { PolicyV1Api, Watch, type V1EndpointSlice } from "@kubernetes/client-node";
import { describe, expect } from "vitest";
import { createKubeClient } from "../../src/kube/client.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { testImage } from "../node/test-images.ts";
import { apply, ensureOperatorNamespace, proxyDecorationYaml } from "../support/collaset-world.ts";
import { clients, eventually, kubeConfig, kubectl, test } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";
import { PodWatch } from "../support/pod-watch.ts";

const REPLICAS = Number(process.env.TRAFFIC_REPLICAS ?? "3");
const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };
const GATE = "pod.kusionstack.io/service-ready";
const policy = () => kubeConfig().makeApiClient(PolicyV1Api);

function collaSetYaml(namespace: string, options: { replicas: number; image?: string; policy?: string; maxUnavailable?: number }): string {
  return `
apiVersion: apps.kusionstack.io/v1alpha1
kind: CollaSet
metadata: { name: web, namespace: ${namespace} }
spec:
  replicas: ${options.replicas}
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      terminationGracePeriodSeconds: 2
      automountServiceAccountToken: false
      containers:
        - name: app
          image: ${options.image ?? testImage("app")}
  updateStrategy:
    podUpgradePolicy: ${options.policy ?? "InPlaceIfPossible"}
    rollingUpdate: { maxUnavailable: ${options.maxUnavailable ?? 1} }
`;
}

/** The `proxy` sidecar serves the Service's port 8081; ready once it answers. */
function sidecarYaml(namespace: string, tag: "1" | "2"): string {
  return proxyDecorationYaml(namespace, { name: "proxy", part: "containers", tag, port: 8081, extra: ["readinessProbe: { httpGet: { path: /index.html, port: 8081 }, periodSeconds: 1, failureThreshold: 1 }"] });
}

function serviceYaml(namespace: string): string {
  return `
apiVersion: v1
kind: Service
metadata: { name: web, namespace: ${namespace} }
spec:
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8081 }]
`;
}

interface Transition {
  at: number;
  ip: string;
  ready: boolean;
}

/** The Service's ready endpoints as its EndpointSlices say, with every change of readiness. */
class EndpointView {
  readonly ready = new Map<string, boolean>();
  readonly transitions: Transition[] = [];
  readonly #slices = new Map<string, V1EndpointSlice>();
  #abort: { abort(): void } | undefined;

  async start(namespace: string): Promise<void> {
    this.#abort = await new Watch(kubeConfig()).watch(`/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`, { labelSelector: "kubernetes.io/service-name=web" }, (type: string, slice: V1EndpointSlice) => {
      if (type === "DELETED") this.#slices.delete(slice.metadata!.name!);
      else this.#slices.set(slice.metadata!.name!, slice);
      const now = performance.now();
      const seen = new Map<string, boolean>();
      for (const each of this.#slices.values()) for (const endpoint of each.endpoints ?? []) for (const ip of endpoint.addresses) seen.set(ip, endpoint.conditions?.ready === true);
      for (const [ip, ready] of seen) {
        if (this.ready.get(ip) !== ready) this.transitions.push({ at: now, ip, ready });
        this.ready.set(ip, ready);
      }
      for (const ip of [...this.ready.keys()]) if (!seen.has(ip)) this.ready.delete(ip);
    }, () => undefined);
  }

  readyIps(): string[] {
    return [...this.ready].filter(([, ready]) => ready).map(([ip]) => ip);
  }

  stop(): void {
    this.#abort?.abort();
  }
}

/** One request on a new connection (as a proxy opening one per request would). */
function get(ip: string): Promise<boolean> {
  return new Promise((resolve) => {
    const call = request({ host: ip, port: 8081, path: "/index.html", agent: false, timeout: 2000 }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode === 200));
      response.on("error", () => resolve(false));
    });
    call.on("timeout", () => call.destroy(new Error("timeout")));
    call.on("error", () => resolve(false));
    call.end();
  });
}

/** Sends requests round-robin to the ready endpoints until stopped; counts them. */
function client(endpoints: EndpointView): { stop(): Promise<{ requests: number; failed: number; failures: string[] }> } {
  let running = true;
  let requests = 0;
  let failed = 0;
  const failures: string[] = [];
  const loop = (async () => {
    for (let turn = 0; running; turn++) {
      const ips = endpoints.readyIps();
      if (ips.length === 0) {
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      const ip = ips[turn % ips.length]!;
      requests++;
      if (!(await get(ip))) {
        failed++;
        if (failures.length < 20) failures.push(`${ip} at ${Math.round(performance.now())}`);
      }
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { requests, failed, failures };
    },
  };
}

function proxyImage(pod: Pod): string | undefined {
  return pod.spec?.containers.find((container) => container.name === "proxy")?.image;
}

function proxyRuns(pod: Pod, image: string): boolean {
  const status = pod.status?.containerStatuses?.find((container) => container.name === "proxy");
  return status?.image === image && status.ready === true && status.state?.running != null;
}

async function collaSetStatus(namespace: string): Promise<{ conditions?: { type: string; status: string; reason?: string; message?: string }[]; availableReplicas?: number; updatedAvailableReplicas?: number }> {
  const object = (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "collasets", namespace, name: "web" })) as { status?: object };
  return object.status ?? {};
}

interface RolloutFigures {
  requests: number;
  failed: number;
  failures: string[];
  durationMs: number;
  /** Per pod IP: when the pod spec named the new image, when the new sidecar ran ready. */
  pods: Map<string, { specChanged: number; newRunning?: number }>;
  transitions: Transition[];
}

/** A CollaSet behind a Service, settled on proxy:1; then proxy:2 rolled out with a client running. */
async function rollout(namespace: string, replicas: number): Promise<RolloutFigures> {
  await apply(serviceYaml(namespace));
  await apply(sidecarYaml(namespace, "1"));
  const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
  const endpoints = new EndpointView();
  try {
    await podsReady(watch, replicas, async () => apply(collaSetYaml(namespace, { replicas })));
    await endpoints.start(namespace);
    await eventually(() => Promise.resolve(endpoints.readyIps().length === replicas ? true : undefined), 60_000, `${replicas} ready endpoints`);

    const pods = new Map<string, { specChanged: number; newRunning?: number }>();
    const newImage = testImage("proxy", "2");
    const stopWatching = watch.onPod((pod) => {
      const ip = pod.status?.podIP;
      if (ip === undefined) return;
      const entry = pods.get(ip);
      if (entry === undefined && proxyImage(pod) === newImage) pods.set(ip, { specChanged: performance.now() });
      if (entry !== undefined && entry.newRunning === undefined && proxyRuns(pod, newImage)) entry.newRunning = performance.now();
    });
    const load = client(endpoints);
    const started = performance.now();
    await apply(sidecarYaml(namespace, "2"));
    await watch.waitFor(() => {
      const all = watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null);
      return all.length === replicas && all.every((pod) => proxyRuns(pod, newImage) && pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) ? true : undefined;
    }, 300_000, `every pod ready on ${newImage}`);
    await eventually(() => Promise.resolve(endpoints.readyIps().length === replicas ? true : undefined), 60_000, `${replicas} ready endpoints after the rollout`);
    const durationMs = performance.now() - started;
    const counted = await load.stop();
    stopWatching();
    return { ...counted, durationMs, pods, transitions: [...endpoints.transitions] };
  } finally {
    endpoints.stop();
    await watch.stop();
  }
}

/** Creates the pods (by create) and waits until all are Ready. */
async function podsReady(watch: PodWatch, replicas: number, create: () => Promise<void>): Promise<void> {
  await create();
  await watch.waitFor(() => {
    const pods = watch.pods();
    return pods.length === replicas && pods.every((pod) => pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) ? true : undefined;
  }, 180_000, `${replicas} Ready pods`);
}

function report(label: string, figures: RolloutFigures): void {
  console.log(`[traffic-safe-updates] ${label}: ${REPLICAS} pods, ${figures.requests} requests, ${figures.failed} failed, rollout ${(figures.durationMs / 1000).toFixed(1)} s${figures.failures.length > 0 ? `; first failures: ${figures.failures.join(", ")}` : ""}`);
}

/** The rollout with an operator started with `args`; its figures printed under `label`. */
async function rolloutWith(namespace: string, args: readonly string[], label: string): Promise<RolloutFigures> {
  await ensureOperatorNamespace();
  const operator = await startOperator({ args });
  try {
    const figures = await rollout(namespace, REPLICAS);
    report(label, figures);
    expect(figures.pods.size).toBe(REPLICAS);
    return figures;
  } finally {
    expect(await operator.stop()).toBe(0);
  }
}

describe("traffic-safe updates on the real node", () => {
  test("with PodOpsLifecycle, each pod leaves the EndpointSlice before its sidecar restarts, returns after, and no request fails", async ({ namespace }) => {
    const figures = await rolloutWith(namespace, ["--lifecycle-drain-delay=2s"], "with PodOpsLifecycle");
    for (const [ip, pod] of figures.pods) {
      const mine = figures.transitions.filter((transition) => transition.ip === ip);
      const leftBefore = mine.find((transition) => !transition.ready && transition.at < pod.specChanged);
      expect(leftBefore, `${ip}: listed not ready before its sidecar's image changed`).toBeDefined();
      expect(pod.newRunning, `${ip}: the new sidecar ran`).toBeDefined();
      const back = mine.filter((transition) => transition.ready && transition.at >= pod.newRunning!);
      expect(back.length, `${ip}: listed ready again after the new sidecar ran`).toBeGreaterThan(0);
    }
    expect(figures.requests).toBeGreaterThan(REPLICAS * 10);
    expect(figures.failures).toEqual([]);
    expect(figures.failed).toBe(0);
  });

  test("without PodOpsLifecycle, the sidecar restarts while the EndpointSlice still lists its pod ready", async ({ namespace }) => {
    const figures = await rolloutWith(namespace, ["--pod-ops-lifecycle=false"], "without PodOpsLifecycle");
    for (const [ip, pod] of figures.pods) {
      const leftBefore = figures.transitions.find((transition) => transition.ip === ip && !transition.ready && transition.at < pod.specChanged);
      expect(leftBefore, `${ip}: still listed ready when its sidecar's image changed`).toBeUndefined();
    }
  });

  test("a protection finalizer holds the update back until it is released; the wait is reported", async ({ namespace }) => {
    await ensureOperatorNamespace();
    const operator = await startOperator({ args: ["--lifecycle-drain-delay=1s", "--lifecycle-stuck-after=3s"] });
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    try {
      await podsReady(watch, 1, () => apply(collaSetYaml(namespace, { replicas: 1 })));
      const pod = watch.pods()[0]!;
      const name = pod.metadata!.name!;
      const finalizer = "prot.podopslifecycle.kusionstack.io/test-traffic";
      await kubectl(["patch", "pod", name, "-n", namespace, "--type=json", "-p", JSON.stringify([{ op: "add", path: "/metadata/finalizers", value: [finalizer] }])]);
      await apply(collaSetYaml(namespace, { replicas: 1, image: testImage("app", "2") }));
      // Out of traffic, and held: the status says by what.
      await watch.waitFor(() => (watch.get(name)?.status?.conditions?.some((c) => c.type === GATE && c.status === "False") ? true : undefined), 60_000, "the gate's condition False");
      await eventually(async () => {
        const failure = (await collaSetStatus(namespace)).conditions?.find((c) => c.type === "ReplicaFailure");
        return failure?.status === "True" && failure.message?.includes(finalizer) === true ? true : undefined;
      }, 60_000, "the CollaSet to report the protection finalizer it waits for");
      const held = watch.get(name)!;
      expect(held.spec!.containers[0]!.image).toBe(testImage("app"));
      expect(held.status!.containerStatuses!.find((c) => c.name === "app")!.image).toBe(testImage("app"));
      const events = await clients().core.listNamespacedEvent({ namespace, fieldSelector: "reason=LifecycleStuck" });
      expect(events.items.some((event) => event.message?.includes(finalizer))).toBe(true);

      await kubectl(["patch", "pod", name, "-n", namespace, "--type=json", "-p", JSON.stringify([{ op: "remove", path: "/metadata/finalizers" }])]);
      const done = await watch.waitFor(() => {
        const current = watch.get(name);
        const app = current?.status?.containerStatuses?.find((c) => c.name === "app");
        const labels = Object.keys(current?.metadata?.labels ?? {}).filter((key) => key.includes("podopslifecycle.kusionstack.io"));
        return app?.image === testImage("app", "2") && app.ready && labels.length === 0 && current?.status?.conditions?.some((c) => c.type === GATE && c.status === "True") ? current : undefined;
      }, 120_000, "the update in place, back in traffic");
      expect(done.metadata!.uid).toBe(pod.metadata!.uid);
    } finally {
      await watch.stop();
      expect(await operator.stop()).toBe(0);
    }
  });

  test("a PodDisruptionBudget with maxUnavailable 0 holds a recreation back, reported; never forced", async ({ namespace }) => {
    await ensureOperatorNamespace();
    const operator = await startOperator({ args: ["--lifecycle-drain-delay=1s"] });
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    try {
      await podsReady(watch, 1, () => apply(collaSetYaml(namespace, { replicas: 1, policy: "Recreate" })));
      const pod = watch.pods()[0]!;
      await apply(`
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: web, namespace: ${namespace} }
spec: { maxUnavailable: 0, selector: { matchLabels: { app: web } } }
`);
      await eventually(async () => ((await policy().readNamespacedPodDisruptionBudget({ namespace, name: "web" })).status?.observedGeneration === 1 ? true : undefined), 30_000, "the budget observed");
      await apply(collaSetYaml(namespace, { replicas: 1, policy: "Recreate", image: testImage("app", "2") }));
      await eventually(async () => {
        const failure = (await collaSetStatus(namespace)).conditions?.find((c) => c.type === "ReplicaFailure");
        return failure?.status === "True" && failure.message?.includes("eviction refused") === true ? failure : undefined;
      }, 60_000, "the CollaSet to report the refused eviction");
      const events = await clients().core.listNamespacedEvent({ namespace, fieldSelector: "reason=EvictionRefused" });
      expect(events.items.length).toBeGreaterThan(0);
      const kept = watch.get(pod.metadata!.name!);
      expect(kept?.metadata?.uid).toBe(pod.metadata!.uid);
      expect(kept?.metadata?.deletionTimestamp).toBeUndefined();

      await policy().deleteNamespacedPodDisruptionBudget({ namespace, name: "web" });
      const replacement = await watch.waitFor(() => watch.pods().find((each) => each.metadata?.uid !== pod.metadata!.uid && each.status?.containerStatuses?.[0]?.image === testImage("app", "2") && each.status.conditions?.some((c) => c.type === "Ready" && c.status === "True")), 120_000, "the replacement Ready");
      expect(replacement.spec!.readinessGates).toEqual([{ conditionType: GATE }]);
    } finally {
      await watch.stop();
      expect(await operator.stop()).toBe(0);
    }
  });
});
