// Wires the PodDecoration reconciler to its informers: events only map to decoration keys
// (the decoration itself, the owner of a revision, the decorations that select or are
// recorded on a pod), as in kubernetes/sample-controller.
import type { CollaSet } from "../../api/collaset.ts";
import { podDecorationOwnerOf } from "../../api/owners.ts";
import { podDecorationKeysForPod } from "./mappers.ts";
import { PodDecorationReconciler, type CachedDecoration } from "./reconciler.ts";
import type { RecordedTemplateOf } from "./status.ts";
import { indexDecorationsBySelector, indexPodsForDecorations } from "./pod-indexes.ts";
import type { KubeClient } from "../../kube/client.ts";
import { namespacedKey, type ControllerRevision, type KubeObject, type Pod } from "../../kube/objects.ts";
import { enqueueObjects, enqueueRevisionOwners, reconcilerController, type ControllerWiring } from "../reconciler-controller.ts";
import { serverDryRun } from "../../kube/server-dry-run.ts";
import type { Controller } from "../runtime/controller.ts";
import type { Informer } from "../runtime/informer.ts";
import type { RolloutReports } from "../workload-rollout/reports.ts";
import type { DecorationBounds } from "../../decoration/engine-bounds.ts";
import type { ClusterDecorations } from "../cluster-decorations.ts";
import { podDecorationKind } from "./decoration-kinds.ts";

export interface PodDecorationControllerOptions extends ControllerWiring {
  informers: { decorations: Informer<CachedDecoration>; revisions: Informer<ControllerRevision>; pods: Informer<Pod>; collaSets: Informer<CollaSet & KubeObject> };
  client: KubeClient<CachedDecoration>;
  /** What the rollout to pods of other owners reports of each pod, for status.workloads. */
  rolloutReports?: RolloutReports;
  /** The namespace limit the webhook enforces, which status reports against (DESIGN §10). */
  bounds?: DecorationBounds;
  /** The ClusterPodDecorations selecting each namespace: a decoration's standing there counts them. */
  cluster?: ClusterDecorations;
  /** The API server's Kubernetes version as serve last read it (named in TemplateValid's messages). */
  kubernetesVersion?: () => string | undefined;
  /** The templates of the revisions pods record, of both kinds (reconciler.ts storedTemplates). */
  recordedTemplates?: RecordedTemplateOf;
}

export function podDecorationController(options: PodDecorationControllerOptions): Controller {
  const { decorations, revisions, pods, collaSets } = options.informers;
  indexPodsForDecorations(pods.cache);
  indexDecorationsBySelector(decorations.cache);
  const reconciler = new PodDecorationReconciler({
    decorations: decorations.cache,
    revisions: revisions.cache,
    pods: pods.cache,
    collaSets: collaSets.cache,
    client: { podDecorations: options.client.kusion.podDecorations, controllerRevisions: options.client.apps.controllerRevisions },
    dryRunCreate: serverDryRun(options.client.config),
    ...(options.kubernetesVersion === undefined ? {} : { kubernetesVersion: options.kubernetesVersion }),
    ...(options.rolloutReports === undefined ? {} : { rolloutReports: options.rolloutReports }),
    events: options.events,
    clock: options.clock,
    logger: options.logger.child({ controller: "poddecoration" }),
    ...(options.bounds === undefined ? {} : { bounds: options.bounds }),
    kind: podDecorationKind(decorations.cache, options.client.kusion.podDecorations, options.cluster),
    ...(options.recordedTemplates === undefined ? {} : { recordedTemplates: options.recordedTemplates }),
  });
  const controller = reconcilerController({ ...options, name: "poddecoration", reconcile: reconciler.reconcile, caches: [decorations, revisions, pods, collaSets] });
  enqueueObjects(controller, decorations);
  // A decoration's standing among its namespace's others (namespace-standing.ts) changes with
  // theirs: a spec written, a decoration created or going.
  const namespaceChanged = (decoration: CachedDecoration) => {
    const namespace = decoration.metadata.namespace ?? "";
    for (const other of decorations.cache.list(namespace)) if (other.metadata.name !== decoration.metadata.name) controller.enqueue(namespacedKey(namespace, other.metadata.name ?? ""));
  };
  controller.watch(decorations, {
    onAdd: namespaceChanged,
    onUpdate: (old, decoration) => {
      if (old.metadata.generation !== decoration.metadata.generation || (old.metadata.deletionTimestamp == null) !== (decoration.metadata.deletionTimestamp == null)) namespaceChanged(decoration);
    },
    onDelete: namespaceChanged,
  });
  enqueueRevisionOwners(controller, revisions, podDecorationOwnerOf);
  const podKeys = (...changed: Pod[]) => {
    for (const key of podDecorationKeysForPod(decorations.cache, changed)) controller.enqueue(key);
  };
  controller.watch(pods, { onAdd: (pod) => podKeys(pod), onUpdate: (old, pod) => podKeys(old, pod), onDelete: (pod) => podKeys(pod) });
  // A CollaSet gone: its pods hold no decoration being deleted any more.
  controller.watch(collaSets, {
    onDelete: (collaSet) => {
      const namespace = collaSet.metadata?.namespace;
      for (const decoration of decorations.cache.list(namespace)) {
        if (namespace !== undefined && decoration.metadata.deletionTimestamp != null) controller.enqueue(namespacedKey(namespace, decoration.metadata.name ?? ""));
      }
    },
  });
  return controller;
}
