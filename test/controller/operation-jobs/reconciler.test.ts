// The OperationJob reconciler over real caches: kuperator's finalizer on the job, the to-replace
// label and replace-protection finalizer on a CollaSet's pod, refusal of another owner's pod,
// cancel by deleting the job, and the job deleted once its time to live is over.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { CollaSet } from "../../../src/api/collaset.ts";
import type { OperationJob } from "../../../src/api/operationjob.ts";
import { REPLACE_PROTECTION_FINALIZER } from "../../../src/controller/operation-jobs/plan.ts";
import { OperationJobReconciler, type CachedOperationJob } from "../../../src/controller/operation-jobs/reconciler.ts";
import { Expectations } from "../../../src/controller/runtime/expectations.ts";
import { PROTECT_FINALIZER } from "../../../src/controller/transition-rules/reconciler.ts";
import type { KubeObject, Pod } from "../../../src/kube/objects.ts";
import { applyOperations } from "../collaset/reconciler-harness.ts";
import { FakeClock } from "../fake-clock.ts";
import { FrozenCache } from "../frozen-cache.ts";

class Harness {
  readonly clock = new FakeClock();
  readonly jobs = new FrozenCache<CachedOperationJob>();
  readonly pods = new FrozenCache<Pod>();
  readonly collaSets = new FrozenCache<CollaSet & KubeObject>();
  readonly deleted: string[] = [];
  readonly events: string[] = [];
  readonly reconciler: OperationJobReconciler;
  #version = 10;

  constructor() {
    const store = <T extends KubeObject>(cache: FrozenCache<T>, object: T): T => {
      cache.upsert({ ...object, metadata: { ...object.metadata, resourceVersion: String(++this.#version) } });
      return cache.get(object.metadata?.namespace, object.metadata?.name ?? "")!;
    };
    this.reconciler = new OperationJobReconciler({
      jobs: this.jobs,
      pods: this.pods,
      collaSets: this.collaSets,
      client: {
        jobs: {
          jsonPatch: (namespace, name, operations) => Promise.resolve(store(this.jobs, applyOperations(this.jobs.get(namespace, name)!, operations))),
          jsonPatchStatus: (namespace, name, operations) => Promise.resolve(store(this.jobs, applyOperations(this.jobs.get(namespace, name)!, operations))),
          delete: (namespace, name) => {
            this.deleted.push(name);
            this.jobs.delete(`${namespace}/${name}`);
            return Promise.resolve();
          },
        },
        pods: { jsonPatch: (namespace, name, operations) => Promise.resolve(store(this.pods, applyOperations(this.pods.get(namespace, name)!, operations))) },
      },
      events: { record: (_object, _type, reason, message) => void this.events.push(`${reason}: ${message}`) },
      expectations: new Expectations({ clock: this.clock }),
      clock: this.clock,
      logger: pino({ level: "silent" }),
    });
    this.collaSets.upsert({ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", metadata: { name: "web", namespace: "ns", uid: "uid-web" }, spec: { selector: { matchLabels: { app: "web" } }, template: {} } });
    for (const [name, owner] of [["web-0", { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: "uid-web" }], ["deploy-0", { apiVersion: "apps/v1", kind: "ReplicaSet", name: "deploy-5d", uid: "uid-rs" }]] as const) {
      this.pods.upsert({ metadata: { name, namespace: "ns", resourceVersion: "1", labels: { app: "web" }, ownerReferences: [{ ...owner, controller: true }] } });
    }
  }

  job(spec: Partial<OperationJob["spec"]>): void {
    const value: OperationJob = { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "OperationJob", metadata: { name: "swap", namespace: "ns", uid: "uid-swap", generation: 1, resourceVersion: "1" }, spec: { action: "Replace", targets: [{ name: "web-0" }], ...spec } };
    this.jobs.upsert(value as CachedOperationJob);
  }

  get stored(): CachedOperationJob | undefined {
    return this.jobs.get("ns", "swap");
  }

  async settle(): Promise<void> {
    for (let round = 0; round < 5; round++) await this.reconciler.reconcile("ns/swap");
  }
}

describe("OperationJobReconciler", () => {
  it("holds the job with kuperator's finalizer and asks the CollaSet to replace its pod: the to-replace label and the replace-protection finalizer", async () => {
    const harness = new Harness();
    harness.job({});
    await harness.settle();
    expect(harness.stored?.metadata.finalizers).toEqual([PROTECT_FINALIZER]);
    const target = harness.pods.get("ns", "web-0")!;
    expect(target.metadata?.labels?.["collaset.kusionstack.io/to-replace"]).toBe("true");
    expect(target.metadata?.finalizers).toEqual([REPLACE_PROTECTION_FINALIZER]);
    expect(harness.stored?.status).toMatchObject({ progress: "Processing", totalPodCount: 1, targetDetails: [{ name: "web-0", progress: "Processing" }] });
    expect(harness.events).toEqual(["ReplaceOriginPod: Succeeded to trigger originPod ns/web-0 to replace"]);
  });

  it("refuses a pod of another owner with the reason on the target, and leaves the pod alone", async () => {
    const harness = new Harness();
    harness.job({ targets: [{ name: "deploy-0" }] });
    await harness.settle();
    expect(harness.pods.get("ns", "deploy-0")?.metadata?.labels?.["collaset.kusionstack.io/to-replace"]).toBeUndefined();
    expect(harness.stored?.status).toMatchObject({ progress: "Failed", failedPodCount: 1, targetDetails: [{ name: "deploy-0", progress: "Failed", error: { reason: "ReplaceNotSupported", message: expect.stringContaining("controlled by ReplicaSet deploy-5d") as unknown } }] });
  });

  it("cancels when the job is deleted: the pod loses the label and the finalizer, then the job its own", async () => {
    const harness = new Harness();
    harness.job({});
    await harness.settle();
    harness.jobs.upsert({ ...harness.stored!, metadata: { ...harness.stored!.metadata, deletionTimestamp: "2026-01-01T00:00:00Z", resourceVersion: "99" } });
    await harness.settle();
    const target = harness.pods.get("ns", "web-0")!;
    expect(target.metadata?.labels?.["collaset.kusionstack.io/to-replace"]).toBeUndefined();
    expect(target.metadata?.finalizers).toEqual([]);
    expect(harness.stored?.metadata.finalizers).toEqual([]);
  });

  it("deletes the job TTLSecondsAfterFinished after it finished", async () => {
    const harness = new Harness();
    harness.job({ targets: [{ name: "ghost" }], TTLSecondsAfterFinished: 10 });
    await harness.settle();
    expect(harness.stored?.status?.progress).toBe("Failed");
    await harness.clock.advance(9_000);
    await harness.settle();
    expect(harness.deleted).toEqual([]);
    await harness.clock.advance(1_000);
    await harness.settle();
    expect(harness.deleted).toEqual(["swap"]);
  });
});
