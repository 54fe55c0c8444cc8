// A ClusterPodDecoration's status at fleet scale (issue 38, DESIGN §9 and §12), on the real code
// path: the PodDecoration reconciler over the cluster kind (decoration-kinds.ts), as
// cluster-controller.ts wires it, reading the pod cache it is given and the ClusterDecorations
// index over a namespace cache; its writes go to clients that record them instead of an API
// server, and are brought back into the caches as their watch events would be. What it
// measures: the CPU of one reconcile after the decoration's spec changed (a new object, the next
// generation: nothing derived from the old object serves it), the part of it that derives the
// status (the views of the namespaces it selects, the pods recording it, fleetStatus, the dirty
// check), the status write as the client is sent it, and the CPU of mapping a pod event to the
// cluster decorations to reconcile (clusterDecorationsOfPod).
import { pino } from "pino";
import type { ClusterPodDecoration, ClusterPodDecorationStatus } from "../../src/api/cluster-poddecoration.ts";
import type { Condition } from "../../src/api/kubernetes.ts";
import { sameJson } from "../../src/api/json.ts";
import { ClusterDecorations, type CachedClusterDecoration } from "../../src/controller/cluster-decorations.ts";
import { clusterDecorationsOfPod } from "../../src/controller/poddecoration/cluster-controller.ts";
import { clusterPodDecorationKind, type CachedDecoration, type DecorationClient } from "../../src/controller/poddecoration/decoration-kinds.ts";
import { fleetStatus, PodDecorationReconciler, storedTemplates } from "../../src/controller/poddecoration/reconciler.ts";
import { RolloutReports } from "../../src/controller/workload-rollout/reports.ts";
import { Cache, type Lister } from "../../src/controller/runtime/cache.ts";
import type { Clock } from "../../src/controller/runtime/clock.ts";
import { deepFreeze } from "../../src/controller/runtime/deep-freeze.ts";
import { admissionScope } from "../../src/decoration/admission-scope.ts";
import type { JsonPatchOperation } from "../../src/kube/patch.ts";
import type { ControllerRevision, KubeObject, Namespace, Pod } from "../../src/kube/objects.ts";

export const RELEASE_NAMESPACE = "pod-decorator-system";

const TEMPLATE_VALID: Omit<Condition, "lastTransitionTime" | "observedGeneration"> = {
  type: "TemplateValid", status: "True", reason: "DryRunAccepted", message: "a pod rendered with the updated revision passes a server-side dry run",
};

function cpuMs(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

async function cpuMsOf(work: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

export interface FleetReconcile {
  /** CPU ms of the reconcile after a spec change, each run with the next generation. */
  reconcileMs: number[];
  /** CPU ms of its status derivation alone (views, pods recording it, fleetStatus, dirty check), the same way. */
  statusMs: number[];
  /** Bytes of each status write's request body (the JSON Patch the status subresource is sent). */
  writeBytes: number[];
  /** The last status written. */
  status: ClusterPodDecorationStatus;
  /** CPU µs per pod event mapped to the cluster decorations to reconcile, and how many each maps to. */
  podEventMappingUs: number;
  decorationsPerPodEvent: number;
}

/**
 * Reconciles `cpd` over `pods` and `namespaces`: first as it was one spec change ago
 * (`previous`: its revision is stored, as pods still on it record it), then as it is, then
 * `runs` times as the watch brings it after a spec change.
 */
export async function fleetReconcile(options: {
  pods: Lister<Pod>;
  namespaces: readonly Namespace[];
  cpd: ClusterPodDecoration;
  previous: ClusterPodDecoration;
  runs: number;
}): Promise<FleetReconcile> {
  const clusterDecorations = new Cache<CachedClusterDecoration>();
  const namespaces = new Cache<Namespace>();
  for (const namespace of options.namespaces) namespaces.upsert(deepFreeze(structuredClone(namespace)));
  const revisions = new Cache<ControllerRevision>();
  const cluster = new ClusterDecorations({ decorations: clusterDecorations, namespaces, scope: admissionScope({ ownNamespace: RELEASE_NAMESPACE }) });
  let resourceVersion = 1_000;
  const store = (cpd: CachedClusterDecoration) => {
    clusterDecorations.upsert(deepFreeze({ ...cpd, metadata: { ...cpd.metadata, resourceVersion: String(++resourceVersion) } }));
    cluster.changed();
  };
  const writeBytes: number[] = [];
  let written: { name: string; status: ClusterPodDecorationStatus } | undefined;
  // What the API server is sent, and the objects its answers would bring back through the watch.
  const decorationClient: DecorationClient = {
    jsonPatch: (_namespace, name) => Promise.reject(new Error(`unexpected patch of ${name}: the decoration has its finalizer`)),
    jsonPatchStatus: (_namespace, name, operations: readonly JsonPatchOperation[]) => {
      writeBytes.push(Buffer.byteLength(JSON.stringify(operations)));
      const status = (operations.find((operation) => operation.op === "add" && operation.path === "/status") as { value: ClusterPodDecorationStatus } | undefined)?.value;
      if (status !== undefined) written = { name, status };
      return Promise.resolve(cluster.named(name) as unknown as CachedDecoration);
    },
  };
  const revisionClient = {
    create: (revision: ControllerRevision) => {
      const created = deepFreeze({ ...structuredClone(revision), metadata: { ...structuredClone(revision.metadata), uid: `revision-${revisions.size}`, resourceVersion: String(++resourceVersion) } });
      revisions.upsert(created);
      return Promise.resolve(created);
    },
    jsonPatch: (namespace: string, name: string) => Promise.reject(new Error(`unexpected patch of ControllerRevision ${namespace}/${name}`)),
    delete: (namespace: string, name: string) => {
      revisions.delete(`${namespace}/${name}`);
      return Promise.resolve();
    },
  };
  const reports = new RolloutReports();
  // As cluster-controller.ts gives them: a namespace's own (none here) and the cluster ones selecting it.
  const podDecorations = new Cache<CachedDecoration>();
  const namespaceDecorations = (namespace: string) => [...podDecorations.list(namespace), ...cluster.forNamespace(namespace)];
  const kind = clusterPodDecorationKind(cluster, namespaceDecorations, decorationClient, RELEASE_NAMESPACE);
  let now = Date.UTC(2026, 3, 1);
  const clock: Clock = { now: () => (now += 1000), setTimeout: () => { throw new Error("no timers in the bench"); }, sleep: () => Promise.resolve() };
  const reconciler = new PodDecorationReconciler({
    decorations: podDecorations,
    revisions,
    pods: options.pods,
    collaSets: new Cache<KubeObject>(),
    client: { podDecorations: decorationClient, controllerRevisions: revisionClient },
    kind,
    namespaceLabels: (namespace) => cluster.namespaceLabels(namespace),
    dryRunCreate: (pod) => Promise.resolve({ valid: true, stored: pod }),
    rolloutReports: reports,
    events: { record: () => undefined },
    clock,
    logger: pino({ level: "silent" }),
  });
  const name = options.cpd.metadata.name ?? "";

  /** One reconcile, its CPU ms; the status it wrote is stored as its watch event would bring it. */
  const reconcile = async (): Promise<number> => {
    written = undefined;
    const ms = await cpuMsOf(() => reconciler.reconcile(name));
    const write = written as { status: ClusterPodDecorationStatus } | undefined;
    if (write !== undefined) store({ ...(cluster.named(name) as CachedClusterDecoration), status: write.status });
    return ms;
  };

  // Its history: the previous spec's revision stored, then the current one's.
  store(structuredClone(options.previous) as CachedClusterDecoration);
  await reconcile();
  store({ ...(structuredClone(options.cpd) as CachedClusterDecoration), status: cluster.named(name)?.status });
  await reconcile();

  const updatedRevision = (): string | undefined => cluster.named(name)?.status?.updatedRevision;
  const reconcileMs: number[] = [];
  const statusMs: number[] = [];
  for (let run = 0; run < options.runs; run++) {
    const changed = () => {
      const stored = cluster.named(name)!;
      store({ ...stored, metadata: { ...stored.metadata, generation: (stored.metadata.generation ?? 0) + 1 } });
      return cluster.named(name)! as unknown as CachedDecoration;
    };
    // The status derivation alone, as #writeStatus does it, then the whole reconcile.
    const decoration = changed();
    const stamp = new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z");
    statusMs.push(cpuMs(() => {
      const status = fleetStatus(options.pods, decoration, kind.views(decoration), kind.recordingFacts(options.pods, decoration), updatedRevision(), TEMPLATE_VALID, stamp, reports, undefined, storedTemplates(undefined, { revisions, namespace: RELEASE_NAMESPACE }));
      void sameJson(status, decoration.status ?? {});
    }));
    changed();
    reconcileMs.push(await reconcile());
  }

  const sample = options.pods.list().filter((_, index) => index % Math.max(1, Math.floor(options.pods.size / 10_000)) === 0).slice(0, 10_000);
  let mapped = 0;
  const mappingMs = cpuMs(() => {
    for (const pod of sample) mapped += clusterDecorationsOfPod(cluster, [pod]).size;
  });
  return {
    reconcileMs,
    statusMs,
    writeBytes,
    status: cluster.named(name)?.status ?? {},
    podEventMappingUs: (mappingMs * 1000) / sample.length,
    decorationsPerPodEvent: mapped / sample.length,
  };
}
