// Selection and rendering in one call: what the webhook does for a new pod, with the revision
// of each decoration supplied by the caller (from its ControllerRevision caches, or from the
// live spec for an offline render).
import type { Pod } from "../api/pod.ts";
import type { PodDecoration, PodDecorationTemplate } from "../api/poddecoration.ts";
import { specRevision } from "../revision/revision-data.ts";
import { type DecorationToApply, type RenderResult, renderPod } from "./render.ts";
import { type Exclusion, selectDecorations } from "./selection.ts";

/** The revision of a decoration to render: its ControllerRevision name and data. */
export interface DecorationRevision {
  revisionName: string;
  template: PodDecorationTemplate;
  injectStrategy: { group?: string | undefined; weight?: number | undefined };
}

/** Returns the revision to render for a decoration, or undefined when none is known (yet). */
export type RevisionFor = (decoration: PodDecoration) => DecorationRevision | undefined;

export interface DecorateResult extends RenderResult {
  excluded: Exclusion[];
}

export function decoratePod(pod: Pod, decorations: readonly PodDecoration[], revisionFor: RevisionFor): DecorateResult {
  const selection = selectDecorations(pod, decorations);
  const warnings = [...selection.warnings];
  const toApply: DecorationToApply[] = [];
  for (const decoration of selection.apply) {
    const name = decoration.metadata.name ?? "";
    const revision = revisionFor(decoration);
    if (revision === undefined) {
      warnings.push(`PodDecoration/${name}: no revision is known yet; not applied`);
      continue;
    }
    toApply.push({ name, namespace: decoration.metadata.namespace, creationTimestamp: decoration.metadata.creationTimestamp, ...revision });
  }
  const rendered = renderPod(pod, toApply);
  // Selection and rendering both read the revisions annotation; report its problems once.
  return { ...rendered, warnings: [...new Set([...warnings, ...rendered.warnings])], excluded: selection.excluded };
}

/**
 * The revision a decoration's current spec would be stored as: what an offline render uses,
 * and what the webhook uses for a decoration whose first ControllerRevision is not cached yet.
 */
export function liveRevision(decoration: PodDecoration): DecorationRevision {
  const revision = specRevision(decoration);
  return { revisionName: revision.name, template: revision.data.template, injectStrategy: revision.data.injectStrategy };
}
