// The CollaSet status the controller wants (DESIGN §6), from its cached pods. Pure: the
// reconciler compares it with the stored status and writes only a difference.
import type { CollaSet, CollaSetStatus } from "../../api/collaset.ts";
import type { Pod } from "../../kube/objects.ts";
import { withTransition, type ConditionWithoutTime } from "../conditions.ts";
import { inLifecycle } from "../lifecycle/pod-ops-lifecycle.ts";
import { isReady, isScheduled, templateRevisionOf } from "./pod-state.ts";
import { isAvailable, isTerminating, runsSpecImages } from "../pod-availability.ts";

export interface CollaSetStatusInput {
  collaSet: CollaSet;
  pods: readonly Pod[];
  updatedRevision: string;
  collisionCount: number;
  /** Why pods could not be created or updated this time; empty when nothing was blocked. */
  blocked: readonly string[];
  /** The last failed write, if the last sync had one. */
  failure: string | undefined;
  now: string;
}

export function desiredCollaSetStatus(input: CollaSetStatusInput): CollaSetStatus {
  const { collaSet, updatedRevision } = input;
  const live = input.pods.filter((pod) => !isTerminating(pod));
  const updated = live.filter((pod) => templateRevisionOf(pod) === updatedRevision);
  const replicas = collaSet.spec.replicas ?? 0;
  const counts = {
    replicas: live.length,
    readyReplicas: live.filter(isReady).length,
    availableReplicas: live.filter(isAvailable).length,
    updatedReplicas: updated.length,
    updatedReadyReplicas: updated.filter(isReady).length,
    updatedAvailableReplicas: updated.filter(isAvailable).length,
    // The counts KusionStack reports: "operating" is a pod in a PodOpsLifecycle operation, or
    // an update in place the kubelet has not finished.
    scheduledReplicas: live.filter(isScheduled).length,
    operatingReplicas: live.filter((pod) => inLifecycle(pod) || !runsSpecImages(pod)).length,
    terminatingReplicas: input.pods.length - live.length,
  };
  const previousCurrent = collaSet.status?.currentRevision;
  const allUpdated = counts.updatedReplicas === live.length && live.length === replicas;
  const currentRevision = previousCurrent === undefined || allUpdated ? updatedRevision : previousCurrent;

  const settled = allUpdated && counts.updatedAvailableReplicas === replicas;
  const ready: ConditionWithoutTime = collaSet.spec.paused === true && !settled
    ? { type: "Ready", status: "False", reason: "Paused", message: "scaling and updating are paused" }
    : settled
      ? { type: "Ready", status: "True", reason: "Updated", message: `${replicas} pods are available on ${updatedRevision}` }
      : { type: "Ready", status: "False", reason: "Progressing", message: `${counts.updatedAvailableReplicas} of ${replicas} pods are available on ${updatedRevision}` };
  const failure: ConditionWithoutTime = input.failure !== undefined
    ? { type: "ReplicaFailure", status: "True", reason: "WriteFailed", message: input.failure }
    : input.blocked.length > 0
      ? { type: "ReplicaFailure", status: "True", reason: "Blocked", message: input.blocked.join("; ") }
      : { type: "ReplicaFailure", status: "False", reason: "None", message: "" };

  const generation = collaSet.metadata.generation;
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    ...counts,
    currentRevision,
    updatedRevision,
    collisionCount: input.collisionCount,
    conditions: [ready, failure].map((condition) => withTransition(condition, collaSet.status?.conditions, input.now, generation)),
  };
}
