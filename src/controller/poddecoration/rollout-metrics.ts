// Each PodDecoration's and ClusterPodDecoration's rollout as metrics, read from its status in the
// cache at scrape time (as kube-state-metrics reads a Deployment's): what the rollout alerts and
// the dashboard need. Every replica reports the same figures from its own cache; queries take
// their max. The decoration's namespace is poddecoration_namespace (a scrape sets `namespace` to
// the target's), empty for a ClusterPodDecoration; `kind` tells the two kinds apart.
import { Gauge, type Registry } from "prom-client";
import { POD_DECORATION_KIND } from "../../api/group.ts";
import type { PodDecoration } from "../../api/poddecoration.ts";
import type { Lister } from "../runtime/cache.ts";
import type { KubeObject } from "../../kube/objects.ts";

/** The pod counts of a decoration's status, by the `state` label. */
export function rolloutCounts(decoration: PodDecoration): Record<"matched" | "updated" | "updated_ready" | "outdated" | "blocked", number> {
  const status = decoration.status ?? {};
  const workloads = status.workloads ?? [];
  return {
    matched: status.matchedPods ?? 0,
    updated: status.updatedPods ?? 0,
    updated_ready: status.updatedReadyPods ?? 0,
    // Pods of other owners than CollaSets; a CollaSet's pods move by the CollaSet's strategy.
    outdated: workloads.reduce((sum, workload) => sum + workload.outdatedPods, 0),
    blocked: workloads.reduce((sum, workload) => sum + workload.blockedPods, 0),
  };
}

/** `kinds`: the caches of each kind (PodDecorations, ClusterPodDecorations), each reported once it has synced. */
export function registerRolloutMetrics(registry: Registry, kinds: readonly { decorations: Pick<Lister<PodDecoration & KubeObject>, "list">; synced: () => boolean }[]): void {
  const each = (visit: (labels: { poddecoration_namespace: string; poddecoration: string; kind: string }, decoration: PodDecoration) => void) => {
    for (const { decorations, synced } of kinds) {
      if (!synced()) continue;
      for (const decoration of decorations.list()) visit({ poddecoration_namespace: decoration.metadata.namespace ?? "", poddecoration: decoration.metadata.name ?? "", kind: decoration.kind ?? POD_DECORATION_KIND }, decoration);
    }
  };
  new Gauge({
    name: "pod_decorator_poddecoration_pods",
    help: "Pods of a PodDecoration's or ClusterPodDecoration's rollout as its status counts them, by state: matched, updated, updated_ready, outdated and blocked (these two for pods not owned by a CollaSet).",
    labelNames: ["poddecoration_namespace", "poddecoration", "kind", "state"],
    registers: [registry],
    collect() {
      // Deleted decorations must not linger as series.
      this.reset();
      each((labels, decoration) => {
        for (const [state, pods] of Object.entries(rolloutCounts(decoration))) this.set({ ...labels, state }, pods);
      });
    },
  });
  new Gauge({
    name: "pod_decorator_poddecoration_status_condition",
    help: "1 for each condition a PodDecoration's or ClusterPodDecoration's status holds (Ready, TemplateValid, PodDetail, ...), by type and status.",
    labelNames: ["poddecoration_namespace", "poddecoration", "kind", "type", "status"],
    registers: [registry],
    collect() {
      this.reset();
      each((labels, decoration) => {
        for (const condition of decoration.status?.conditions ?? []) this.set({ ...labels, type: condition.type, status: condition.status }, 1);
      });
    },
  });
}
