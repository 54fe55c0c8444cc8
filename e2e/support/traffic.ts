// A workload's pods behind a Service on the real node while a decoration's sidecar image rolls
// out: a client sends requests to the pod IPs the Service's EndpointSlices list as ready, and
// every change of readiness is recorded, so a test can tell whether each pod left the
// EndpointSlice before its sidecar restarted and came back after. The workload (CollaSet,
// Deployment) is the caller's; its pods carry `app: web`, the Service and the `proxy` sidecar
// (serving the Service's port 8081) are made here.
import { request } from "node:http";
import { Watch, type V1EndpointSlice } from "@kubernetes/client-node";
import { expect } from "vitest";
import { createKubeClient } from "../../src/kube/client.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { testImage } from "../node/test-images.ts";
import { apply, proxyDecorationYaml } from "./collaset-world.ts";
import { eventually, kubeConfig } from "./cluster.ts";
import { PodWatch } from "./pod-watch.ts";

/** The PodOpsLifecycle readiness gate: a pod that carries it is taken out of traffic before an update. */
export const SERVICE_READY_GATE = "pod.kusionstack.io/service-ready";

/** The `proxy` sidecar serves the Service's port 8081; ready once it answers. */
export function sidecarYaml(namespace: string, tag: "1" | "2"): string {
  return proxyDecorationYaml(namespace, { name: "proxy", part: "containers", tag, port: 8081, extra: ["readinessProbe: { httpGet: { path: /index.html, port: 8081 }, periodSeconds: 1, failureThreshold: 1 }"] });
}

export function serviceYaml(namespace: string): string {
  return `
apiVersion: v1
kind: Service
metadata: { name: web, namespace: ${namespace} }
spec:
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8081 }]
`;
}

export interface Transition {
  at: number;
  ip: string;
  ready: boolean;
}

/** The Service's ready endpoints as its EndpointSlices say, with every change of readiness. */
export class EndpointView {
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

export interface PodRollout {
  specChanged: number;
  readyAtSpecChange: boolean;
  newRunning?: number;
}

export interface RolloutFigures {
  requests: number;
  failed: number;
  failures: string[];
  durationMs: number;
  /**
   * By pod IP: when the pod watch first showed the new sidecar image, whether the pod was Ready
   * in that same object (the API server's order, free of the race between two watches), and
   * when the new image ran.
   */
  pods: Map<string, PodRollout>;
  transitions: Transition[];
}

/** Creates the pods (by create) and waits until `replicas` pods are Ready. */
export async function podsReady(watch: PodWatch, replicas: number, create: () => Promise<void>): Promise<void> {
  await create();
  await watch.waitFor(() => {
    const pods = watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null);
    return pods.length === replicas && pods.every((pod) => pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) ? true : undefined;
  }, 180_000, `${replicas} Ready pods`);
}

export interface TrafficRolloutOptions {
  /** The decoration injecting the `proxy` at a tag (default: a PodDecoration of the namespace, sidecarYaml). */
  sidecar?: (tag: "1" | "2") => string;
  /** Runs once the workload is settled behind the Service, before the client starts and proxy:2 is applied. */
  beforeRollout?: () => Promise<void>;
}

/**
 * The Service and proxy:1, then the workload (by createWorkload) settled behind the Service;
 * then proxy:2 rolled out with a client running, until every pod runs it ready and is listed again.
 */
export async function rolloutUnderTraffic(namespace: string, replicas: number, createWorkload: () => Promise<void>, options: TrafficRolloutOptions = {}): Promise<RolloutFigures> {
  const sidecar = options.sidecar ?? ((tag: "1" | "2") => sidecarYaml(namespace, tag));
  await apply(serviceYaml(namespace));
  await apply(sidecar("1"));
  const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
  const endpoints = new EndpointView();
  try {
    await podsReady(watch, replicas, createWorkload);
    await endpoints.start(namespace);
    await eventually(() => Promise.resolve(endpoints.readyIps().length === replicas ? true : undefined), 60_000, `${replicas} ready endpoints`);
    await options.beforeRollout?.();

    const pods = new Map<string, PodRollout>();
    const newImage = testImage("proxy", "2");
    const stopWatching = watch.onPod((pod) => {
      const ip = pod.status?.podIP;
      if (ip === undefined) return;
      const entry = pods.get(ip);
      if (entry === undefined && proxyImage(pod) === newImage) {
        pods.set(ip, { specChanged: performance.now(), readyAtSpecChange: pod.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true });
      }
      if (entry !== undefined && entry.newRunning === undefined && proxyRuns(pod, newImage)) entry.newRunning = performance.now();
    });
    const load = client(endpoints);
    const started = performance.now();
    await apply(sidecar("2"));
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

/** Each pod the rollout moved was listed not ready before its sidecar's image changed, and ready again after the new one ran; no request failed. */
export function expectOutOfTrafficAroundEachRestart(figures: RolloutFigures, replicas: number): void {
  expect(figures.pods.size).toBe(replicas);
  for (const [ip, pod] of figures.pods) {
    const mine = figures.transitions.filter((transition) => transition.ip === ip);
    const leftBefore = mine.find((transition) => !transition.ready && transition.at < pod.specChanged);
    expect(leftBefore, `${ip}: listed not ready before its sidecar's image changed`).toBeDefined();
    expect(pod.newRunning, `${ip}: the new sidecar ran`).toBeDefined();
    const back = mine.filter((transition) => transition.ready && transition.at >= pod.newRunning!);
    expect(back.length, `${ip}: listed ready again after the new sidecar ran`).toBeGreaterThan(0);
  }
  expect(figures.requests).toBeGreaterThan(replicas * 10);
  expect(figures.failures).toEqual([]);
  expect(figures.failed).toBe(0);
}

export function reportFigures(test: string, label: string, replicas: number, figures: RolloutFigures): void {
  console.log(`[${test}] ${label}: ${replicas} pods, ${figures.requests} requests, ${figures.failed} failed, rollout ${(figures.durationMs / 1000).toFixed(1)} s${figures.failures.length > 0 ? `; first failures: ${figures.failures.join(", ")}` : ""}`);
}
