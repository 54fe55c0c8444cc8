// Which ClusterPodDecorations select each namespace (DESIGN §12): a namespace's pods get its own
// PodDecorations and the cluster ones whose namespaceSelector selects it, within the pod
// webhook's scope (a namespace it is not called for is selected by none: `{}` means every
// namespace the webhook decorates). Worked out when a namespace or a cluster decoration changes,
// from the namespace informer's labels — never per pod: `forNamespace` answers from what it
// worked out. Each cluster decoration is handed out as seen from the namespace (its
// metadata.namespace that namespace), the same object until it or the namespace changes, so the
// engine's per-object memos and the webhook's answer memo hold for it.
import { asSeenFrom, type ClusterPodDecoration } from "../api/cluster-poddecoration.ts";
import type { Labels } from "../api/label-selector.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import { type AdmissionScope, namespaceSelectionLabels } from "../decoration/admission-scope.ts";
import { selectorMatches } from "../decoration/selector.ts";
import type { ControllerRevision, KubeObject, Namespace, Pod } from "../kube/objects.ts";
import type { Informer } from "./runtime/informer.ts";
import { isClusterDecoration, isClusterKey, nameOfKey } from "../decoration/decoration-kind.ts";
import { isMatchedPod, type PodLike } from "../decoration/rollout.ts";
import type { Lister } from "./runtime/cache.ts";

export type CachedClusterDecoration = ClusterPodDecoration & KubeObject;

/** What a controller of namespaces' pods is given to serve ClusterPodDecorations too. */
export interface FleetWiring {
  decorations: ClusterDecorations;
  informers: { clusterDecorations: Informer<CachedClusterDecoration>; revisions: Informer<ControllerRevision>; namespaces: Informer<Namespace> };
}

export interface ClusterDecorationsOptions {
  decorations: Pick<Lister<CachedClusterDecoration>, "list">;
  namespaces: Pick<Lister<Namespace>, "get" | "list">;
  /** The pod webhook's scope: namespaces outside it are selected by no cluster decoration. */
  scope?: Pick<AdmissionScope, "namespaceSelector"> | undefined;
}

interface Worked {
  /** The cluster decorations' list and the namespace object it was worked out from. */
  decorations: readonly CachedClusterDecoration[];
  namespace: Namespace | undefined;
  selecting: readonly PodDecoration[];
}

const NONE: readonly PodDecoration[] = Object.freeze([]);

export class ClusterDecorations {
  readonly #options: ClusterDecorationsOptions;
  /** The cluster decorations' list as last read; replaced when one changes (changed()). */
  #decorations: readonly CachedClusterDecoration[] | undefined;
  readonly #byNamespace = new Map<string, Worked>();
  /**
   * Each cluster decoration as seen from each namespace, for as long as the decoration object and
   * the namespace object live: a namespace labelled anew gets new views, so what was worked out
   * from its old labels (a canary's new-pod answer) is not taken for the new.
   */
  readonly #views = new WeakMap<CachedClusterDecoration, Map<string, { namespace: Namespace | undefined; view: PodDecoration }>>();

  constructor(options: ClusterDecorationsOptions) {
    this.#options = options;
  }

  /** A cluster decoration was added, changed or deleted: every namespace is worked out again on its next read. */
  changed(): void {
    this.#decorations = undefined;
  }

  /** The labels a namespace is selected by, with the name label the API server sets; undefined when not known. */
  namespaceLabels(namespace: string): Labels | undefined {
    const object = this.#options.namespaces.get(undefined, namespace);
    return object === undefined ? undefined : namespaceSelectionLabels(namespace, object.metadata?.labels);
  }

  /** Whether `cpd` selects `namespace` now (known, in the webhook's scope, its namespaceSelector matching). */
  selects(cpd: Pick<ClusterPodDecoration, "spec">, namespace: string): boolean {
    const labels = this.namespaceLabels(namespace);
    if (labels === undefined) return false;
    if (this.#options.scope !== undefined && !selectorMatches(this.#options.scope.namespaceSelector, labels)) return false;
    return selectorMatches(cpd.spec.namespaceSelector, labels);
  }

  /** The cluster decorations selecting `namespace`, as seen from it. */
  forNamespace(namespace: string): readonly PodDecoration[] {
    const decorations = (this.#decorations ??= this.#options.decorations.list());
    if (decorations.length === 0) return NONE;
    const object = this.#options.namespaces.get(undefined, namespace);
    const worked = this.#byNamespace.get(namespace);
    if (worked !== undefined && worked.decorations === decorations && worked.namespace === object) return worked.selecting;
    const selecting: PodDecoration[] = [];
    // Those being deleted too, as a namespace's own are: selection skips them, rollouts take them off.
    for (const cpd of decorations) if (this.selects(cpd, namespace)) selecting.push(this.#view(cpd, namespace, object));
    const frozen = selecting.length === 0 ? NONE : Object.freeze(selecting);
    this.#byNamespace.set(namespace, { decorations, namespace: object, selecting: frozen });
    if (object === undefined) this.#byNamespace.delete(namespace);
    return frozen;
  }

  /** Every cluster decoration, as cached. */
  all(): readonly CachedClusterDecoration[] {
    return (this.#decorations ??= this.#options.decorations.list());
  }

  /** A cluster decoration by name, as cached. */
  named(name: string): CachedClusterDecoration | undefined {
    return this.all().find((cpd) => cpd.metadata.name === name);
  }

  /** The namespaces a cluster decoration selects now (those known, in the webhook's scope). */
  selectedNamespaces(cpd: Pick<ClusterPodDecoration, "spec">): string[] {
    return this.#options.namespaces.list().map((namespace) => namespace.metadata?.name ?? "").filter((name) => name !== "" && this.selects(cpd, name));
  }

  /**
   * Whether a decoration a pod in `namespace` records stays as it is though the namespace's
   * decorations do not include it: a cluster decoration that still exists, no longer selecting
   * the namespace (labelled out: its pods keep what they have, DESIGN §12).
   */
  keeps(key: string, namespace: string): boolean {
    if (!isClusterKey(key)) return false;
    const cpd = this.named(nameOfKey(key));
    return cpd !== undefined && cpd.metadata.deletionTimestamp == null && !this.selects(cpd, namespace);
  }

  /** Whether a decoration selects a pod: for a cluster one, in any namespace it selects (the pod's, as seen from there). */
  matches(decoration: PodDecoration, pod: PodLike): boolean {
    if (!isClusterDecoration(decoration)) return isMatchedPod(decoration, pod);
    const namespace = pod.metadata?.namespace ?? "";
    return this.selects(decoration as unknown as ClusterPodDecoration, namespace) && isMatchedPod(asSeenFrom(decoration as unknown as ClusterPodDecoration, namespace), pod);
  }

  /** The pods a decoration may select: for a cluster one, those of every namespace it selects (supersets: matches() decides). */
  podsOf(pods: Lister<Pod>, decoration: PodDecoration, selectable: (pods: Lister<Pod>, decoration: PodDecoration) => Pod[]): Pod[] {
    if (!isClusterDecoration(decoration)) return selectable(pods, decoration);
    const cpd = decoration as unknown as ClusterPodDecoration;
    return this.selectedNamespaces(cpd).flatMap((namespace) => selectable(pods, asSeenFrom(cpd, namespace)));
  }

  #view(cpd: CachedClusterDecoration, namespace: string, object: Namespace | undefined): PodDecoration {
    let views = this.#views.get(cpd);
    if (views === undefined) this.#views.set(cpd, (views = new Map<string, { namespace: Namespace | undefined; view: PodDecoration }>()));
    let seen = views.get(namespace);
    if (seen?.namespace !== object) views.set(namespace, (seen = { namespace: object, view: asSeenFrom(cpd, namespace) }));
    return seen!.view;
  }
}

/**
 * What decorationTargets needs to plan a namespace's pods with the cluster decorations among its
 * decorations (the CollaSet controller and the rollout to pods of other owners alike): a cluster
 * decoration's other pods are those of every namespace it selects, it matches a pod there as seen
 * from there, its namespace canary reads namespaces' labels, and a namespace it no longer selects
 * keeps what its pods record. `others` are the namespace's own other pods (for a PodDecoration);
 * `isOwn` tells a pod of the planned workload, never another's.
 */
export function fleetPlanning(cluster: ClusterDecorations | undefined, namespace: string, pods: Lister<Pod>, others: (decoration: PodDecoration) => readonly Pod[], isOwn: (pod: Pod) => boolean, selectable: (pods: Lister<Pod>, decoration: PodDecoration) => Pod[]) {
  if (cluster === undefined) return { otherPods: others };
  return {
    otherPods: (decoration: PodDecoration) => (isClusterDecoration(decoration) ? cluster.podsOf(pods, decoration, selectable).filter((pod) => !isOwn(pod)) : others(decoration)),
    matched: (decoration: PodDecoration, pod: Pod) => cluster.matches(decoration, pod),
    namespaceLabels: (name: string) => cluster.namespaceLabels(name),
    keeps: (key: string) => cluster.keeps(key, namespace),
  };
}
