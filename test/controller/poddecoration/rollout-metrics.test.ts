import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { registerRolloutMetrics } from "../../../src/controller/poddecoration/rollout-metrics.ts";
import type { KubeObject } from "../../../src/kube/objects.ts";

type Decoration = PodDecoration & KubeObject;

const decoration = (name: string, status: PodDecoration["status"]): Decoration => ({
  apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { namespace: "shop", name }, spec: {}, status,
});

async function samples(registry: Registry, name: string): Promise<string[]> {
  return (await registry.getSingleMetric(name)!.get()).values.map((sample) => `${Object.values(sample.labels).join(" ")} = ${sample.value}`).sort();
}

describe("the PodDecoration rollout metrics", () => {
  it("reports each cached decoration's counts and conditions, and forgets a deleted one", async () => {
    let cached = [
      decoration("mesh", {
        matchedPods: 5, updatedPods: 3, updatedReadyPods: 2,
        workloads: [
          { kind: "Deployment", name: "web", matchedPods: 3, updatedPods: 1, outdatedPods: 2, blockedPods: 1 },
          { kind: "StatefulSet", name: "db", matchedPods: 2, updatedPods: 2, outdatedPods: 0, blockedPods: 0 },
        ],
        conditions: [{ type: "TemplateValid", status: "False", reason: "DryRunRejected", message: "", lastTransitionTime: "2030-01-01T00:00:00Z" }],
      }),
      decoration("new", undefined),
    ];
    const registry = new Registry();
    registerRolloutMetrics(registry, [{ decorations: { list: () => cached }, synced: () => true }]);
    expect(await samples(registry, "pod_decorator_poddecoration_pods")).toEqual([
      "shop mesh PodDecoration blocked = 1", "shop mesh PodDecoration matched = 5", "shop mesh PodDecoration outdated = 2", "shop mesh PodDecoration updated = 3", "shop mesh PodDecoration updated_ready = 2",
      "shop new PodDecoration blocked = 0", "shop new PodDecoration matched = 0", "shop new PodDecoration outdated = 0", "shop new PodDecoration updated = 0", "shop new PodDecoration updated_ready = 0",
    ]);
    expect(await samples(registry, "pod_decorator_poddecoration_status_condition")).toEqual(["shop mesh PodDecoration TemplateValid False = 1"]);
    cached = cached.slice(1);
    expect(await samples(registry, "pod_decorator_poddecoration_pods")).toEqual([
      "shop new PodDecoration blocked = 0", "shop new PodDecoration matched = 0", "shop new PodDecoration outdated = 0", "shop new PodDecoration updated = 0", "shop new PodDecoration updated_ready = 0",
    ]);
    expect(await samples(registry, "pod_decorator_poddecoration_status_condition")).toEqual([]);
  });

  it("reports nothing before the cache has synced: an empty cache is not zero pods", async () => {
    const registry = new Registry();
    registerRolloutMetrics(registry, [{ decorations: { list: () => [decoration("mesh", { matchedPods: 1 })] }, synced: () => false }]);
    expect(await samples(registry, "pod_decorator_poddecoration_pods")).toEqual([]);
  });

  it("reports ClusterPodDecorations beside them, by kind, with no namespace, each kind once its own cache has synced", async () => {
    const cluster: Decoration = { apiVersion: "pod-decorator.io/v1alpha1", kind: "ClusterPodDecoration", metadata: { name: "mesh" }, spec: {}, status: { matchedPods: 7, updatedPods: 7, conditions: [{ type: "PodSecurityAdmitted", status: "False", reason: "NamespaceStandardsRefuse", message: "", lastTransitionTime: "2030-01-01T00:00:00Z" }] } };
    let clusterSynced = false;
    const registry = new Registry();
    registerRolloutMetrics(registry, [{ decorations: { list: () => [decoration("mesh", { matchedPods: 1 })] }, synced: () => true }, { decorations: { list: () => [cluster] }, synced: () => clusterSynced }]);
    expect((await samples(registry, "pod_decorator_poddecoration_pods")).filter((sample) => sample.includes(" matched "))).toEqual(["shop mesh PodDecoration matched = 1"]);
    clusterSynced = true;
    expect((await samples(registry, "pod_decorator_poddecoration_pods")).filter((sample) => sample.includes(" matched "))).toEqual([" mesh ClusterPodDecoration matched = 7", "shop mesh PodDecoration matched = 1"]);
    expect(await samples(registry, "pod_decorator_poddecoration_status_condition")).toEqual([" mesh ClusterPodDecoration PodSecurityAdmitted False = 1"]);
  });
});
