// The rollout to pods of other owners over frozen caches and a scripted stand-in for its writes
// (each successful write shows in the pod cache at once); what it writes, reports and says.
import { ApiException } from "@kubernetes/client-node";
import jsonpatch from "fast-json-patch";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import type { Pod as EnginePod } from "../../../src/api/pod.ts";
import { Evictions } from "../../../src/controller/eviction.ts";
import { Expectations } from "../../../src/controller/runtime/expectations.ts";
import { WorkloadRolloutReconciler } from "../../../src/controller/workload-rollout/reconciler.ts";
import { RolloutReports } from "../../../src/controller/workload-rollout/reports.ts";
import { workloadKeyOfPod } from "../../../src/controller/workload-rollout/workloads.ts";
import { renderPod } from "../../../src/decoration/render.ts";
import { specRevision } from "../../../src/revision/revision-data.ts";
import { objectKey, type KubeObject, type Namespace, type Pod } from "../../../src/kube/objects.ts";
import { admissionScope } from "../../../src/decoration/admission-scope.ts";
import type { JsonPatchOperation } from "../../../src/kube/patch.ts";
import { FakeClock } from "../fake-clock.ts";
import { FrozenCache } from "../frozen-cache.ts";

type CachedDecoration = PodDecoration & KubeObject;

function decoration(image: string, env: { name: string; value: string }[] = [], strategy: PodDecoration["spec"]["updateStrategy"] = {}): CachedDecoration {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name: "logging", namespace: "shop", uid: "pd-uid", generation: 1, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: { selector: { matchLabels: { app: "web" } }, updateStrategy: strategy, template: { containers: [{ name: "shipper", image, env }] } },
  };
}

class World {
  readonly clock = new FakeClock();
  readonly pods = new FrozenCache<Pod>();
  readonly decorations = new FrozenCache<CachedDecoration>();
  readonly namespaces = new FrozenCache<Namespace>();
  readonly revisions = new Map<string, unknown>();
  readonly events: { type: string; reason: string; message: string }[] = [];
  readonly writes: string[] = [];
  readonly changed: string[] = [];
  readonly reports = new RolloutReports();
  /** Answers for the next evictions, in order (absent: the pod goes). */
  readonly evictionAnswers: Error[] = [];
  readonly reconciler: WorkloadRolloutReconciler;
  #version = 10;

  constructor() {
    const patch = (namespace: string, name: string, operations: JsonPatchOperation[]) => {
      this.writes.push(`patch ${name}`);
      const pod = jsonpatch.applyPatch(structuredClone(this.pods.get(namespace, name)!), operations, true, false).newDocument;
      pod.metadata = { ...pod.metadata, resourceVersion: String(++this.#version) };
      this.pods.upsert(pod);
      return Promise.resolve(pod);
    };
    this.namespaces.upsert({ metadata: { name: "shop", labels: { "kubernetes.io/metadata.name": "shop" } } });
    this.reconciler = new WorkloadRolloutReconciler({
      webhookScope: { scope: admissionScope({}), namespaces: this.namespaces },
      pods: this.pods,
      decorations: this.decorations,
      revisions: { decorations: (namespace) => this.decorations.list(namespace), revisionData: (_namespace, name) => this.revisions.get(name) },
      client: { pods: { jsonPatch: patch, jsonPatchStatus: patch } },
      evictions: new Evictions({
        clock: this.clock,
        client: {
          evict: (namespace, name) => {
            this.writes.push(`evict ${name}`);
            const answer = this.evictionAnswers.shift();
            if (answer !== undefined) return Promise.reject(answer);
            this.pods.delete(`${namespace}/${name}`);
            return Promise.resolve();
          },
        },
      }),
      events: { record: (_object, type, reason, message) => void this.events.push({ type, reason, message }) },
      expectations: new Expectations({ clock: this.clock }),
      reports: this.reports,
      reportsChanged: (_namespace, names) => void this.changed.push(...names),
      clock: this.clock,
      logger: pino({ level: "silent" }),
    });
  }

  /** Stores the decoration and its revision, as the controller would. */
  decorate(pd: CachedDecoration): string {
    const revision = specRevision(pd);
    this.revisions.set(revision.name, revision.data);
    this.decorations.upsert(pd);
    return revision.name;
  }

  /** A Deployment pod the webhook rendered the decoration's revision into, running. */
  addPod(name: string, pd: CachedDecoration): void {
    const revision = specRevision(pd);
    const base: EnginePod = {
      metadata: { name, namespace: "shop", uid: `uid-${name}`, resourceVersion: "1", labels: { app: "web", "pod-template-hash": "5d8f" }, ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-5d8f", uid: "rs", controller: true }] },
      spec: { containers: [{ name: "app", image: "app:1" }] },
    };
    const pod = renderPod(base, [{ name: "logging", namespace: "shop", revisionName: revision.name, ...revision.data }]).pod as unknown as Pod;
    this.pods.upsert({ ...pod, status: World.running(pod) });
  }

  /** The kubelet's part: every pod runs what its spec names, ready. */
  kubeletSyncs(): void {
    for (const pod of this.pods.list()) this.pods.upsert({ ...pod, metadata: { ...pod.metadata, resourceVersion: String(++this.#version) }, status: World.running(pod) });
  }

  static running(pod: Pod): Pod["status"] {
    return {
      phase: "Running",
      conditions: [{ type: "Ready", status: "True" }],
      containerStatuses: (pod.spec?.containers ?? []).map((container) => ({ name: container.name, image: container.image ?? "", imageID: "", ready: true, restartCount: 0 })),
    };
  }

  reconcile() {
    return this.reconciler.reconcile(workloadKeyOfPod(this.pods.list()[0]!)!);
  }

  images(): string[] {
    return this.pods.list().map((pod) => `${pod.metadata?.name ?? ""}:${pod.spec?.containers.find((container) => container.name === "shipper")?.image ?? ""}`).sort();
  }
}

describe("WorkloadRolloutReconciler", () => {
  it("moves a Deployment's pods in place, one unavailable at a time, and reports them until they are on the updated revision", async () => {
    const world = new World();
    const old = decoration("shipper:1");
    world.decorate(old);
    for (const name of ["web-a", "web-b", "web-c"]) world.addPod(name, old);
    world.decorate({ ...decoration("shipper:2"), metadata: { ...old.metadata, generation: 2 } });

    await world.reconcile();
    expect(world.writes).toEqual(["patch web-a"]);
    expect(world.images()).toEqual(["web-a:shipper:2", "web-b:shipper:1", "web-c:shipper:1"]);
    expect(world.events).toContainEqual({ type: "Normal", reason: "UpdatedInPlace", message: "updated pod web-a in place" });
    expect(world.changed).toContain("logging");
    expect(world.reports.get("shop/Deployment/web/", "web-b")).toEqual({ moving: ["logging"] });

    // Until the kubelet runs the new image, web-a is unavailable and holds the budget.
    await world.reconcile();
    expect(world.writes).toEqual(["patch web-a"]);
    // The patch showed in the cache: web-a records the updated revision and moves no more.
    expect(world.reports.get("shop/Deployment/web/", "web-a")).toBeUndefined();
    world.kubeletSyncs();
    await world.reconcile();
    world.kubeletSyncs();
    await world.reconcile();
    expect(world.images()).toEqual(["web-a:shipper:2", "web-b:shipper:2", "web-c:shipper:2"]);
    expect(world.pods.list().map((pod) => pod.metadata?.uid).sort()).toEqual(["uid-web-a", "uid-web-b", "uid-web-c"]);
    world.kubeletSyncs();
    await world.reconcile();
    expect(world.writes).toHaveLength(3);
    expect(world.reports.size).toBe(0);
  });

  it("evicts when the decoration asks, reporting a refusal by a disruption budget without forcing it", async () => {
    const world = new World();
    const old = decoration("shipper:1");
    world.decorate(old);
    world.addPod("web-a", old);
    world.decorate({ ...decoration("shipper:1", [{ name: "LEVEL", value: "debug" }], { recreatePolicy: "Evict" }), metadata: { ...old.metadata, generation: 2 } });
    world.evictionAnswers.push(new ApiException(429, "Too Many Requests", JSON.stringify({ kind: "Status", code: 429, message: "Cannot evict pod as it would violate the pod's disruption budget." }), {}));

    const result = await world.reconcile();
    expect(world.writes).toEqual(["evict web-a"]);
    expect(world.pods.list()).toHaveLength(1);
    expect(world.reports.get("shop/Deployment/web/", "web-a")?.blocked).toMatchObject({ reason: "EvictionRefused", message: expect.stringContaining("disruption budget") as string });
    expect(world.events.map((event) => event.reason)).toEqual(["EvictionRefused"]);
    expect(result?.requeueAfter).toBeGreaterThan(0);

    await world.clock.advance(result!.requeueAfter!);
    await world.reconcile().catch(() => undefined);
    expect(world.writes).toEqual(["evict web-a", "evict web-a"]);
    expect(world.pods.list()).toHaveLength(0);
    expect(world.events.map((event) => event.reason)).toEqual(["EvictionRefused", "Evicted"]);
  });

  it("says once that a pod needs recreation when the decoration does not ask for eviction", async () => {
    const world = new World();
    const old = decoration("shipper:1");
    world.decorate(old);
    world.addPod("web-a", old);
    world.decorate({ ...decoration("shipper:1", [{ name: "LEVEL", value: "debug" }]), metadata: { ...old.metadata, generation: 2 } });
    await world.reconcile();
    await world.reconcile();
    expect(world.writes).toEqual([]);
    expect(world.reports.get("shop/Deployment/web/", "web-a")?.blocked?.reason).toBe("NeedsRecreation");
    expect(world.events.filter((event) => event.reason === "UpdateBlocked")).toHaveLength(1);
    expect(objectKey(world.pods.list()[0]!)).toBe("shop/web-a");
  });
});
