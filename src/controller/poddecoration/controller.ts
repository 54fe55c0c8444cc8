// Wires the PodDecoration reconciler to its informers: events only map to decoration keys
// (the decoration itself, the owner of a revision, the decorations that select or are
// recorded on a pod), as in kubernetes/sample-controller.
import type { Logger } from "pino";
import { isPodDecorationsKeyed, podDecorationKeysForPod } from "./mappers.ts";
import { PodDecorationReconciler, type CachedDecoration } from "./reconciler.ts";
import { indexPodsForDecorations } from "./pod-indexes.ts";
import type { KubeClient } from "../../kube/client.ts";
import { controllerOf, objectKey, type ControllerRevision, type Pod } from "../../kube/objects.ts";
import type { Clock } from "../runtime/clock.ts";
import { serverDryRun } from "../server-dry-run.ts";
import { Controller } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import type { Informer } from "../runtime/informer.ts";
import type { RuntimeMetrics } from "../runtime/metrics.ts";
import { defaultControllerRateLimiter, MAX_RETRY_BACKOFF_MS } from "../runtime/rate-limiter.ts";

export interface PodDecorationControllerOptions {
  informers: { decorations: Informer<CachedDecoration>; revisions: Informer<ControllerRevision>; pods: Informer<Pod> };
  client: KubeClient<CachedDecoration>;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  metrics?: RuntimeMetrics;
  workers?: number;
}

export function podDecorationController(options: PodDecorationControllerOptions): Controller {
  const { decorations, revisions, pods } = options.informers;
  indexPodsForDecorations(pods.cache);
  const reconciler = new PodDecorationReconciler({
    decorations: decorations.cache,
    revisions: revisions.cache,
    pods: pods.cache,
    client: { podDecorations: options.client.kusion.podDecorations, controllerRevisions: options.client.apps.controllerRevisions },
    dryRunCreate: serverDryRun(options.client.config),
    events: options.events,
    clock: options.clock,
    logger: options.logger.child({ controller: "poddecoration" }),
  });
  const controller = new Controller({
    name: "poddecoration",
    reconcile: reconciler.reconcile,
    workers: options.workers ?? 2,
    rateLimiter: defaultControllerRateLimiter(options.clock, MAX_RETRY_BACKOFF_MS),
    logger: options.logger,
    clock: options.clock,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    waitForSync: [decorations, revisions, pods],
  });
  const enqueue = (key: string) => controller.enqueue(key);

  controller.watch(decorations, {
    onAdd: (decoration) => enqueue(objectKey(decoration)),
    onUpdate: (_old, decoration) => enqueue(objectKey(decoration)),
    onDelete: (decoration) => enqueue(objectKey(decoration)),
  });
  const ownerKey = (revision: ControllerRevision) => {
    const owner = controllerOf(revision);
    if (owner !== undefined && isPodDecorationsKeyed(owner)) enqueue(`${revision.metadata?.namespace ?? ""}/${owner.name}`);
  };
  controller.watch(revisions, { onAdd: ownerKey, onUpdate: (_old, revision) => ownerKey(revision), onDelete: ownerKey });
  const podKeys = (...changed: Pod[]) => {
    for (const key of podDecorationKeysForPod(decorations.cache, changed)) enqueue(key);
  };
  controller.watch(pods, { onAdd: (pod) => podKeys(pod), onUpdate: (old, pod) => podKeys(old, pod), onDelete: (pod) => podKeys(pod) });
  return controller;
}
