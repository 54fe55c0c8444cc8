// Which revision of each decoration a new pod gets (DESIGN §5: the updated one), read from
// the informer caches only. The updated revision is the one the live spec hashes to: when the
// controller has stored it, the stored ControllerRevision is rendered; when it has not yet,
// the live spec is rendered under the very name the controller will give it.
import { validateClusterPodDecoration } from "../api/cluster-poddecoration.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import { PodDecorationTemplateSchema, validatePodDecoration } from "../api/poddecoration.ts";
import { formatFieldErrors } from "../api/field-errors.ts";
import type { DecorationRevision, RevisionFor } from "./decorate.ts";
import { newPodMoves } from "./rollout.ts";
import { specRevision } from "../revision/revision-data.ts";
import { Compile } from "typebox/compile";
import { DecorationError } from "./decoration-error.ts";
import { decorationKey, isClusterDecoration } from "./decoration-kind.ts";
import type { DecorationBounds } from "./engine-bounds.ts";

/** What the webhook and the CollaSet controller read from their caches; every object in them is frozen. */
export interface DecorationSource {
  /** PodDecorations of one namespace. */
  decorations(namespace: string): readonly PodDecoration[];
  /** A ControllerRevision's `data`, when the cache has it. */
  revisionData(namespace: string, name: string): unknown;
  /** What a pod's decorations may cost (DESIGN §10); the defaults when absent. */
  readonly bounds?: DecorationBounds | undefined;
  /** Where ClusterPodDecorations' revisions live: the release namespace (DESIGN §12). */
  readonly clusterRevisionNamespace?: string | undefined;
  /** A namespace's labels (a ClusterPodDecoration's namespace canary reads them). */
  namespaceLabels?(namespace: string): Readonly<Record<string, string>> | undefined;
}

/** The namespace a decoration's revisions live in: its own, or for a cluster one the release namespace. */
export function revisionNamespaceOf(source: Pick<DecorationSource, "clusterRevisionNamespace">, decoration: { kind?: string | undefined; metadata: { namespace?: string | undefined } }): string {
  return isClusterDecoration(decoration) ? (source.clusterRevisionNamespace ?? "") : (decoration.metadata.namespace ?? "");
}

const templateChecker = Compile(PodDecorationTemplateSchema);

/**
 * Cached objects are replaced, never changed, when they change: memoising per object keeps the
 * hashing and validation off the hot path for every pod after the first.
 */
export function updatedRevisions(source: DecorationSource): (decoration: PodDecoration) => DecorationRevision {
  const memo = new WeakMap<PodDecoration, DecorationRevision | DecorationError>();
  return (decoration) => {
    let revision = memo.get(decoration);
    if (revision === undefined) {
      revision = resolve(source, decoration);
      memo.set(decoration, revision);
    }
    if (revision instanceof DecorationError) throw revision;
    return revision;
  };
}

function errorSubject(decoration: PodDecoration): { namespace?: string | undefined; name: string } {
  return { namespace: decoration.metadata.namespace, name: decorationKey(decoration) };
}

function resolve(source: DecorationSource, decoration: PodDecoration): DecorationRevision | DecorationError {
  const errors = isClusterDecoration(decoration) ? validateClusterPodDecoration(decoration) : validatePodDecoration(decoration);
  if (errors.length > 0) {
    // Written while no validating webhook was watching, e.g. before installation.
    return new DecorationError(errorSubject(decoration), `invalid spec: ${formatFieldErrors(decoration.kind ?? "PodDecoration", decoration.metadata.name, errors).join("; ")}`);
  }
  const live = specRevision(decoration, decoration.status?.collisionCount ?? 0);
  const stored = source.revisionData(revisionNamespaceOf(source, decoration), live.name);
  if (stored === undefined) {
    return { revisionName: live.name, template: live.data.template, injectStrategy: live.data.injectStrategy };
  }
  if (!isRevisionData(stored)) {
    return new DecorationError(errorSubject(decoration), `ControllerRevision ${live.name} holds data that is not a decoration revision`);
  }
  return { revisionName: live.name, template: stored.template, injectStrategy: stored.injectStrategy };
}

// Cached revision data never changes under its object: each is checked once.
const checkedData = new WeakMap<object, boolean>();

function isRevisionData(data: unknown): data is { template: DecorationRevision["template"]; injectStrategy: { group: string; weight: number } } {
  if (typeof data !== "object" || data === null) return false;
  let valid = checkedData.get(data);
  if (valid === undefined) checkedData.set(data, (valid = checkRevisionData(data)));
  return valid;
}

function checkRevisionData(data: object): boolean {
  const { template, injectStrategy } = data as Record<string, unknown>;
  if (!templateChecker.Check(template)) return false;
  if (typeof injectStrategy !== "object" || injectStrategy === null) return false;
  const { group, weight } = injectStrategy as Record<string, unknown>;
  return typeof group === "string" && typeof weight === "number";
}

/**
 * What the pod webhook renders into a pod being created (DESIGN §5): the updated revision,
 * unless the decoration's rollout holds the pod back (a rolling-update selector that does not
 * select it, or a partition with no room for one more updated pod) — then its current
 * revision, or nothing when it has none yet.
 */
export function newPodRevisions(source: DecorationSource): RevisionFor {
  const updated = updatedRevisions(source);
  return (decoration, pod) => {
    const revision = updated(decoration);
    const namespaceLabels = isClusterDecoration(decoration) ? source.namespaceLabels?.(decoration.metadata.namespace ?? "") : undefined;
    if (newPodMoves(decoration, revision.revisionName, pod.metadata?.labels ?? {}, namespaceLabels)) return revision;
    const current = decoration.status?.currentRevision;
    if (current === undefined || current === "") return { notRendered: "held back by its rollout, and it has no earlier revision to render" };
    if (current === revision.revisionName) return revision;
    return storedRevision(source, revisionNamespaceOf(source, decoration), current) ?? { notRendered: `held back by its rollout, and its current revision ${current} is not stored` };
  };
}

/**
 * A stored revision by name (one a pod records, which may be older than the updated one), or
 * undefined when the cache does not hold it or it is not a PodDecoration revision.
 */
export function storedRevision(source: DecorationSource, namespace: string, name: string): DecorationRevision | undefined {
  const stored = source.revisionData(namespace, name);
  if (stored === undefined || !isRevisionData(stored)) return undefined;
  return { revisionName: name, template: stored.template, injectStrategy: stored.injectStrategy };
}
