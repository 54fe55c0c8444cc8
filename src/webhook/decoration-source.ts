// The webhook's view of the informer caches: PodDecorations by namespace and the data of
// their ControllerRevisions by name. Both listers hand out frozen, shared objects.
import type { PodDecoration } from "../api/poddecoration.ts";
import type { Lister } from "../controller/runtime/cache.ts";
import type { ControllerRevision, KubeObject } from "../kube/objects.ts";
import type { DecorationSource } from "../decoration/updated-revisions.ts";
import type { DecorationBounds } from "../decoration/engine-bounds.ts";

export function cachedDecorationSource(decorations: Lister<PodDecoration & KubeObject>, revisions: Lister<ControllerRevision & KubeObject>, bounds?: DecorationBounds): DecorationSource {
  return {
    decorations: (namespace) => decorations.list(namespace),
    revisionData: (namespace, name): unknown => revisions.get(namespace, name)?.data as unknown,
    bounds,
  };
}
