import { describe, expect, it } from "vitest";
import { BLOCKED_PODS_LISTED, workloadStatuses } from "../../../src/controller/poddecoration/workload-status.ts";
import type { PodRolloutReport } from "../../../src/controller/workload-rollout/reports.ts";
import { workloadKeyOfPod } from "../../../src/controller/workload-rollout/workloads.ts";
import { formatRevisionsAnnotation, REVISIONS_ANNOTATION } from "../../../src/decoration/recording.ts";
import type { Pod } from "../../../src/kube/objects.ts";
import { podDecoration } from "../collaset/fixtures.ts";

function pod(name: string, owner: { kind: string; name: string } | undefined, revision: string | undefined, labels: Record<string, string> = { app: "web" }): Pod {
  return {
    metadata: {
      name,
      namespace: "shop",
      labels: owner?.kind === "ReplicaSet" ? { ...labels, "pod-template-hash": "5d8f" } : labels,
      annotations: { [REVISIONS_ANNOTATION]: formatRevisionsAnnotation(revision === undefined ? [] : [{ name: "logging", revision }]) },
      ...(owner === undefined ? {} : { ownerReferences: [{ apiVersion: owner.kind === "CollaSet" ? "apps.kusionstack.io/v1alpha1" : "apps/v1", kind: owner.kind, name: owner.name, uid: "u", controller: true }] }),
    },
    status: { phase: "Running" },
  };
}

describe("workloadStatuses", () => {
  it("counts matched, updated, outdated and blocked pods per workload, leaving CollaSet pods to details", () => {
    const deployment = { kind: "ReplicaSet", name: "web-5d8f" };
    const pods = [
      pod("web-a", deployment, "logging-r2"),
      pod("web-b", deployment, "logging-r1"),
      pod("web-c", deployment, "logging-r1"),
      pod("bare", undefined, "logging-r1"),
      pod("cls-0", { kind: "CollaSet", name: "web" }, "logging-r1"),
      // Records the decoration but no longer matches: outdated (it should drop it), not matched.
      pod("api-0", { kind: "StatefulSet", name: "api" }, "logging-r1", { app: "api" }),
    ];
    const reports = new Map<string, PodRolloutReport>([
      ["web-b", { moving: ["logging"] }],
      ["web-c", { moving: ["logging", "tracing"], blocked: { reason: "NeedsRecreation", message: "pod web-c: needs recreation" } }],
      ["api-0", { moving: ["logging"] }],
    ]);
    const statuses = workloadStatuses(podDecoration("logging"), pods, "logging-r2", (key, name) => {
      const owner = pods.find((candidate) => candidate.metadata?.name === name);
      return owner !== undefined && workloadKeyOfPod(owner) === key ? reports.get(name) : undefined;
    });
    expect(statuses).toEqual([
      { kind: "Deployment", name: "web", matchedPods: 3, updatedPods: 1, outdatedPods: 2, blockedPods: 1, blocked: [{ pod: "web-c", reason: "NeedsRecreation", message: "pod web-c: needs recreation" }] },
      { kind: "Pod", name: "", matchedPods: 1, updatedPods: 0, outdatedPods: 0, blockedPods: 0 },
      { kind: "StatefulSet", name: "api", matchedPods: 0, updatedPods: 0, outdatedPods: 1, blockedPods: 0 },
    ]);
  });

  it("lists the first blocked pods by name and counts them all", () => {
    const pods = Array.from({ length: BLOCKED_PODS_LISTED + 5 }, (_, index) => pod(`web-${String(index).padStart(2, "0")}`, undefined, "logging-r1"));
    const [status] = workloadStatuses(podDecoration("logging"), [...pods].reverse(), "logging-r2", () => ({ moving: ["logging"], blocked: { reason: "EvictionRefused", message: "refused" } }));
    expect(status?.blockedPods).toBe(BLOCKED_PODS_LISTED + 5);
    expect(status?.blocked?.map((entry) => entry.pod)).toEqual(pods.slice(0, BLOCKED_PODS_LISTED).map((entry) => entry.metadata?.name));
  });
});
