// `explain opj NAME`: each target's standing, from the job's status and the pods.
import { describe, expect, it } from "vitest";
import type { OperationJob } from "../../src/api/operationjob.ts";
import { explainOperationJob, formatOperationJobReport } from "../../src/cli/operation-job-explanation.ts";
import type { Pod } from "../../src/kube/objects.ts";

const job: OperationJob = {
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "OperationJob",
  metadata: { name: "swap", namespace: "shop" },
  spec: { action: "Replace", targets: [{ name: "web-0" }, { name: "web-1" }, { name: "bare" }], partition: 2 },
  status: {
    progress: "Processing",
    totalPodCount: 3,
    succeededPodCount: 1,
    failedPodCount: 1,
    targetDetails: [
      { name: "web-0", progress: "Succeeded", extraInfo: { NewPod: "web-7xq2c" } },
      { name: "web-1", progress: "Pending" },
      { name: "bare", progress: "Failed", error: { reason: "ReplaceNotSupported", message: "pod bare has no controller to replace it" } },
    ],
  },
};

const pods: Pod[] = [
  { metadata: { name: "web-1", namespace: "shop", ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: "u", controller: true }] } },
  { metadata: { name: "bare", namespace: "shop" } },
];

describe("explainOperationJob", () => {
  it("tells which targets the partition takes, their progress, pods, new pods and errors", () => {
    const report = explainOperationJob(job, pods);
    expect(report.partition).toBe("2 of 3");
    expect(report.targets.map((target) => [target.name, target.inPartition, target.progress, target.pod, target.owner])).toEqual([
      ["web-0", true, "Succeeded", "gone", "-"],
      ["web-1", false, "Pending", "present", "CollaSet/web"],
      ["bare", true, "Failed", "present", "<none>"],
    ]);
    const text = formatOperationJobReport(report);
    expect(text).toContain("  web-0  Succeeded\n    pod: gone, owner -, new pod web-7xq2c\n");
    expect(text).toContain("  web-1  Pending  (outside the partition)\n");
    expect(text).toContain("    error: ReplaceNotSupported: pod bare has no controller to replace it\n");
  });
});
