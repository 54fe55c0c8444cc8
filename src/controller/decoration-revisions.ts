// The decoration revisions a controller renders into live pods, read from the caches: the
// updated revision of a decoration (the one its live spec hashes to, stored or not yet), and any
// stored revision by name, with what rendering order needs of its decoration. One reading for
// the CollaSet controller and the rollout to pods of other owners.
import type { PodDecoration } from "../api/poddecoration.ts";
import type { DecorationRevision } from "../decoration/decorate.ts";
import { DecorationError } from "../decoration/decoration-error.ts";
import type { DecorationToApply } from "../decoration/render.ts";
import { storedRevision, updatedRevisions, type DecorationSource } from "../decoration/updated-revisions.ts";
import { DEFAULT_DECORATION_BOUNDS } from "../decoration/engine-bounds.ts";
import { withinNamespaceLimit } from "../decoration/namespace-limit.ts";
import { decorationKey, isClusterKey } from "../decoration/decoration-kind.ts";

/** One namespace's decorations as a reconcile reads them, once. */
export interface NamespaceDecorations {
  decorations: readonly PodDecoration[];
  byName: ReadonlyMap<string, PodDecoration>;
  /**
   * The updated revision's name, or undefined when it cannot be resolved or the decoration is
   * over the namespace's limit (namespace-limit.ts): then its pods keep what they have.
   */
  updatedRevision: (decoration: PodDecoration) => string | undefined;
  /** The rounds of selection a pod is given (DESIGN §10). */
  maxSelectionRounds: number;
}

export class DecorationRevisions {
  readonly #source: DecorationSource;
  readonly #updated: ReturnType<typeof updatedRevisions>;

  constructor(source: DecorationSource) {
    this.#source = source;
    this.#updated = updatedRevisions(source);
  }

  decorations(namespace: string): readonly PodDecoration[] {
    return this.#source.decorations(namespace);
  }

  inNamespace(namespace: string): NamespaceDecorations {
    const decorations = this.#source.decorations(namespace);
    const bounds = this.#source.bounds ?? DEFAULT_DECORATION_BOUNDS;
    const { over } = withinNamespaceLimit(decorations, bounds.maxDecorationsPerNamespace);
    const inert = new Set(over);
    return {
      decorations,
      byName: new Map(decorations.map((decoration) => [decorationKey(decoration), decoration])),
      updatedRevision: (decoration) => (inert.has(decoration) ? undefined : this.updated(decoration)?.revisionName),
      maxSelectionRounds: bounds.maxSelectionRounds,
    };
  }

  /** The updated revision, or undefined for an invalid decoration: it rolls nothing out, its pods keep what they have. */
  updated(decoration: PodDecoration): DecorationRevision | undefined {
    try {
      return this.#updated(decoration);
    } catch (error) {
      if (error instanceof DecorationError) return undefined;
      throw error;
    }
  }

  /**
   * A revision of the decoration `name` to render, or undefined when it is not stored (nor the
   * updated one). `decorations` are the namespace's, by name (a gone decoration's stored
   * revisions still render, ordered by name alone).
   */
  toApply(namespace: string, decorations: ReadonlyMap<string, PodDecoration>, name: string, revision: string): DecorationToApply | undefined {
    const decoration = decorations.get(name);
    const updated = decoration === undefined ? undefined : this.updated(decoration);
    const revisionNamespace = isClusterKey(name) ? (this.#source.clusterRevisionNamespace ?? "") : namespace;
    const found = updated?.revisionName === revision ? updated : storedRevision(this.#source, revisionNamespace, revision);
    if (found === undefined) return undefined;
    return { name, namespace, creationTimestamp: decoration?.metadata.creationTimestamp, ...found };
  }
}
