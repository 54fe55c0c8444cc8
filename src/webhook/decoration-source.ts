// The webhook's view of the informer caches: a namespace's decorations — its PodDecorations and
// the ClusterPodDecorations selecting it (DESIGN §12) — and the data of their ControllerRevisions
// by name. The listers hand out frozen, shared objects.
import type { PodDecoration } from "../api/poddecoration.ts";
import type { ClusterDecorations } from "../controller/cluster-decorations.ts";
import type { Lister } from "../controller/runtime/cache.ts";
import type { ControllerRevision, KubeObject } from "../kube/objects.ts";
import type { DecorationSource } from "../decoration/updated-revisions.ts";
import type { DecorationBounds } from "../decoration/engine-bounds.ts";

export interface ClusterDecorationCaches {
  decorations: ClusterDecorations;
  /** ClusterPodDecorations' ControllerRevisions. */
  revisions: Pick<Lister<ControllerRevision & KubeObject>, "get">;
  /** The release namespace, where those live. */
  revisionNamespace: string;
}

export function cachedDecorationSource(decorations: Lister<PodDecoration & KubeObject>, revisions: Lister<ControllerRevision & KubeObject>, bounds?: DecorationBounds, cluster?: ClusterDecorationCaches): DecorationSource {
  return {
    decorations: (namespace) => {
      const own = decorations.list(namespace);
      const selecting = cluster?.decorations.forNamespace(namespace) ?? [];
      return selecting.length === 0 ? own : [...own, ...selecting];
    },
    revisionData: (namespace, name): unknown => (revisions.get(namespace, name) ?? (namespace === cluster?.revisionNamespace ? cluster.revisions.get(namespace, name) : undefined))?.data as unknown,
    bounds,
    clusterRevisionNamespace: cluster?.revisionNamespace,
    namespaceLabels: (namespace) => cluster?.decorations.namespaceLabels(namespace),
  };
}
