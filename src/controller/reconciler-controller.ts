// The wiring every controller shares: a Controller running a reconciler with the default rate
// limiter once its caches have synced, its primary resource's changes enqueueing their own keys,
// and the revisions it owns enqueueing their owner.
import type { Logger } from "pino";
import { namespacedKey, objectKey, type ControllerRevision, type KubeObject, type OwnerReference, type Pod } from "../kube/objects.ts";
import type { Clock } from "./runtime/clock.ts";
import type { EventRecorder } from "./runtime/event-recorder.ts";
import { Controller, type Reconcile } from "./runtime/controller.ts";
import type { Informer } from "./runtime/informer.ts";
import type { RuntimeMetrics } from "./runtime/metrics.ts";
import { defaultControllerRateLimiter, MAX_RETRY_BACKOFF_MS } from "./runtime/rate-limiter.ts";
import type { TransitionGate } from "./lifecycle/transition-gate.ts";

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
  /** The PodTransitionRules that gate its stages (absent: none). */
  transitions?: TransitionGate | undefined;
  /** A delay an OperationJob asks for a pod's operation (milliseconds), in place of the workload's. */
  operationDelayFor?: ((pod: Pod) => number | undefined) | undefined;
}

export interface ReconcilerControllerOptions {
  name: string;
  reconcile: Reconcile;
  /** Every cache the reconciler reads: the workers start once all of them have synced. */
  caches: readonly { hasSynced(): boolean }[];
  clock: Clock;
  logger: Logger;
  metrics?: RuntimeMetrics | undefined;
  workers?: number | undefined;
}

/** A Controller running `reconcile` with the default rate limiter; it watches nothing yet. */
export function reconcilerController(options: ReconcilerControllerOptions): Controller {
  return new Controller({
    name: options.name,
    reconcile: options.reconcile,
    workers: options.workers ?? 2,
    rateLimiter: defaultControllerRateLimiter(options.clock, MAX_RETRY_BACKOFF_MS),
    logger: options.logger,
    clock: options.clock,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    waitForSync: options.caches,
  });
}

/** Each add, update and delete of an object of the controller's primary resource enqueues its key. */
export function enqueueObjects<T extends KubeObject>(controller: Controller, primary: Informer<T>): void {
  const enqueue = (object: T) => controller.enqueue(objectKey(object));
  controller.watch(primary, { onAdd: enqueue, onUpdate: (_old, object) => enqueue(object), onDelete: enqueue });
}

/** Each change of a revision enqueues the owner `ownerOf` finds for it (none: nothing). */
export function enqueueRevisionOwners(controller: Controller, revisions: Informer<ControllerRevision>, ownerOf: (revision: ControllerRevision) => OwnerReference | undefined): void {
  const enqueueOwner = (revision: ControllerRevision) => {
    const owner = ownerOf(revision);
    if (owner !== undefined) controller.enqueue(namespacedKey(revision.metadata?.namespace, owner.name));
  };
  controller.watch(revisions, { onAdd: enqueueOwner, onUpdate: (_old, revision) => enqueueOwner(revision), onDelete: enqueueOwner });
}
