// Wires the CollaSet reconciler to its informers: events only map to CollaSet keys (the
// CollaSet, the owner of a pod or a template revision, the CollaSets a decoration or one of
// its revisions affects), as in kubernetes/sample-controller.
import { collaSetOwnerOf, podDecorationOwnerOf } from "../../api/owners.ts";
import type { PodDecoration } from "../../api/poddecoration.ts";
import type { DecorationSource } from "../../decoration/updated-revisions.ts";
import type { KubeClient } from "../../kube/client.ts";
import { namespacedKey, type ControllerRevision, type KubeObject, type PersistentVolumeClaim, type Pod } from "../../kube/objects.ts";
import type { Controller } from "../runtime/controller.ts";
import { enqueueObjects, enqueueRevisionOwners, reconcilerController, type ControllerWiring, type LifecycleOptions } from "../reconciler-controller.ts";
import { Expectations } from "../runtime/expectations.ts";
import type { Informer } from "../runtime/informer.ts";
import { Evictions } from "../eviction.ts";
import { serverDryRun } from "../../kube/server-dry-run.ts";
import { collaSetKeyOfPod, collaSetKeysForDecoration, collaSetKeysForForeignPod, collaSetKeysIncluding } from "./mappers.ts";
import { CollaSetReconciler, type CachedCollaSet } from "./reconciler.ts";
import { ClaimWrites } from "./claim-writes.ts";
import { ContextWrites } from "./context-writes.ts";
import { InExcludeWrites } from "./in-exclude-writes.ts";
import type { CachedResourceContext } from "./resource-context.ts";
import { PVC_TEMPLATE_HASH_LABEL } from "./claims.ts";
import type { RolloutReports } from "../workload-rollout/reports.ts";
import { watchClusterDecorations } from "../poddecoration/cluster-controller.ts";
import type { FleetWiring } from "../cluster-decorations.ts";

type CachedDecoration = PodDecoration & KubeObject;

export interface CollaSetControllerOptions extends ControllerWiring {
  informers: {
    collaSets: Informer<CachedCollaSet>;
    /** CollaSet template revisions. */
    revisions: Informer<ControllerRevision>;
    pods: Informer<Pod>;
    decorations: Informer<CachedDecoration>;
    decorationRevisions: Informer<ControllerRevision>;
    /** PersistentVolumeClaims: those the CollaSets own, and those left for one to adopt. */
    claims: Informer<PersistentVolumeClaim>;
    /** Where instance ids are recorded (kuperator's ResourceContext). */
    resourceContexts: Informer<CachedResourceContext>;
  };
  decorationSource: DecorationSource;
  client: KubeClient<KubeObject, CachedCollaSet>;
  lifecycle?: LifecycleOptions;
  /** Where what holds its pods' decorations back is reported (the decorations' status). */
  rolloutReports?: RolloutReports;
  /** ClusterPodDecorations (DESIGN §12): which select each namespace, and their informers. */
  cluster?: FleetWiring;
  reportsChanged?: (namespace: string, decorations: ReadonlySet<string>) => void;
}

export function collaSetController(options: CollaSetControllerOptions): Controller {
  const { collaSets, revisions, pods, decorations, decorationRevisions, claims, resourceContexts } = options.informers;
  const expectations = new Expectations({ clock: options.clock });
  const reconciler = new CollaSetReconciler({
    collaSets: collaSets.cache,
    pods: pods.cache,
    revisions: revisions.cache,
    decorations: options.decorationSource,
    client: { collaSets: options.client.kusion.collaSets, pods: options.client.core.pods, controllerRevisions: options.client.apps.controllerRevisions },
    dryRunCreate: serverDryRun(options.client.config),
    events: options.events,
    expectations,
    clock: options.clock,
    logger: options.logger.child({ controller: "collaset" }),
    inExclude: new InExcludeWrites({
      pods: pods.cache,
      claims: claims.cache,
      client: { pods: options.client.core.pods, claims: options.client.core.persistentVolumeClaims },
      expectations,
      events: options.events,
    }),
    contexts: new ContextWrites({ contexts: resourceContexts.cache, client: options.client.kusion.resourceContexts, expectations }),
    claims: new ClaimWrites({
      claims: claims.cache,
      client: { claims: options.client.core.persistentVolumeClaims, collaSets: options.client.kusion.collaSets },
      expectations,
      events: options.events,
    }),
    evictions: new Evictions({ client: options.client.core.evictions, clock: options.clock, metrics: options.metrics?.evictions("collaset") }),
    ...(options.lifecycle === undefined ? {} : { lifecycle: options.lifecycle }),
    ...(options.rolloutReports === undefined ? {} : { rolloutReports: options.rolloutReports }),
    ...(options.cluster === undefined ? {} : { clusterDecorations: options.cluster.decorations }),
    ...(options.reportsChanged === undefined ? {} : { reportsChanged: options.reportsChanged }),
  });
  const controller = reconcilerController({
    ...options,
    name: "collaset",
    reconcile: reconciler.reconcile,
    caches: [collaSets, revisions, pods, decorations, decorationRevisions, claims, resourceContexts],
  });
  enqueueObjects(controller, collaSets);
  const enqueueAll = (keys: Iterable<string>) => {
    for (const key of keys) controller.enqueue(key);
  };

  enqueueRevisionOwners(controller, revisions, collaSetOwnerOf);
  const podChanged = (pod: Pod) => {
    const owner = collaSetKeyOfPod(pod);
    if (owner !== undefined) controller.enqueue(owner);
    else {
      enqueueAll(collaSetKeysForForeignPod(collaSets.cache, decorations.cache.list(pod.metadata?.namespace ?? ""), pod));
      enqueueAll(collaSetKeysIncluding(collaSets.cache, pod));
    }
  };
  controller.watch(pods, { onAdd: podChanged, onUpdate: (old, pod) => { podChanged(old); podChanged(pod); }, onDelete: podChanged });
  // A claim syncs its CollaSet; one without owner that a CollaSet may adopt, those of its namespace.
  const claimChanged = (claim: PersistentVolumeClaim) => {
    const owner = collaSetOwnerOf(claim);
    if (owner !== undefined) controller.enqueue(namespacedKey(claim.metadata?.namespace, owner.name));
    else if ((claim.metadata?.ownerReferences ?? []).length === 0 && claim.metadata?.labels?.[PVC_TEMPLATE_HASH_LABEL] !== undefined) {
      for (const collaSet of collaSets.cache.list(claim.metadata?.namespace ?? "")) controller.enqueue(namespacedKey(collaSet.metadata.namespace, collaSet.metadata.name ?? ""));
    }
  };
  controller.watch(claims, { onAdd: claimChanged, onUpdate: (old, claim) => { claimChanged(old); claimChanged(claim); }, onDelete: claimChanged });
  controller.watch(decorations, {
    onAdd: (decoration) => enqueueAll(collaSetKeysForDecoration(collaSets.cache, decoration)),
    onUpdate: (old, decoration) => enqueueAll(collaSetKeysForDecoration(collaSets.cache, old, decoration)),
    onDelete: (decoration) => enqueueAll(collaSetKeysForDecoration(collaSets.cache, decoration)),
  });
  // A decoration revision becoming available can unblock pods waiting to be made of it.
  const decorationRevisionOwner = (revision: ControllerRevision) => {
    const owner = podDecorationOwnerOf(revision);
    const decoration = owner === undefined ? undefined : decorations.cache.get(revision.metadata?.namespace, owner.name);
    if (decoration !== undefined) enqueueAll(collaSetKeysForDecoration(collaSets.cache, decoration));
  };
  controller.watch(decorationRevisions, { onAdd: decorationRevisionOwner, onUpdate: (_old, revision) => decorationRevisionOwner(revision) });
  const cluster = options.cluster;
  if (cluster !== undefined) {
    watchClusterDecorations(controller, cluster.informers, cluster.decorations, (view) => enqueueAll(collaSetKeysForDecoration(collaSets.cache, view as PodDecoration & KubeObject)));
    // A namespace labelled in or out: its CollaSets' pods gain a cluster decoration, or keep it.
    controller.watch(cluster.informers.namespaces, {
      onUpdate: (old, namespace) => {
        if (JSON.stringify(old.metadata?.labels ?? {}) === JSON.stringify(namespace.metadata?.labels ?? {}) || cluster.decorations.all().length === 0) return;
        for (const collaSet of collaSets.cache.list(namespace.metadata?.name ?? "")) controller.enqueue(namespacedKey(collaSet.metadata.namespace, collaSet.metadata.name ?? ""));
      },
    });
  }
  return controller;
}
