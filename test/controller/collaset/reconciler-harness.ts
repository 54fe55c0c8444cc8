// The CollaSet reconciler over real caches and a scripted stand-in for its writes: every write
// that succeeds shows in the caches at once (as a watch would, instantly), and a test can make
// the next write of a kind fail with a given API error. No API server: this is for what the
// reconciler decides and reports, which the e2e tests check against the real one.
import type { LifecycleOptions } from "../../../src/controller/reconciler-controller.ts";
import { ApiException } from "@kubernetes/client-node";
import jsonpatch from "fast-json-patch";
import { pino } from "pino";
import type { CollaSet } from "../../../src/api/collaset.ts";
import type { CachedCollaSet } from "../../../src/controller/collaset/reconciler.ts";
import { CollaSetReconciler } from "../../../src/controller/collaset/reconciler.ts";
import { RolloutReports } from "../../../src/controller/workload-rollout/reports.ts";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { Evictions } from "../../../src/controller/eviction.ts";
import { ContextWrites } from "../../../src/controller/collaset/context-writes.ts";
import type { CachedResourceContext } from "../../../src/controller/collaset/resource-context.ts";
import { ClaimWrites } from "../../../src/controller/collaset/claim-writes.ts";
import { InExcludeWrites } from "../../../src/controller/collaset/in-exclude-writes.ts";
import { FrozenCache } from "../frozen-cache.ts";
import { Expectations } from "../../../src/controller/runtime/expectations.ts";
import { FakeClock } from "../fake-clock.ts";
import { objectKey, type ControllerRevision, type KubeObject, type PersistentVolumeClaim, type Pod } from "../../../src/kube/objects.ts";
import type { JsonPatchOperation } from "../../../src/kube/patch.ts";

export type Write = "pods.create" | "pods.delete" | "pods.evict" | "pods.jsonPatch" | "pods.jsonPatchStatus" | "collaSets.jsonPatchStatus" | "collaSets.jsonPatch" | "claims.create" | "claims.delete" | "claims.jsonPatch" | "contexts.create" | "contexts.replace" | "contexts.delete";

export function apiError(code: number, body: object): ApiException<string> {
  return new ApiException(code, "HTTP error", JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code, ...body }), {});
}

/** What kube-apiserver answers for a JSON Patch whose `test` fails. */
export const patchNotApplied = () => apiError(422, { reason: "Invalid", message: "the server rejected our request due to an error in our request", details: {} });
/** What it answers for a pod create while a webhook with failurePolicy Fail cannot be reached. */
export const webhookUnreachable = () =>
  apiError(500, { reason: "InternalError", message: 'Internal error occurred: failed calling webhook "pods.pod-decorator.kusionstack.io": failed to call webhook: connect: connection refused' });

export class ReconcilerHarness {
  readonly clock = new FakeClock();
  readonly collaSets = new FrozenCache<CachedCollaSet>();
  readonly pods = new FrozenCache<Pod>();
  readonly revisions = new FrozenCache<ControllerRevision>();
  readonly claims = new FrozenCache<PersistentVolumeClaim>();
  readonly contexts = new FrozenCache<CachedResourceContext>();
  readonly events: { type: string; reason: string; message: string }[] = [];
  readonly writes: string[] = [];
  readonly reconciler: CollaSetReconciler;
  readonly #failures = new Map<Write, Error[]>();
  #version = 1;

  /** The namespace's decorations, as the webhook's cache holds them (change the list to change them). */
  readonly decorations: PodDecoration[] = [];
  /** What the reconciler reports of its pods' decorations (the decorations' status reads it). */
  readonly rolloutReports = new RolloutReports();

  /** lifecycle: run the reconciler with PodOpsLifecycle (default off). */
  constructor(options: { lifecycle?: LifecycleOptions } = {}) {
    const stored = <T extends KubeObject>(cache: FrozenCache<T>, object: T): T => {
      const copy = structuredClone(object);
      copy.metadata = { ...copy.metadata, resourceVersion: String(++this.#version) };
      cache.upsert(copy);
      return copy;
    };
    const remove = (namespace: string, name: string) => {
      const pod = this.pods.get(namespace, name)!;
      // Held by finalizers: marked for deletion; otherwise gone.
      if ((pod.metadata?.finalizers ?? []).length > 0) stored(this.pods, { ...pod, metadata: { ...pod.metadata, deletionTimestamp: new Date(this.clock.now()).toISOString() } });
      else this.pods.delete(objectKey(pod));
    };
    // A pod being deleted is gone once its last finalizer is.
    const settled = (pod: Pod): Pod => {
      if (pod.metadata?.deletionTimestamp != null && (pod.metadata.finalizers ?? []).length === 0) this.pods.delete(objectKey(pod));
      return pod;
    };
    const expectations = new Expectations({ clock: this.clock });
    const events = { record: (_object: KubeObject, type: string, reason: string, message: string) => void this.events.push({ type, reason, message }) };
    this.reconciler = new CollaSetReconciler({
      collaSets: this.collaSets,
      pods: this.pods,
      revisions: this.revisions,
      decorations: { decorations: (namespace) => this.decorations.filter((decoration) => decoration.metadata.namespace === namespace), revisionData: () => undefined },
      rolloutReports: this.rolloutReports,
      client: {
        collaSets: {
          jsonPatchStatus: (namespace, name, operations) =>
            this.#write("collaSets.jsonPatchStatus", name, () => stored(this.collaSets, applyOperations(this.collaSets.get(namespace, name)!, operations))),
        },
        pods: {
          create: (pod) =>
            this.#write("pods.create", pod.metadata?.generateName ?? "", () => {
              // A name given is kept (PersistentSequence), and taken only once, as the API server answers.
              const name = pod.metadata?.name ?? `${pod.metadata?.generateName ?? ""}${this.#version + 1}`;
              if (this.pods.get(pod.metadata?.namespace, name) !== undefined) throw apiError(409, { reason: "AlreadyExists", message: `pods "${name}" already exists` });
              return stored(this.pods, { ...pod, metadata: { ...pod.metadata, name, uid: `uid-${name}`, creationTimestamp: new Date(this.clock.now()).toISOString() } });
            }),
          delete: (namespace, name) => this.#write("pods.delete", name, () => remove(namespace, name)),
          jsonPatch: (namespace, name, operations) => this.#write("pods.jsonPatch", name, () => settled(stored(this.pods, applyOperations(this.pods.get(namespace, name)!, operations)))),
          jsonPatchStatus: (namespace, name, operations) => this.#write("pods.jsonPatchStatus", name, () => stored(this.pods, applyOperations(this.pods.get(namespace, name)!, operations))),
        },
        controllerRevisions: {
          create: (revision) => Promise.resolve(stored(this.revisions, revision)),
          jsonPatch: (namespace, name, operations) => Promise.resolve(stored(this.revisions, applyOperations(this.revisions.get(namespace, name)!, operations))),
          delete: (namespace, name) => {
            this.revisions.delete(`${namespace}/${name}`);
            return Promise.resolve();
          },
        },
      },
      dryRunCreate: () => Promise.resolve({ valid: true }),
      events,
      expectations,
      clock: this.clock,
      logger: pino({ level: "silent" }),
      evictions: new Evictions({ clock: this.clock, client: { evict: (namespace, name) => this.#write("pods.evict", name, () => remove(namespace, name)) } }),
      inExclude: new InExcludeWrites({
        pods: this.pods,
        claims: this.claims,
        client: {
          pods: { jsonPatch: (namespace, name, operations) => this.#write("pods.jsonPatch", name, () => stored(this.pods, applyOperations(this.pods.get(namespace, name)!, operations))) },
          claims: { jsonPatch: (namespace, name, operations) => this.#write("claims.jsonPatch", name, () => stored(this.claims, applyOperations(this.claims.get(namespace, name)!, operations))) },
        },
        expectations,
        events,
      }),
      contexts: new ContextWrites({
        contexts: this.contexts,
        expectations,
        client: {
          create: (context) => this.#write("contexts.create", context.metadata?.name ?? "", () => stored(this.contexts, context as CachedResourceContext)),
          replace: (context) => this.#write("contexts.replace", context.metadata?.name ?? "", () => stored(this.contexts, context as CachedResourceContext)),
          delete: (namespace, name) => this.#write("contexts.delete", name, () => void this.contexts.delete(`${namespace}/${name}`)),
        },
      }),
      claims: new ClaimWrites({
        claims: this.claims,
        client: {
          claims: {
            create: (claim) =>
              this.#write("claims.create", claim.metadata?.generateName ?? "", () => {
                const name = `${claim.metadata?.generateName ?? ""}${this.#version + 1}`;
                return stored(this.claims, { ...claim, metadata: { ...claim.metadata, name, uid: `uid-${name}`, creationTimestamp: new Date(this.clock.now()).toISOString() } });
              }),
            // Claims are deleted at once here; kube-controller-manager's pvc-protection is the e2e tests' business.
            delete: (namespace, name) => this.#write("claims.delete", name, () => void this.claims.delete(`${namespace}/${name}`)),
            jsonPatch: (namespace, name, operations) => this.#write("claims.jsonPatch", name, () => stored(this.claims, applyOperations(this.claims.get(namespace, name)!, operations))),
          },
          collaSets: {
            jsonPatch: (namespace, name, operations) => this.#write("collaSets.jsonPatch", name, () => stored(this.collaSets, applyOperations(this.collaSets.get(namespace, name)!, operations))),
          },
        },
        expectations,
        events,
      }),
      ...(options.lifecycle === undefined ? {} : { lifecycle: options.lifecycle }),
    });
  }

  /** The next write of this kind fails with error (each call queues one failure). */
  failNext(write: Write, error: Error): void {
    this.#failures.set(write, [...(this.#failures.get(write) ?? []), error]);
  }

  applyCollaSet(collaSet: CollaSet): CachedCollaSet {
    const previous = this.collaSets.get(collaSet.metadata.namespace, collaSet.metadata.name ?? "");
    const generation = (previous?.metadata.generation ?? 0) + 1;
    const object = structuredClone({ ...collaSet, metadata: { ...collaSet.metadata, uid: "uid-collaset", generation }, status: previous?.status }) as CachedCollaSet;
    object.metadata.resourceVersion = String(++this.#version);
    this.collaSets.upsert(object);
    return object;
  }

  /** Syncs (and plays the kubelet) until the CollaSet has nothing left to do; fails after `maxRounds` syncs that still write. */
  async settle(maxRounds: number): Promise<void> {
    for (let round = 0; round < maxRounds; round++) {
      const before = this.writes.length;
      await this.clock.advance(1_000);
      await this.reconciler.reconcile("ns/web");
      this.runPods();
      if (this.writes.length === before) return;
    }
    throw new Error(`still writing after ${maxRounds} syncs: ${this.writes.slice(-5).join(", ")}`);
  }

  /**
   * Plays the kubelet: every container ready and running the image its spec names; the pod
   * Ready when every readiness gate's condition is True; conditions it does not own kept.
   */
  runPods(): void {
    for (const pod of this.pods.list()) {
      const kept = (pod.status?.conditions ?? []).filter((condition) => condition.type !== "Ready");
      const gatesTrue = (pod.spec?.readinessGates ?? []).every((gate) => kept.some((condition) => condition.type === gate.conditionType && condition.status === "True"));
      const status = {
        phase: "Running",
        conditions: [{ type: "Ready", status: gatesTrue ? "True" : "False" }, ...kept],
        containerStatuses: (pod.spec?.containers ?? []).map((container) => ({ name: container.name, image: container.image ?? "", imageID: "", ready: true, restartCount: 0 })),
      };
      this.pods.upsert({ ...pod, metadata: { ...pod.metadata, resourceVersion: String(++this.#version) }, status });
    }
  }

  /** The CollaSet's status as last written. */
  status(namespace: string, name: string): CachedCollaSet["status"] {
    return this.collaSets.get(namespace, name)?.status;
  }

  async #write<T>(write: Write, target: string, perform: () => T): Promise<T> {
    const failure = this.#failures.get(write)?.shift();
    this.writes.push(`${write} ${target}${failure === undefined ? "" : " (failed)"}`);
    if (failure !== undefined) throw failure;
    return Promise.resolve(perform());
  }
}

/** A JSON Patch as the API server applies it: all or nothing, a failed `test` answered as kube-apiserver does. */
export function applyOperations<T extends object>(object: T, operations: readonly JsonPatchOperation[]): T {
  try {
    return jsonpatch.applyPatch(structuredClone(object), operations as jsonpatch.Operation[], true, false).newDocument;
  } catch {
    throw patchNotApplied();
  }
}

/** The CollaSet's container mounts `data`, a 1Gi ReadWriteOnce claim template. */
export function withClaimTemplate(cls: CollaSet, storage = "1Gi"): CollaSet {
  cls.spec.template.spec!.containers[0]!.volumeMounts = [{ name: "data", mountPath: "/data" }];
  cls.spec.volumeClaimTemplates = [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage } } } }];
  return cls;
}

export function collaSet(options: { replicas: number; image?: string; env?: string; maxUnavailable?: number; paused?: boolean }): CollaSet {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "CollaSet",
    metadata: { name: "web", namespace: "ns" },
    spec: {
      replicas: options.replicas,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "app", image: options.image ?? "nginx:1.27", env: [{ name: "MODE", value: options.env ?? "blue" }] }] },
      },
      updateStrategy: { rollingUpdate: { maxUnavailable: options.maxUnavailable ?? 1 } },
      ...(options.paused === undefined ? {} : { paused: options.paused }),
    },
  };
}
