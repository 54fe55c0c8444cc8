// The wiring both controllers share: a Controller running a reconciler with the default rate
// limiter, keyed by its primary resource (every add, update and delete of one enqueues it),
// and the revisions it owns enqueueing their owner.
import type { Logger } from "pino";
import { namespacedKey, objectKey, type ControllerRevision, type KubeObject, type OwnerReference } from "../kube/objects.ts";
import type { Clock } from "./runtime/clock.ts";
import type { EventRecorder } from "./runtime/event-recorder.ts";
import { Controller, type Reconcile } from "./runtime/controller.ts";
import type { Informer } from "./runtime/informer.ts";
import type { RuntimeMetrics } from "./runtime/metrics.ts";
import { defaultControllerRateLimiter, MAX_RETRY_BACKOFF_MS } from "./runtime/rate-limiter.ts";

/** What every controller is wired with besides its informers and clients. */
export interface ControllerWiring {
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  metrics?: RuntimeMetrics | undefined;
  workers?: number | undefined;
}

/** PodOpsLifecycle around pod updates (absent: off). */
export interface LifecycleOptions {
  drainDelayMs: number;
  stuckAfterMs: number;
}

export interface ReconcilerControllerOptions<T extends KubeObject> {
  name: string;
  reconcile: Reconcile;
  /** The resource whose keys the reconciler takes. */
  primary: Informer<T>;
  /** The other caches the reconciler reads. */
  secondary: readonly { hasSynced(): boolean }[];
  clock: Clock;
  logger: Logger;
  metrics?: RuntimeMetrics | undefined;
  workers?: number | undefined;
}

export function reconcilerController<T extends KubeObject>(options: ReconcilerControllerOptions<T>): Controller {
  const controller = new Controller({
    name: options.name,
    reconcile: options.reconcile,
    workers: options.workers ?? 2,
    rateLimiter: defaultControllerRateLimiter(options.clock, MAX_RETRY_BACKOFF_MS),
    logger: options.logger,
    clock: options.clock,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    waitForSync: [options.primary, ...options.secondary],
  });
  const enqueue = (object: T) => controller.enqueue(objectKey(object));
  controller.watch(options.primary, { onAdd: enqueue, onUpdate: (_old, object) => enqueue(object), onDelete: enqueue });
  return controller;
}

/** Each change of a revision enqueues the owner `ownerOf` finds for it (none: nothing). */
export function enqueueRevisionOwners(controller: Controller, revisions: Informer<ControllerRevision>, ownerOf: (revision: ControllerRevision) => OwnerReference | undefined): void {
  const enqueueOwner = (revision: ControllerRevision) => {
    const owner = ownerOf(revision);
    if (owner !== undefined) controller.enqueue(namespacedKey(revision.metadata?.namespace, owner.name));
  };
  controller.watch(revisions, { onAdd: enqueueOwner, onUpdate: (_old, revision) => enqueueOwner(revision), onDelete: enqueueOwner });
}
