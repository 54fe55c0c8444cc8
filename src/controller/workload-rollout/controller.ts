// Wires the rollout to pods of other owners to its informers: keys are workloads (workloads.ts).
// A pod's change enqueues its workload; a decoration's change, or one of its revisions', the
// workloads of the pods it may select or that record it.
import { podDecorationOwnerOf } from "../../api/owners.ts";
import type { PodDecoration } from "../../api/poddecoration.ts";
import type { DecorationSource } from "../../decoration/updated-revisions.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { AdmissionScope } from "../../decoration/admission-scope.ts";
import type { ControllerRevision, KubeObject, Namespace, Pod } from "../../kube/objects.ts";
import { Evictions } from "../eviction.ts";
import { indexPodsForDecorations, podsRecording, selectablePods } from "../poddecoration/pod-indexes.ts";
import type { Controller } from "../runtime/controller.ts";
import { Expectations } from "../runtime/expectations.ts";
import type { Informer } from "../runtime/informer.ts";
import { WorkloadRolloutReconciler } from "./reconciler.ts";
import type { RolloutReports } from "./reports.ts";
import { workloadKeyOfPod } from "./workloads.ts";
import { reconcilerController, type ControllerWiring, type LifecycleOptions } from "../reconciler-controller.ts";
import { watchClusterDecorations } from "../poddecoration/cluster-controller.ts";
import type { FleetWiring } from "../cluster-decorations.ts";

type CachedDecoration = PodDecoration & KubeObject;

export interface WorkloadRolloutControllerOptions extends ControllerWiring {
  informers: { pods: Informer<Pod>; decorations: Informer<CachedDecoration>; decorationRevisions: Informer<ControllerRevision>; namespaces: Informer<Namespace> };
  /** The pod webhook's scope: a pod is evicted only when the webhook will decorate its replacement. */
  webhookScope: AdmissionScope;
  decorationSource: DecorationSource;
  client: KubeClient;
  reports: RolloutReports;
  reportsChanged: (namespace: string, decorations: ReadonlySet<string>) => void;
  lifecycle?: LifecycleOptions;
  /** ClusterPodDecorations (DESIGN §12): which select each namespace, and their informers. */
  cluster?: FleetWiring;
}

export function workloadRolloutController(options: WorkloadRolloutControllerOptions): Controller {
  const { pods, decorations, decorationRevisions, namespaces } = options.informers;
  indexPodsForDecorations(pods.cache);
  const reconciler = new WorkloadRolloutReconciler({
    pods: pods.cache,
    decorations: decorations.cache,
    revisions: options.decorationSource,
    client: { pods: options.client.core.pods },
    evictions: new Evictions({ client: options.client.core.evictions, clock: options.clock, metrics: options.metrics?.evictions("workload-rollout") }),
    events: options.events,
    expectations: new Expectations({ clock: options.clock }),
    reports: options.reports,
    reportsChanged: options.reportsChanged,
    clock: options.clock,
    logger: options.logger.child({ controller: "workload-rollout" }),
    lifecycle: options.lifecycle,
    webhookScope: { scope: options.webhookScope, namespaces: namespaces.cache },
    ...(options.cluster === undefined ? {} : { clusterDecorations: options.cluster.decorations }),
  });
  const controller = reconcilerController({ ...options, name: "workload-rollout", reconcile: reconciler.reconcile, caches: [pods, decorations, decorationRevisions, namespaces] });

  const podChanged = (pod: Pod) => {
    const key = workloadKeyOfPod(pod);
    if (key !== undefined) controller.enqueue(key);
  };
  controller.watch(pods, { onAdd: podChanged, onUpdate: (old, pod) => { podChanged(old); podChanged(pod); }, onDelete: podChanged });
  const decorationChanged = (decoration: PodDecoration) => {
    for (const pod of [...selectablePods(pods.cache, decoration), ...podsRecording(pods.cache, decoration)]) podChanged(pod);
  };
  controller.watch(decorations, {
    onAdd: decorationChanged,
    onUpdate: (old, decoration) => {
      // A status write changes nothing a plan reads but the collision count (the revision's name).
      if (!rolloutInputChanged(old, decoration)) return;
      decorationChanged(old);
      decorationChanged(decoration);
    },
    onDelete: decorationChanged,
  });
  // A revision becoming available can unblock pods waiting to be made of it.
  const revisionChanged = (revision: ControllerRevision) => {
    const owner = podDecorationOwnerOf(revision);
    const decoration = owner === undefined ? undefined : decorations.cache.get(revision.metadata?.namespace, owner.name);
    if (decoration !== undefined) decorationChanged(decoration);
  };
  // A namespace's labels decide whether the webhook decorates its pods, so whether they may be evicted.
  const namespaceChanged = (namespace: Namespace) => {
    const name = namespace.metadata?.name;
    if (name !== undefined) for (const pod of pods.cache.list(name)) podChanged(pod);
  };
  controller.watch(namespaces, {
    onAdd: namespaceChanged,
    onUpdate: (old, namespace) => {
      if (JSON.stringify(old.metadata?.labels ?? {}) !== JSON.stringify(namespace.metadata?.labels ?? {})) namespaceChanged(namespace);
    },
  });
  controller.watch(decorationRevisions, { onAdd: revisionChanged, onUpdate: (_old, revision) => revisionChanged(revision) });
  if (options.cluster !== undefined) watchClusterDecorations(controller, options.cluster.informers, options.cluster.decorations, decorationChanged);
  return controller;
}

/** What a plan reads of a decoration changed: not a mere status write (but the collision count, the revision's name). */
export function rolloutInputChanged(old: Pick<PodDecoration, "metadata" | "status">, decoration: Pick<PodDecoration, "metadata" | "status">): boolean {
  return old.metadata.generation !== decoration.metadata.generation
    || old.metadata.deletionTimestamp !== decoration.metadata.deletionTimestamp
    || old.status?.collisionCount !== decoration.status?.collisionCount
    || old.metadata.generation === undefined;
}
