// Wires ClusterPodDecorations (DESIGN §12) to the controllers: their own reconcile — the
// PodDecoration reconciler over the kind's views (decoration-kinds.ts) — and what their changes
// mean to the CollaSet controller and the rollout to pods of other owners. Events only map to
// keys: a cluster decoration, its revisions, a pod it selects or that records it, a namespace
// labelled in or out.
import { clusterPodDecorationOwnerOf } from "../../api/owners.ts";
import type { PodDecoration } from "../../api/poddecoration.ts";
import { isClusterKey, nameOfKey } from "../../decoration/decoration-kind.ts";
import { recordedRevisions } from "../../decoration/recording.ts";
import { selectorMatches } from "../../decoration/selector.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { ControllerRevision, KubeObject, Namespace, Pod } from "../../kube/objects.ts";
import { serverDryRun } from "../../kube/server-dry-run.ts";
import type { CollaSet } from "../../api/collaset.ts";
import { asSeenFrom } from "../../api/cluster-poddecoration.ts";
import type { CachedClusterDecoration, ClusterDecorations } from "../cluster-decorations.ts";
import { reconcilerController, type ControllerWiring } from "../reconciler-controller.ts";
import type { Controller } from "../runtime/controller.ts";
import type { Informer } from "../runtime/informer.ts";
import type { RolloutReports } from "../workload-rollout/reports.ts";
import type { DecorationBounds } from "../../decoration/engine-bounds.ts";
import { clusterPodDecorationKind, type CachedDecoration } from "./decoration-kinds.ts";
import { rolloutInputChanged } from "../workload-rollout/controller.ts";
import { PodDecorationReconciler } from "./reconciler.ts";
import type { RecordedTemplateOf } from "./status.ts";

export interface ClusterPodDecorationControllerOptions extends ControllerWiring {
  informers: {
    clusterDecorations: Informer<CachedClusterDecoration>;
    /** Their revisions, in the release namespace. */
    revisions: Informer<ControllerRevision>;
    pods: Informer<Pod>;
    namespaces: Informer<Namespace>;
    decorations: Informer<CachedDecoration>;
    collaSets: Informer<CollaSet & KubeObject>;
  };
  cluster: ClusterDecorations;
  client: KubeClient<CachedDecoration>;
  releaseNamespace: string;
  rolloutReports?: RolloutReports;
  bounds?: DecorationBounds;
  /** The templates of the revisions pods record, of both kinds (reconciler.ts storedTemplates). */
  recordedTemplates?: RecordedTemplateOf;
}

export function clusterPodDecorationController(options: ClusterPodDecorationControllerOptions): Controller {
  const { clusterDecorations, revisions, pods, namespaces, decorations, collaSets } = options.informers;
  const { cluster } = options;
  const namespaceDecorations = (namespace: string): readonly PodDecoration[] => [...decorations.cache.list(namespace), ...cluster.forNamespace(namespace)];
  const reconciler = new PodDecorationReconciler({
    decorations: decorations.cache,
    revisions: revisions.cache,
    pods: pods.cache,
    collaSets: collaSets.cache,
    client: { podDecorations: options.client.kusion.podDecorations, controllerRevisions: options.client.apps.controllerRevisions },
    kind: clusterPodDecorationKind(cluster, namespaceDecorations, options.client.kusion.clusterPodDecorations as unknown as typeof options.client.kusion.podDecorations, options.releaseNamespace),
    namespaceLabels: (namespace) => cluster.namespaceLabels(namespace),
    dryRunCreate: serverDryRun(options.client.config),
    ...(options.rolloutReports === undefined ? {} : { rolloutReports: options.rolloutReports }),
    ...(options.bounds === undefined ? {} : { bounds: options.bounds }),
    events: options.events,
    clock: options.clock,
    logger: options.logger.child({ controller: "clusterpoddecoration" }),
    ...(options.recordedTemplates === undefined ? {} : { recordedTemplates: options.recordedTemplates }),
  });
  const controller = reconcilerController({ ...options, name: "clusterpoddecoration", reconcile: reconciler.reconcile, caches: [clusterDecorations, revisions, pods, namespaces, decorations, collaSets] });
  const enqueue = (cpd: { metadata?: { name?: string | undefined } | undefined }) => controller.enqueue(cpd.metadata?.name ?? "");
  controller.watch(clusterDecorations, { onAdd: enqueue, onUpdate: (_old, cpd) => enqueue(cpd), onDelete: enqueue });
  const revisionChanged = (revision: ControllerRevision) => {
    const owner = clusterPodDecorationOwnerOf(revision);
    if (owner !== undefined) controller.enqueue(owner.name);
  };
  controller.watch(revisions, { onAdd: revisionChanged, onUpdate: (_old, revision) => revisionChanged(revision), onDelete: revisionChanged });
  const podChanged = (...states: Pod[]) => {
    for (const name of clusterDecorationsOfPod(cluster, states)) controller.enqueue(name);
  };
  controller.watch(pods, { onAdd: (pod) => podChanged(pod), onUpdate: (old, pod) => podChanged(old, pod), onDelete: (pod) => podChanged(pod) });
  // A namespace labelled in or out changes what every cluster decoration selects.
  const namespaceChanged = () => {
    for (const cpd of cluster.all()) enqueue(cpd);
  };
  controller.watch(namespaces, { onAdd: namespaceChanged, onUpdate: (old, namespace) => (sameLabels(old, namespace) ? undefined : namespaceChanged()), onDelete: namespaceChanged });
  return controller;
}

/** The cluster decorations (by name) that select any of the states of a pod, or that it records. */
export function clusterDecorationsOfPod(cluster: ClusterDecorations, states: readonly Pod[]): Set<string> {
  const names = new Set<string>();
  for (const pod of states) {
    for (const key of recordedRevisions(pod)?.keys() ?? []) if (isClusterKey(key)) names.add(nameOfKey(key));
    for (const view of cluster.forNamespace(pod.metadata?.namespace ?? "")) {
      if (selectorMatches(view.spec.selector, pod.metadata?.labels)) names.add(view.metadata.name ?? "");
    }
  }
  return names;
}

/**
 * What a cluster decoration's change means to a controller of a namespace's pods: `changed` is
 * told of it as seen from each namespace it selects, after its spec or revisions change; `pods`
 * recording it elsewhere are told through `podChanged`.
 */
export function watchClusterDecorations(
  controller: Controller,
  informers: { clusterDecorations: Informer<CachedClusterDecoration>; revisions: Informer<ControllerRevision> },
  cluster: ClusterDecorations,
  changed: (view: PodDecoration) => void,
): void {
  const each = (cpd: CachedClusterDecoration) => {
    for (const namespace of cluster.selectedNamespaces(cpd)) changed(asSeenFrom(cpd, namespace));
  };
  controller.watch(informers.clusterDecorations, {
    onAdd: each,
    onUpdate: (old, cpd) => {
      if (!rolloutInputChanged(old, cpd)) return;
      each(old);
      each(cpd);
    },
    onDelete: each,
  });
  const revisionChanged = (revision: ControllerRevision) => {
    const owner = clusterPodDecorationOwnerOf(revision);
    const cpd = owner === undefined ? undefined : cluster.named(owner.name);
    if (cpd !== undefined) each(cpd);
  };
  controller.watch(informers.revisions, { onAdd: revisionChanged, onUpdate: (_old, revision) => revisionChanged(revision) });
}

function sameLabels(a: Namespace, b: Namespace): boolean {
  return JSON.stringify(a.metadata?.labels ?? {}) === JSON.stringify(b.metadata?.labels ?? {});
}
