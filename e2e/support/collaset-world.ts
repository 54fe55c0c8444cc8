// A CollaSet `web` decorated by a PodDecoration `logging`, as the reliability tests build
// it, and the one end state every such test must reach: exactly the pods asked for, instance
// ids 0..n-1, every pod on the updated template and decoration revisions and running them,
// nothing left terminating, and both statuses saying so.
import type { V1Pod } from "@kubernetes/client-node";
import { expect } from "vitest";
import { isAvailable } from "../../src/controller/pod-availability.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { clients, eventually, kubectl } from "./cluster.ts";

export const INSTANCE_ID = "collaset.kusionstack.io/instance-id";
export const TEMPLATE_REVISION = "controller-revision-hash";
export const REVISIONS = "poddecoration.kusionstack.io/revisions";
export const RECREATE_FINALIZER = "collaset.kusionstack.io/recreate";
const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };

export interface CollaSetOptions {
  replicas: number;
  maxUnavailable?: number;
  paused?: boolean;
  env?: string;
  policy?: string;
  /** The template's own partition. */
  partition?: number;
}

export function collaSetYaml(namespace: string, options: CollaSetOptions): string {
  return `
apiVersion: apps.kusionstack.io/v1alpha1
kind: CollaSet
metadata:
  name: web
  namespace: ${namespace}
spec:
  replicas: ${options.replicas}
  paused: ${options.paused ?? false}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: app
          image: e2e.local/app:1
          env:
            - name: MODE
              value: ${options.env ?? "blue"}
  updateStrategy:
    podUpgradePolicy: ${options.policy ?? "InPlaceIfPossible"}
    rollingUpdate:
      maxUnavailable: ${options.maxUnavailable ?? 1}
      byPartition:
        partition: ${options.partition ?? 0}
`;
}

export interface DecorationRollout {
  partition?: number;
  /** Only the pod of this instance id moves (a rollingUpdate selector). */
  canary?: string;
  /** Pods of one workload unavailable at once because of the update (integer or "N%"). */
  maxUnavailable?: number | string;
  /** What happens to a pod that is not a CollaSet's when the change needs recreation. */
  recreatePolicy?: "Never" | "Evict";
  /** Environment of every sidecar. */
  env?: Readonly<Record<string, string>>;
}

/**
 * The `logging` decoration with sidecars as `name=image`, in the order it lists them; rolled out
 * by partition (0 by default) or, with `canary`, to the pod of that instance id only.
 */
export function decorationYaml(namespace: string, sidecars: readonly string[], rollout: DecorationRollout = {}): string {
  const env = Object.entries(rollout.env ?? {});
  const envLines = env.length === 0 ? "" : `        env:\n${env.map(([name, value]) => `          - { name: ${name}, value: "${value}" }\n`).join("")}`;
  const containers = sidecars.map((sidecar) => {
    const [name, image] = sidecar.split("=");
    return `      - name: ${name}\n        image: ${image}\n${envLines}`;
  });
  const rollingUpdate = (rollout.canary !== undefined
    ? `      selector:\n        matchLabels:\n          ${INSTANCE_ID}: "${rollout.canary}"\n`
    : `      partition: ${rollout.partition ?? 0}\n`) +
    (rollout.maxUnavailable === undefined ? "" : `      maxUnavailable: ${JSON.stringify(rollout.maxUnavailable)}\n`);
  const recreatePolicy = rollout.recreatePolicy === undefined ? "" : `    recreatePolicy: ${rollout.recreatePolicy}\n`;
  return `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: logging
  namespace: ${namespace}
spec:
  selector:
    matchLabels:
      app: web
  updateStrategy:
${recreatePolicy}    rollingUpdate:
${rollingUpdate}  template:
    containers:
${containers.join("")}`;
}

/**
 * A PodDecoration for the `app: web` pods, rolled out to all, injecting a `proxy` (image
 * e2e.local/proxy:<tag>) into `part` that serves /www over HTTP on `port`; `extra` are more
 * fields of that container, one YAML line each (probes, restartPolicy).
 */
export function proxyDecorationYaml(namespace: string, options: { name: string; part: "containers" | "initContainers"; tag: "1" | "2"; port: number; extra: readonly string[] }): string {
  return `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata: { name: ${options.name}, namespace: ${namespace} }
spec:
  selector: { matchLabels: { app: web } }
  updateStrategy: { rollingUpdate: { partition: 0 } }
  template:
    ${options.part}:
      - name: proxy
        image: e2e.local/proxy:${options.tag}
        command: [httpd, -f, -p, "${options.port}", -h, /www]
${options.extra.map((line) => `        ${line}\n`).join("")}`;
}

export async function apply(yaml: string): Promise<void> {
  const result = await kubectl(["apply", "-f", "-"], yaml);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
}

export function isCollaSetPod(pod: Pod | V1Pod): boolean {
  return pod.metadata?.ownerReferences?.some((owner) => owner.controller === true && owner.kind === "CollaSet" && owner.name === "web") === true;
}

export async function collaSetPods(namespace: string): Promise<Pod[]> {
  const list = await clients().core.listNamespacedPod({ namespace });
  return (JSON.parse(JSON.stringify(list.items)) as Pod[]).filter(isCollaSetPod);
}

export function sidecarsOf(pod: Pod): string[] {
  return (pod.spec?.containers ?? []).filter((container) => container.name !== "app").map((container) => `${container.name}=${container.image ?? ""}`);
}

interface CollaSetObject {
  metadata: { generation: number; uid: string };
  spec: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    updatedReadyReplicas?: number;
    updatedAvailableReplicas?: number;
    currentRevision?: string;
    updatedRevision?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

export interface DecorationObject {
  metadata: { generation: number };
  status?: {
    observedGeneration?: number;
    currentRevision?: string;
    updatedRevision?: string;
    matchedPods?: number;
    injectedPods?: number;
    updatedPods?: number;
    updatedReadyPods?: number;
    details?: { collaSet?: string; affectedReplicas?: number; pods?: { name: string; revision?: string; escaped?: boolean }[] }[];
    /** Per workload not owned by a CollaSet (kind `Pod` and the pod's name for a pod without a controller). */
    workloads?: WorkloadStatus[];
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

export interface WorkloadStatus {
  kind: string;
  name: string;
  matchedPods?: number;
  updatedPods?: number;
  outdatedPods?: number;
  blockedPods?: number;
  /** Why pods do not move (the contract's single reason). */
  reason?: string;
  /** Why pods do not move, per blocked pod (the first few). */
  blocked?: { pod: string; reason: string; message: string }[];
}

export async function readCollaSet(namespace: string): Promise<CollaSetObject> {
  return (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "collasets", namespace, name: "web" })) as CollaSetObject;
}

export async function readDecoration(namespace: string, name = "logging"): Promise<DecorationObject> {
  return (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "poddecorations", namespace, name })) as DecorationObject;
}

export interface ExpectedEnd {
  replicas: number;
  sidecars: readonly string[];
  /** Bare pods the decoration matches: decorated by the webhook (on the updated revision, ready), or admitted undecorated. */
  others?: { decorated: number; undecorated: number };
}

/** What the end state looks like, reduced to what must hold (names of offending pods listed). */
async function endState(namespace: string): Promise<unknown> {
  const [pods, collaSet, decoration] = await Promise.all([collaSetPods(namespace), readCollaSet(namespace), readDecoration(namespace)]);
  const cls = collaSet.status ?? {};
  const pd = decoration.status ?? {};
  const expectedRevisions = JSON.stringify([{ name: "logging", revision: pd.updatedRevision }]);
  const names = (predicate: (pod: Pod) => boolean) => pods.filter(predicate).map((pod) => pod.metadata?.name ?? "").sort();
  const condition = (type: string) => {
    const found = cls.conditions?.find((entry) => entry.type === type);
    return found === undefined ? "missing" : `${found.status}/${found.reason ?? ""}`;
  };
  return {
    pods: {
      count: pods.length,
      ids: pods.map((pod) => Number(pod.metadata?.labels?.[INSTANCE_ID])).sort((a, b) => a - b).join(","),
      terminating: names((pod) => pod.metadata?.deletionTimestamp != null),
      heldByRecreateFinalizer: names((pod) => (pod.metadata?.finalizers ?? []).includes(RECREATE_FINALIZER)),
      offTemplateRevision: names((pod) => pod.metadata?.labels?.[TEMPLATE_REVISION] !== cls.updatedRevision),
      offDecorationRevision: names((pod) => pod.metadata?.annotations?.[REVISIONS] !== expectedRevisions),
      sidecars: [...new Set(pods.map((pod) => sidecarsOf(pod).join(",")))],
      unavailable: names((pod) => !isAvailable(pod)),
    },
    collaSet: {
      observedCurrentGeneration: cls.observedGeneration === collaSet.metadata.generation,
      replicas: cls.replicas,
      readyReplicas: cls.readyReplicas,
      availableReplicas: cls.availableReplicas,
      updatedReplicas: cls.updatedReplicas,
      updatedReadyReplicas: cls.updatedReadyReplicas,
      updatedAvailableReplicas: cls.updatedAvailableReplicas,
      currentIsUpdated: cls.currentRevision !== undefined && cls.currentRevision === cls.updatedRevision,
      ready: condition("Ready"),
      replicaFailure: condition("ReplicaFailure"),
    },
    decoration: {
      observedCurrentGeneration: pd.observedGeneration === decoration.metadata.generation,
      currentIsUpdated: pd.currentRevision !== undefined && pd.currentRevision === pd.updatedRevision,
      matchedPods: pd.matchedPods,
      injectedPods: pd.injectedPods,
      updatedPods: pd.updatedPods,
      updatedReadyPods: pd.updatedReadyPods,
      details: (pd.details ?? []).map((detail) => ({
        collaSet: detail.collaSet,
        affectedReplicas: detail.affectedReplicas,
        onUpdatedRevision: detail.pods?.filter((pod) => pod.revision === pd.updatedRevision).length,
        escaped: detail.pods?.filter((pod) => pod.escaped === true).map((pod) => pod.name) ?? [],
      })),
      // OutRanked is the one condition whose healthy status is False.
      ready: (pd.conditions ?? []).filter((entry) => entry.status !== (entry.type === "OutRanked" ? "False" : "True")).map((entry) => `${entry.type}=${entry.status}/${entry.reason ?? ""}`),
    },
  };
}

function expectedEndState(expected: ExpectedEnd): unknown {
  const n = expected.replicas;
  const { decorated, undecorated } = expected.others ?? { decorated: 0, undecorated: 0 };
  return {
    pods: {
      count: n,
      ids: Array.from({ length: n }, (_, id) => id).join(","),
      terminating: [],
      heldByRecreateFinalizer: [],
      offTemplateRevision: [],
      offDecorationRevision: [],
      sidecars: [expected.sidecars.join(",")],
      unavailable: [],
    },
    collaSet: {
      observedCurrentGeneration: true,
      replicas: n,
      readyReplicas: n,
      availableReplicas: n,
      updatedReplicas: n,
      updatedReadyReplicas: n,
      updatedAvailableReplicas: n,
      currentIsUpdated: true,
      ready: "True/Updated",
      replicaFailure: "False/None",
    },
    decoration: {
      observedCurrentGeneration: true,
      currentIsUpdated: true,
      matchedPods: n + decorated + undecorated,
      injectedPods: n + decorated,
      updatedPods: n + decorated,
      updatedReadyPods: n + decorated,
      details: [{ collaSet: "web", affectedReplicas: n, onUpdatedRevision: n, escaped: [] }],
      ready: [],
    },
  };
}

/** Waits until the end state holds exactly; on timeout fails with the difference. Returns how long it took. */
export async function expectConverged(namespace: string, expected: ExpectedEnd, timeoutMs = 90_000): Promise<number> {
  const want = expectedEndState(expected);
  const started = Date.now();
  let last: unknown;
  try {
    await eventually(async () => {
      last = await endState(namespace);
      return JSON.stringify(last) === JSON.stringify(want) ? true : undefined;
    }, timeoutMs, "the end state");
  } catch {
    expect(last, `not converged within ${timeoutMs} ms`).toEqual(want);
  }
  return Date.now() - started;
}

/** Waits until the CollaSet's pods are all available with these sidecars (a starting point, not an end check). */
export async function waitSettled(namespace: string, replicas: number, sidecars: readonly string[]): Promise<Pod[]> {
  return eventually(async () => {
    const pods = await collaSetPods(namespace);
    const settled = pods.length === replicas && pods.every((pod) => isAvailable(pod) && sidecarsOf(pod).join(",") === sidecars.join(","));
    return settled ? pods : undefined;
  }, 90_000, `${replicas} settled pods with ${sidecars.join(",")}`);
}

