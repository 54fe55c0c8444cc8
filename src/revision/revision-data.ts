// What a PodDecoration revision is (DESIGN §4): its template and inject strategy, defaulted,
// so a manifest with and one without explicit defaults are the same revision. Selector,
// update strategy and history limit are not part of it: changing them rolls nothing out.
import { decorationGroup, decorationWeight, defaultPodDecoration, type PodDecoration, type PodDecorationTemplate } from "../api/poddecoration.ts";
import { hashRevisionData } from "./hash.ts";
import { revisionName } from "./name.ts";
import { isClusterDecoration } from "../decoration/decoration-kind.ts";

export interface PodDecorationRevisionData {
  template: PodDecorationTemplate;
  /** Resolved: `group` is "" when unset, `weight` includes the KusionStack `spec.weight` alias. */
  injectStrategy: { group: string; weight: number };
}

export function revisionData(pd: PodDecoration): PodDecorationRevisionData {
  const defaulted = defaultPodDecoration(pd);
  return {
    template: defaulted.spec.template ?? {},
    injectStrategy: { group: decorationGroup(defaulted), weight: decorationWeight(defaulted) },
  };
}

export interface SpecRevision {
  name: string;
  hash: string;
  data: PodDecorationRevisionData;
}

/**
 * What a ClusterPodDecoration's revision names start with: they live in the release namespace,
 * where a PodDecoration of the same name and template would otherwise share them.
 */
export const CLUSTER_REVISION_PREFIX = "cpd-";

/** The revision the decoration's current spec would be stored as (before any collision). */
export function specRevision(pd: PodDecoration, collisionCount = 0): SpecRevision {
  const data = revisionData(pd);
  const hash = hashRevisionData(data, collisionCount);
  return { name: revisionName(`${isClusterDecoration(pd) ? CLUSTER_REVISION_PREFIX : ""}${pd.metadata.name ?? ""}`, hash), hash, data };
}
