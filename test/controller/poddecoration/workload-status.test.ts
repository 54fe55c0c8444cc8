import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { desiredStatus } from "../../../src/controller/poddecoration/status.ts";
import { BLOCKED_PODS_LISTED, WorkloadTally } from "../../../src/controller/poddecoration/workload-status.ts";
import { RolloutReports } from "../../../src/controller/workload-rollout/reports.ts";
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

function workloads(decoration: PodDecoration, pods: Pod[], reports: RolloutReports) {
  const status = desiredStatus({
    decoration,
    pods,
    updatedRevision: "logging-r2",
    collisionCount: 0,
    templateValid: { type: "TemplateValid", status: "True", reason: "DryRunAccepted", message: "" },
    now: "2026-11-24T00:00:00Z",
    workloads: new WorkloadTally("shop", decoration.metadata.name ?? "", reports),
  });
  return status.workloads;
}

describe("status.workloads", () => {
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
    const reports = new RolloutReports();
    reports.set("shop/Deployment/web/", new Map([
      ["web-b", { moving: ["logging"] }],
      ["web-c", { moving: ["logging", "tracing"], blocked: { reason: "NeedsRecreation" as const, message: "pod web-c: needs recreation" } }],
    ]));
    reports.set("shop/StatefulSet/api/u", new Map([["api-0", { moving: ["logging"] }]]));
    expect(workloads(podDecoration("logging"), pods, reports)).toEqual([
      { kind: "Deployment", name: "web", matchedPods: 3, updatedPods: 1, outdatedPods: 2, blockedPods: 1, blocked: [{ pod: "web-c", reason: "NeedsRecreation", message: "pod web-c: needs recreation" }] },
      // A pod without a controller is a workload of its own.
      { kind: "Pod", name: "bare", matchedPods: 1, updatedPods: 0, outdatedPods: 0, blockedPods: 0 },
      { kind: "StatefulSet", name: "api", matchedPods: 0, updatedPods: 0, outdatedPods: 1, blockedPods: 0 },
    ]);
    // Reports that change are read afresh; a pod no longer moving is no longer outdated.
    reports.set("shop/StatefulSet/api/u", new Map());
    expect(workloads(podDecoration("logging"), pods, reports)?.map((status) => status.kind)).toEqual(["Deployment", "Pod"]);
  });

  it("lists the first blocked pods by name and counts them all", () => {
    const statefulSet = { kind: "StatefulSet", name: "web" };
    const pods = Array.from({ length: BLOCKED_PODS_LISTED + 5 }, (_, index) => pod(`web-${String(index).padStart(2, "0")}`, statefulSet, "logging-r1"));
    const reports = new RolloutReports();
    reports.set("shop/StatefulSet/web/u", new Map(pods.map((entry) => [entry.metadata?.name ?? "", { moving: ["logging"], blocked: { reason: "EvictionRefused" as const, message: "refused" } }])));
    const [status] = workloads(podDecoration("logging"), [...pods].reverse(), reports) ?? [];
    expect(status?.blockedPods).toBe(BLOCKED_PODS_LISTED + 5);
    expect(status?.blocked?.map((entry) => entry.pod)).toEqual(pods.slice(0, BLOCKED_PODS_LISTED).map((entry) => entry.metadata?.name));
  });

  it("is left out when the rollout to pods of other owners does not run, or nothing of it applies", () => {
    const cls = [pod("cls-0", { kind: "CollaSet", name: "web" }, "logging-r2")];
    expect(workloads(podDecoration("logging"), cls, new RolloutReports())).toBeUndefined();
    expect(desiredStatus({ decoration: podDecoration("logging"), pods: [pod("bare", undefined, "logging-r2")], updatedRevision: "logging-r2", collisionCount: 0, templateValid: { type: "TemplateValid", status: "True", reason: "DryRunAccepted", message: "" }, now: "2026-11-24T00:00:00Z" }).workloads).toBeUndefined();
  });
});
