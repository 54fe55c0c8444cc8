// An OperationJob's steps as kuperator's controller takes them (Replace): partition, labelling,
// progress from the origin and its new pod, deadline, time to live, release; and pods of owners
// that cannot replace them refused with the reason.
import { describe, expect, it } from "vitest";
import { defaultOperationJob, type OperationJob, type OperationJobStatus } from "../../../src/api/operationjob.ts";
import { planJob, REPLACE_PROTECTION_FINALIZER, type JobPlan } from "../../../src/controller/operation-jobs/plan.ts";
import type { Pod } from "../../../src/kube/objects.ts";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (offsetSeconds: number) => new Date(NOW + offsetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

function pod(name: string, options: { labels?: Record<string, string>; owner?: string; terminating?: boolean; finalizers?: string[] } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: "shop",
      resourceVersion: "1",
      labels: options.labels ?? {},
      ownerReferences: [{ apiVersion: options.owner === "Deployment" ? "apps/v1" : "apps.kusionstack.io/v1alpha1", kind: options.owner ?? "CollaSet", name: "web", uid: "uid-web", controller: true }],
      ...(options.terminating === true ? { deletionTimestamp: at(0) } : {}),
      ...(options.finalizers === undefined ? {} : { finalizers: options.finalizers }),
    },
  };
}

function job(spec: Partial<OperationJob["spec"]>, status?: OperationJobStatus): OperationJob {
  return defaultOperationJob({ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "OperationJob", metadata: { name: "swap", namespace: "shop", generation: 1 }, spec: { action: "Replace", targets: [{ name: "a" }, { name: "b" }], ...spec }, ...(status === undefined ? {} : { status }) });
}

function plan(value: OperationJob, pods: Pod[], nowMs = NOW): JobPlan {
  const byName = new Map(pods.map((item) => [item.metadata!.name!, item]));
  return planJob({
    job: value,
    nowMs,
    pod: (name) => byName.get(name),
    newPodsOf: (origin) => pods.filter((item) => item.metadata?.labels?.["collaset.kusionstack.io/replace-pair-origin-name"] === origin),
    replaceable: (target) => (target.metadata?.ownerReferences?.[0]?.kind === "CollaSet" ? { ok: true } : { ok: false, reason: `pod ${target.metadata?.name ?? ""} is controlled by Deployment web, which does not replace it` }),
  });
}

const writes = (result: JobPlan) => result.writes.map((write) => `${write.kind} ${write.pod.metadata?.name ?? ""}`);

describe("planJob (Replace)", () => {
  it("with partition 0 starts nothing: Pending; raised to 1, labels the first target for its CollaSet's replace", () => {
    const idle = plan(job({ partition: 0 }), [pod("a"), pod("b")]);
    expect(writes(idle)).toEqual([]);
    expect(idle.status).toMatchObject({ progress: "Pending", totalPodCount: 2, targetDetails: [{ name: "a", progress: "Pending" }, { name: "b", progress: "Pending" }] });
    const first = plan(job({ partition: 1 }, idle.status), [pod("a"), pod("b")]);
    expect(writes(first)).toEqual(["mark-replace a"]);
    expect(first.status).toMatchObject({ progress: "Processing", startTime: at(0), targetDetails: [{ name: "a", progress: "Processing", startTime: at(0) }, { name: "b", progress: "Pending" }] });
    expect(first.events).toEqual([{ type: "Normal", reason: "ReplaceOriginPod", message: "Succeeded to trigger originPod shop/a to replace" }]);
  });

  it("records the new pod, unprotects the origin once it goes, and succeeds when it is gone and the new pod serves", () => {
    const started: OperationJobStatus = { progress: "Processing", startTime: at(0), targetDetails: [{ name: "a", progress: "Processing", startTime: at(0) }] };
    const replacing = [pod("a", { labels: { "collaset.kusionstack.io/to-replace": "true", "collaset.kusionstack.io/replace-pair-new-id": "7" } }), pod("a-new", { labels: { "collaset.kusionstack.io/instance-id": "7", "collaset.kusionstack.io/replace-pair-origin-name": "a" } })];
    const seen = plan(job({ targets: [{ name: "a" }] }, started), replacing);
    expect(writes(seen)).toEqual([]);
    expect(seen.status.targetDetails?.[0]).toMatchObject({ progress: "Processing", extraInfo: { NewPod: "a-new" } });
    const going = [pod("a", { labels: replacing[0]!.metadata!.labels!, terminating: true, finalizers: [REPLACE_PROTECTION_FINALIZER] }), replacing[1]!];
    expect(writes(plan(job({ targets: [{ name: "a" }] }, seen.status), going))).toEqual(["unprotect a"]);
    const notServing = plan(job({ targets: [{ name: "a" }] }, seen.status), [replacing[1]!]);
    expect(notServing.status.targetDetails?.[0]?.progress).toBe("Processing");
    const serving = pod("a-new", { labels: { ...replacing[1]!.metadata!.labels!, "podopslifecycle.kusionstack.io/service-available": "1" } });
    const done = plan(job({ targets: [{ name: "a" }] }, seen.status), [serving], NOW + 5000);
    expect(done.status).toMatchObject({ progress: "Succeeded", endTime: at(5), succeededPodCount: 1, targetDetails: [{ name: "a", progress: "Succeeded", endTime: at(5), extraInfo: { NewPod: "a-new" } }] });
  });

  it("fails a target whose pod does not exist, with kuperator's reason", () => {
    const result = plan(job({ targets: [{ name: "ghost" }] }), []);
    expect(result.status).toMatchObject({ progress: "Failed", failedPodCount: 1, targetDetails: [{ name: "ghost", progress: "Failed", error: { reason: "PodNotFound", message: "failed to replace a non-exist pod" } }] });
  });

  it("refuses a pod whose owner cannot replace it, with the reason, instead of labelling it", () => {
    const result = plan(job({ targets: [{ name: "a" }] }), [pod("a", { owner: "Deployment" })]);
    expect(writes(result)).toEqual([]);
    expect(result.status.targetDetails?.[0]).toMatchObject({ progress: "Failed", error: { reason: "ReplaceNotSupported", message: "pod a is controlled by Deployment web, which does not replace it" } });
  });

  it("does not replace a pod that is itself a new pod of a replace", () => {
    const result = plan(job({ targets: [{ name: "a-new" }] }), [pod("a-new", { labels: { "collaset.kusionstack.io/replace-pair-origin-name": "a" } })]);
    expect(writes(result)).toEqual([]);
    expect(result.status.targetDetails?.[0]).toMatchObject({ progress: "Processing", extraInfo: { NotAllowedToReplaceNewPod: "Not allowed to replace pod when it is a new pod for origin pod [a]" } });
  });

  it("asks only once: a pod labelled already (another job, or by hand) is not labelled again", () => {
    expect(writes(plan(job({ targets: [{ name: "a" }] }), [pod("a", { labels: { "collaset.kusionstack.io/to-replace": "true" } })]))).toEqual([]);
  });

  it("fails a target not done within activeDeadlineSeconds and lets it go; deletes the job TTLSecondsAfterFinished after it finished", () => {
    const started: OperationJobStatus = { progress: "Processing", startTime: at(0), targetDetails: [{ name: "a", progress: "Processing", startTime: at(0) }] };
    const pods = [pod("a", { labels: { "collaset.kusionstack.io/to-replace": "true" }, finalizers: [REPLACE_PROTECTION_FINALIZER] })];
    const value = job({ targets: [{ name: "a" }], activeDeadlineSeconds: 10, TTLSecondsAfterFinished: 10 }, started);
    expect(plan(value, pods, NOW + 4000).requeueAfterMs).toBe(6000);
    const timedOut = plan(value, pods, NOW + 10_000);
    expect(writes(timedOut)).toEqual(["release a"]);
    expect(timedOut.status).toMatchObject({ progress: "Failed", endTime: at(10), targetDetails: [{ name: "a", progress: "Failed", extraInfo: { Released: "true" } }] });
    expect(timedOut.events.map((event) => event.reason)).toEqual(["Timeout"]);
    const finished = job({ targets: [{ name: "a" }], activeDeadlineSeconds: 10, TTLSecondsAfterFinished: 10 }, timedOut.status);
    expect(plan(finished, pods, NOW + 15_000)).toMatchObject({ deleteJob: false, requeueAfterMs: 5000 });
    expect(plan(finished, pods, NOW + 20_000)).toMatchObject({ deleteJob: true });
  });

  it("takes the targets already started first when the partition is raised", () => {
    const status: OperationJobStatus = { targetDetails: [{ name: "a", progress: "Pending" }, { name: "b", progress: "Processing", startTime: at(0) }] };
    const result = plan(job({ partition: 1 }, status), [pod("a"), pod("b", { labels: { "collaset.kusionstack.io/to-replace": "true" } })]);
    expect(writes(result)).toEqual([]);
    expect(result.status.targetDetails?.map((detail) => detail.progress)).toEqual(["Pending", "Processing"]);
  });
});
