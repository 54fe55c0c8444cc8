// How a controller moves the pods that should change (DESIGN §5, §6), the one definition for
// CollaSet pods and for decoration rollouts to pods of other owners: in the order given, at most
// maxUnavailable unavailable at once (a pod unavailable anyway costs nothing), and with
// PodOpsLifecycle when it is on — out of traffic, drained, operated on, back in traffic. Pods
// not being changed are taken through the rest of their operation. Pure: the caller writes.
import { isPodReady, updateOrder } from "../decoration/rollout.ts";
import type { Pod } from "../kube/objects.ts";
import type { JsonPatchOperation } from "../kube/patch.ts";
import { containersReady, hasServiceReadyGate, lifecycleLabel, lifecycleStep, missingExpectedFinalizers, OPERATION_ID, postCheck, postCheckSinceMs, readyToOperate, serviceReady, SERVICE_AVAILABLE_LABEL, type LifecycleStep, type OperationType } from "./lifecycle/pod-ops-lifecycle.ts";
import type { TransitionGate } from "./lifecycle/transition-gate.ts";
import { runsSpecImages } from "./pod-availability.ts";

/** The steps of an update that touch one live pod; `R` is the caller's way of replacing one. */
export type UpdateStep<R> =
  /** `operate`: the PodOpsLifecycle operation on the pod is carried out by this update. */
  | { kind: "in-place"; pod: Pod; operations: JsonPatchOperation[]; operate?: boolean }
  /**
   * PodOpsLifecycle (lifecycle/pod-ops-lifecycle.ts): begins an operation on the pod, an update
   * unless said; the labels of an operation it went through before are replaced. `checking`:
   * PodTransitionRules check it first (PreCheck), and it stays in traffic until they pass it.
   */
  | { kind: "start-operation"; pod: Pod; operationType?: OperationType; checking?: boolean }
  /** Its PodTransitionRules passed the pod's pre-check: it leaves traffic. */
  | { kind: "pass-pre-check"; pod: Pod; operationType?: OperationType }
  /** Carried out: the operation's PostCheck stage begins, for the PodTransitionRules that gate it. */
  | { kind: "start-post-check"; pod: Pod }
  /** Drained: the pod may be operated on once operationDelaySeconds have passed (the operate label). */
  | { kind: "permit-operation"; pod: Pod }
  /** Turns the readiness gate's condition False: the pod leaves the Service's endpoints. */
  | { kind: "leave-traffic"; pod: Pod }
  /** Gate condition True and the operation's labels removed: it completed, was undone, or is no longer needed. */
  | { kind: "end-operation"; pod: Pod; reason: string }
  /** A pod with the gate, no operation and ready containers: its gate condition goes True. */
  | { kind: "mark-service-ready"; pod: Pod }
  /** The service-available label follows the pod: Ready, no operation, its expected finalizers on it. */
  | { kind: "set-service-available"; pod: Pod; available: boolean }
  | R;

/** PodOpsLifecycle before updates; absent: pods are updated without it. */
export interface LifecycleSettings {
  nowMs: number;
  /**
   * With no protection finalizer on a pod, how long it stays out of traffic before it is operated
   * on, unless the workload sets an operation delay (then that is the one delay).
   */
  drainDelayMs: number;
  /** A step waiting this long is reported as stuck (status and an Event). */
  stuckAfterMs: number;
  /**
   * The workload's operationDelaySeconds, when it sets one: how long a drained pod waits, once
   * allowed to be operated on (the operate label), before it is — in place of the drain delay.
   */
  operationDelayMs?: number | undefined;
  /** The PodTransitionRules that gate the PreCheck and PostCheck stages (absent: none does). */
  transitions?: TransitionGate | undefined;
  /**
   * A delay asked for one pod's operation (an OperationJob's operationDelaySeconds for the pod it
   * replaces), in place of the workload's: still one delay.
   */
  operationDelayFor?: ((pod: Pod) => number | undefined) | undefined;
}

/** A pod that should change, and how once it may. */
export interface PodChange<R> {
  pod: Pod;
  available: boolean;
  change: { kind: "in-place"; operations: JsonPatchOperation[] } | { kind: "replace"; step: R };
}

export interface UpdateStepsInput<R> {
  /** In the order they go (orderForUpdate). */
  changes: readonly PodChange<R>[];
  /** Every live pod of the workload (those not changing are taken through their operation). */
  pods: readonly Pod[];
  maxUnavailable: number;
  /** Pods of the workload unavailable now (or about to be created). */
  unavailable: number;
  lifecycle?: LifecycleSettings | undefined;
  /** Which pods go through PodOpsLifecycle when it is on (default: all). */
  lifecycleFor?: (pod: Pod) => boolean;
  /** The PodOpsLifecycle operation id (default: the CollaSet controller's). */
  operationId?: string;
}

export interface UpdateSteps<R> {
  steps: UpdateStep<R>[];
  /** Steps waiting longer than stuckAfterMs, with messages naming the pod. */
  stuck: { pod: Pod; message: string }[];
  /** Each is a reason to look again after that many milliseconds (a drain delay ends, a wait becomes stuck). */
  retries: number[];
}

/**
 * The order the changes of pods go in (what `changes` wants): unavailable pods first (updating
 * one costs nothing), then the rollouts' update order among pods none of which counts as updated
 * (not ready first, then CollaSet instance id, then name).
 */
export function orderForUpdate<T extends { pod: Pod; available: boolean }>(candidates: readonly T[]): T[] {
  const entries = candidates.map((candidate) => ({ name: candidate.pod.metadata?.name ?? "", labels: candidate.pod.metadata?.labels ?? {}, ready: isPodReady(candidate.pod), current: undefined, candidate }));
  return updateOrder(entries, "").sort((a, b) => Number(a.candidate.available) - Number(b.candidate.available)).map((entry) => entry.candidate);
}

/**
 * An operation undone, or carried out and still waiting for its containers, finishes before the
 * pod is looked at again. One carried out whose containers are ready may be started over for a
 * newer change (the pod is out of traffic already; it may wait for traffic to take it back).
 */
export function operationInProgress(pod: Pod, operationId = OPERATION_ID): boolean {
  const kind = lifecycleStep(pod, operationId).kind;
  return kind === "undone" || (kind === "operating" && !operationCarriedOut(pod));
}

/** The update reached the pod: every container runs the image its spec names and is ready. */
function operationCarriedOut(pod: Pod): boolean {
  return runsSpecImages(pod) && containersReady(pod);
}

/** Steps, stuck waits and retries as a plan collects them. */
class StepCollector<R> implements UpdateSteps<R> {
  readonly steps: UpdateStep<R>[] = [];
  readonly stuck: { pod: Pod; message: string }[] = [];
  readonly retries: number[] = [];

  /** A lifecycle step that waits: reported stuck past stuckAfterMs, looked at again when that or `retryInMs` comes. */
  waitFor(pod: Pod, lifecycle: LifecycleSettings, sinceMs: number, reason: string, retryInMs?: number): void {
    const waited = lifecycle.nowMs - sinceMs;
    if (retryInMs !== undefined) this.retries.push(retryInMs);
    if (waited >= lifecycle.stuckAfterMs) this.stuck.push({ pod, message: `pod ${pod.metadata?.name ?? ""}: PodOpsLifecycle stuck for ${Math.floor(waited / 1000)}s: ${reason}` });
    else this.retries.push(lifecycle.stuckAfterMs - waited);
  }

  /**
   * Takes a pod toward being operated on: its operation begun (an operation of another type, or
   * one carried out for an older change, starts over), out of traffic, drained, then allowed and
   * operationDelaySeconds later operated on. True once it may be, now.
   */
  towardOperation(pod: Pod, step: LifecycleStep, lifecycle: LifecycleSettings, id: string, type: OperationType): boolean {
    const ofType = type === "update" ? {} : { operationType: type };
    if (step.kind === "none" || step.kind === "operating" || step.kind === "undone" || operationTypeOf(pod, id) !== type) {
      const checking = (lifecycle.transitions?.rulesFor(pod, "PreCheck").length ?? 0) > 0;
      this.steps.push({ kind: "start-operation", pod, ...ofType, ...(checking ? { checking } : {}) });
      return false;
    }
    if (step.kind === "pre-checking") {
      // Still in traffic: its PodTransitionRules decide when it may leave (kuperator's PreCheck stage).
      const verdict = lifecycle.transitions?.verdict(pod, "PreCheck") ?? { passed: true };
      if (verdict.passed) this.steps.push({ kind: "pass-pre-check", pod, ...ofType });
      else this.waitFor(pod, lifecycle, step.sinceMs, verdict.reason);
      return false;
    }
    if (serviceReady(pod) !== "False") {
      this.steps.push({ kind: "leave-traffic", pod });
      return false;
    }
    // One delay: the pod's own (an OperationJob's) or the workload's operation delay when one is
    // set (counted from the operate label, as kube-xset's AllowOps counts it), else the drain delay.
    const operationDelayMs = lifecycle.operationDelayFor?.(pod) ?? lifecycle.operationDelayMs;
    const delayMs = operationDelayMs ?? 0;
    if (step.kind === "preparing") {
      const readiness = readyToOperate(pod, step.sinceMs, lifecycle.nowMs, operationDelayMs === undefined ? lifecycle.drainDelayMs : 0);
      if (!readiness.ready) {
        this.waitFor(pod, lifecycle, step.sinceMs, readiness.reason, readiness.retryInMs);
        return false;
      }
      if (delayMs <= 0) return true;
      this.steps.push({ kind: "permit-operation", pod });
      this.retries.push(delayMs);
      return false;
    }
    // Permitted: operated on once operationDelaySeconds have passed since.
    const left = step.sinceMs + delayMs - lifecycle.nowMs;
    if (left <= 0) return true;
    this.retries.push(left);
    return false;
  }
}

function operationTypeOf(pod: Pod, id: string): string | undefined {
  return pod.metadata?.labels?.[lifecycleLabel("operationType", id)];
}

/** A pod to delete (scale-in, podToDelete, the to-delete label, a replace's end), and the step that deletes it. */
export interface PodDeletion<R> {
  pod: Pod;
  step: R;
}

/**
 * Deletions as kuperator makes them: with PodOpsLifecycle, through a scale-in operation (out of
 * traffic, drained, operationDelaySeconds after it was allowed) before the pod is deleted, with
 * no maxUnavailable budget (a pod that goes is not coming back unavailable); without it, at once.
 */
export function planDeletionSteps<R>(deletions: readonly PodDeletion<R>[], lifecycle: LifecycleSettings | undefined, operationId = OPERATION_ID): UpdateSteps<R> {
  const collected = new StepCollector<R>();
  for (const { pod, step } of deletions) {
    if (lifecycle === undefined || collected.towardOperation(pod, lifecycleStep(pod, operationId), lifecycle, operationId, "scale-in")) collected.steps.push(step);
  }
  return collected;
}

export function planUpdateSteps<R>(input: UpdateStepsInput<R>): UpdateSteps<R> {
  const lifecycleOf = (pod: Pod) => (input.lifecycle !== undefined && (input.lifecycleFor?.(pod) ?? true) ? input.lifecycle : undefined);
  const id = input.operationId ?? OPERATION_ID;
  const collected = new StepCollector<R>();
  const { steps } = collected;
  const waitFor = (pod: Pod, sinceMs: number, reason: string) => {
    const lifecycle = lifecycleOf(pod);
    if (lifecycle !== undefined) collected.waitFor(pod, lifecycle, sinceMs, reason);
  };

  /**
   * kuperator's PostCheck stage, for an operation carried out: true once no PodTransitionRule
   * gates it or they all passed the pod; else the post-check label is written, or the pod waits.
   */
  const postChecked = (pod: Pod): boolean => {
    const lifecycle = lifecycleOf(pod);
    const gate = lifecycle?.transitions;
    if (lifecycle === undefined || gate === undefined || postCheck(pod, id) === "checked" || gate.rulesFor(pod, "PostCheck").length === 0) return true;
    if (postCheck(pod, id) === "none") {
      steps.push({ kind: "start-post-check", pod });
      return false;
    }
    const verdict = gate.verdict(pod, "PostCheck");
    if (!verdict.passed) collected.waitFor(pod, lifecycle, postCheckSinceMs(pod, id) ?? lifecycle.nowMs, verdict.reason);
    return verdict.passed;
  };

  let unavailable = input.unavailable;
  // Pods in an operation that should still be changed; any other is taken back into traffic.
  const operationWanted = new Set<Pod>();
  const changing = new Set<Pod>();
  for (const { pod, available, change } of input.changes) {
    const lifecycle = lifecycleOf(pod);
    const step = lifecycle === undefined ? { kind: "none" as const } : lifecycleStep(pod, id);
    if (step.kind === "undone" || (step.kind === "operating" && !operationCarriedOut(pod))) continue;
    if (available) {
      if (unavailable >= input.maxUnavailable) continue;
      unavailable++;
    }
    if (lifecycle !== undefined) {
      operationWanted.add(pod);
      // Out of traffic first (the pod counts as unavailable from here on), then operated on.
      if (step.kind === "none" || step.kind === "operating") changing.add(pod);
      if (!collected.towardOperation(pod, step, lifecycle, id, "update")) continue;
    }
    changing.add(pod);
    steps.push(change.kind === "in-place" ? { kind: "in-place", pod, operations: change.operations, ...(lifecycle === undefined ? {} : { operate: true }) } : change.step);
  }

  for (const pod of input.pods) {
    if (changing.has(pod)) continue;
    const step = lifecycleStep(pod, id);
    switch (step.kind) {
      case "none": {
        if (!hasServiceReadyGate(pod)) break;
        const labelled = pod.metadata?.labels?.[SERVICE_AVAILABLE_LABEL] !== undefined;
        if (serviceReady(pod) !== "True") {
          // Not in traffic yet: a service-available label is not this controller's (written by hand), and goes.
          if (labelled) steps.push({ kind: "set-service-available", pod, available: false });
          else if (containersReady(pod)) steps.push({ kind: "mark-service-ready", pod });
          break;
        }
        const available = isPodReady(pod) && missingExpectedFinalizers(pod).length === 0;
        if (labelled !== available) steps.push({ kind: "set-service-available", pod, available });
        break;
      }
      case "undone":
        steps.push({ kind: "end-operation", pod, reason: "its operation was undone" });
        break;
      case "pre-checking":
      case "preparing":
        if (!operationWanted.has(pod)) steps.push({ kind: "end-operation", pod, reason: "it no longer needs an update" });
        break;
      case "permitted":
      case "operating": {
        if (step.kind === "permitted" && operationWanted.has(pod)) break;
        // Over once the containers run the new images and are ready, and every finalizer the
        // pod's available-conditions annotation expects is back (traffic has taken it back).
        const missing = missingExpectedFinalizers(pod);
        if (!operationCarriedOut(pod)) waitFor(pod, step.sinceMs, "waiting for its containers to run the new images and be ready");
        else if (missing.length > 0) waitFor(pod, step.sinceMs, `waiting for the finalizers its available-conditions annotation expects: ${missing.join(", ")}`);
        else if (step.kind === "operating" && !postChecked(pod)) break;
        else steps.push({ kind: "end-operation", pod, reason: step.kind === "operating" ? "its update completed" : "it no longer needs an update" });
        break;
      }
    }
  }
  return collected;
}
