// OperationJob on the real node (issue 39): Replace, as kuperator ships it, through the CollaSet's
// replace — a new pod first, the pod released once the new one serves. Two pods replaced by
// partition 1, then 2; the partition never lowered (the CRD's CEL); what an app team might aim it
// at — a pod of no CollaSet, a pod that does not exist, a pod of another namespace — refused with
// the reason; a job deleted cancels its replace; one past its deadline fails, lets go, and is
// deleted after its time to live.
import { describe, expect } from "vitest";
import { stringify } from "yaml";
import type { Pod } from "../../src/kube/objects.ts";
import { testImage } from "../node/test-images.ts";
import { apply, INSTANCE_ID } from "../support/collaset-world.ts";
import { nodeCollaSet } from "../support/node-collaset.ts";
import { clients, eventually, kubectl, test } from "../support/cluster.ts";
import { withOperatorWatching } from "../support/operator.ts";
import type { PodWatch } from "../support/pod-watch.ts";

const kusion = { group: "apps.kusionstack.io", version: "v1alpha1", plural: "operationjobs" };
const ORIGIN = "collaset.kusionstack.io/replace-pair-origin-name";

interface JobStatus {
  progress?: string;
  succeededPodCount?: number;
  failedPodCount?: number;
  targetDetails?: { name: string; progress?: string; extraInfo?: Record<string, string>; error?: { reason?: string; message?: string } }[];
}

const isReady = (pod: Pod | undefined) => pod?.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;
const live = (watch: PodWatch) => watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null);

function job(namespace: string, name: string, spec: Record<string, unknown>): string {
  return stringify({ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "OperationJob", metadata: { name, namespace }, spec: { action: "Replace", ...spec } });
}

async function status(namespace: string, name: string): Promise<JobStatus | undefined> {
  try {
    return ((await clients().custom.getNamespacedCustomObject({ ...kusion, namespace, name })) as { status?: JobStatus }).status ?? {};
  } catch {
    return undefined;
  }
}

function withWorld(namespace: string, story: (watch: PodWatch) => Promise<void>): Promise<void> {
  return withOperatorWatching(namespace, {}, story);
}

describe("OperationJob on the real node", () => {
  test("replaces two CollaSet pods with partition 1, then 2: each gets a new pod first, goes once it serves, and the job records it", async ({ namespace }) => {
    await withWorld(namespace, async (watch) => {
      await apply(stringify(nodeCollaSet(namespace, { replicas: 2 })));
      const [first, second] = await watch.waitFor(() => {
        const pods = live(watch).filter(isReady).sort((a, b) => Number(a.metadata!.labels![INSTANCE_ID]) - Number(b.metadata!.labels![INSTANCE_ID]));
        return pods.length === 2 ? pods.map((pod) => pod.metadata!.name!) : undefined;
      }, 120_000, "two Ready pods");
      await apply(job(namespace, "swap", { targets: [{ name: first }, { name: second }], partition: 1 }));
      const one = await eventually(async () => {
        const current = await status(namespace, "swap");
        return current?.succeededPodCount === 1 ? current : undefined;
      }, 120_000, "the first target replaced");
      const newFirst = one.targetDetails!.find((detail) => detail.name === first)!.extraInfo!.NewPod!;
      expect(one.progress).toBe("Processing");
      expect(one.targetDetails!.find((detail) => detail.name === second)?.progress).toBe("Pending");
      expect(watch.get(first!)).toBeUndefined();
      expect(isReady(watch.get(newFirst))).toBe(true);
      expect(watch.get(second!)?.metadata?.labels?.["collaset.kusionstack.io/to-replace"]).toBeUndefined();

      // The partition only goes up (the CRD's CEL, whoever writes).
      const lowered = await kubectl(["patch", "operationjob", "swap", "-n", namespace, "--type=merge", "-p", JSON.stringify({ spec: { partition: 0 } })]);
      expect(lowered.code).not.toBe(0);
      expect(lowered.stderr).toContain("spec.partition should not be decreased");

      await kubectl(["patch", "operationjob", "swap", "-n", namespace, "--type=merge", "-p", JSON.stringify({ spec: { partition: 2 } })]);
      const done = await eventually(async () => {
        const current = await status(namespace, "swap");
        return current?.progress === "Succeeded" ? current : undefined;
      }, 120_000, "the job Succeeded");
      expect(done.succeededPodCount).toBe(2);
      const newSecond = done.targetDetails!.find((detail) => detail.name === second)!.extraInfo!.NewPod!;
      await watch.waitFor(() => {
        const pods = live(watch);
        return pods.length === 2 && pods.every(isReady) && watch.get(newFirst) !== undefined && watch.get(newSecond) !== undefined ? true : undefined;
      }, 60_000, "the two new pods in service, the old ones gone");
      expect(live(watch).every((pod) => pod.metadata?.labels?.[ORIGIN] === undefined)).toBe(true);
    });
  });

  test("refuses what it cannot replace, with the reason: a pod of no CollaSet, a pod that does not exist, a pod of another namespace", async ({ namespace }) => {
    await withWorld(namespace, async (watch) => {
      await apply(stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "bare", namespace }, spec: { terminationGracePeriodSeconds: 1, automountServiceAccountToken: false, containers: [{ name: "app", image: testImage("app") }] } }));
      await apply(job(namespace, "aimed", { targets: [{ name: "bare" }, { name: "ghost" }] }));
      const failed = await eventually(async () => {
        const current = await status(namespace, "aimed");
        return current?.progress === "Failed" ? current : undefined;
      }, 60_000, "the job Failed");
      expect(failed.targetDetails).toEqual([
        expect.objectContaining({ name: "bare", progress: "Failed", error: { reason: "ReplaceNotSupported", message: expect.stringContaining("pod bare has no controller to replace it") as unknown } }),
        expect.objectContaining({ name: "ghost", progress: "Failed", error: { reason: "PodNotFound", message: "failed to replace a non-exist pod" } }),
      ]);
      const bare = watch.get("bare")!;
      expect(bare.metadata?.labels?.["collaset.kusionstack.io/to-replace"]).toBeUndefined();
      expect(bare.metadata?.finalizers ?? []).toEqual([]);
      const elsewhere = await kubectl(["apply", "-f", "-"], job(namespace, "elsewhere", { targets: [{ name: "kube-system/coredns" }] }));
      expect(elsewhere.code).not.toBe(0);
      expect(elsewhere.stderr).toContain("spec.targets[0].name: Invalid value: \"kube-system/coredns\"");
    });
  });

  test("deleting a job cancels its replace; a target past activeDeadlineSeconds fails and is let go, and the job goes TTLSecondsAfterFinished later", async ({ namespace }) => {
    await withWorld(namespace, async (watch) => {
      // An image the node cannot pull: a new pod never serves, so the replace never finishes by itself.
      await apply(stringify(nodeCollaSet(namespace, { replicas: 1, image: "e2e.local/app:missing" })));
      const origin = await watch.waitFor(() => live(watch)[0]?.metadata?.name, 60_000, "the pod");

      await apply(job(namespace, "cancelled", { targets: [{ name: origin }] }));
      await watch.waitFor(() => (live(watch).length === 2 ? true : undefined), 60_000, "the new pod");
      expect(watch.get(origin)?.metadata?.finalizers).toContain("finalizer.operationjob.kusionstack.io/replace-protected");
      expect((await kubectl(["delete", "operationjob", "cancelled", "-n", namespace, "--wait=true", "--timeout=60s"])).code).toBe(0);
      await watch.waitFor(() => {
        const pods = live(watch);
        return pods.length === 1 && pods[0]!.metadata?.name === origin && (pods[0]!.metadata.finalizers ?? []).length === 0 ? true : undefined;
      }, 60_000, "the replace cancelled: the origin alone, let go");

      await apply(job(namespace, "deadline", { targets: [{ name: origin }], activeDeadlineSeconds: 5, TTLSecondsAfterFinished: 5 }));
      await eventually(async () => ((await status(namespace, "deadline"))?.progress === "Failed" ? true : undefined), 30_000, "the job Failed at its deadline");
      await eventually(async () => ((await status(namespace, "deadline")) === undefined ? true : undefined), 30_000, "the job deleted after its time to live");
      await watch.waitFor(() => (live(watch).length === 1 && live(watch)[0]!.metadata?.name === origin ? true : undefined), 60_000, "the origin alone");
    });
  });
});
