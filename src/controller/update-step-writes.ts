// The writes of update-steps.ts for one live pod, shared by every controller that moves pods: an
// in-place patch (with the lifecycle's operate label when PodOpsLifecycle runs), and the
// lifecycle's own steps. Each write is guarded (resourceVersion, or the gate condition's place)
// and leaves an expectation, so the next plan waits until the cache shows it.
import type { Pod } from "../kube/objects.ts";
import { isLostRace } from "../kube/errors.ts";
import { pointerSegment, type JsonPatchOperation } from "../kube/patch.ts";
import { endOperation, operatedLabels, passPreCheck, permitOperation, setServiceAvailable, setServiceReady, startOperation, startPostCheck, type LifecyclePods } from "./lifecycle/lifecycle-writes.ts";
import { OPERATION_ID } from "./lifecycle/pod-ops-lifecycle.ts";
import type { UpdateStep } from "./update-steps.ts";

export interface StepWriter {
  pods: LifecyclePods;
  nowMs(): number;
  /** The PodOpsLifecycle operation id (default: the CollaSet controller's). */
  operationId?: string;
  /** The next plan waits until the cache shows this pod changed. */
  expectNewer(pod: Pod): void;
  /** A Normal Event on the object the controller answers for. */
  record(reason: string, message: string): void;
}

/** A step on a live pod that every controller writes the same way. */
export type PodStep = UpdateStep<never>;

/**
 * Carries one step out. An in-place patch that lost its race (the pod changed since the cache
 * showed it) does nothing: the change requeues. Other errors are the caller's to report.
 */
export async function writeUpdateStep(writer: StepWriter, step: PodStep): Promise<void> {
  const id = writer.operationId ?? OPERATION_ID;
  const name = step.pod.metadata?.name ?? "";
  switch (step.kind) {
    case "in-place": {
      const { namespace = "" } = step.pod.metadata ?? {};
      const operations: JsonPatchOperation[] = step.operate === true
        ? [...step.operations, ...Object.entries(operatedLabels(step.pod, writer.nowMs(), id)).map(([label, value]) => ({ op: "add" as const, path: `/metadata/labels/${pointerSegment(label)}`, value }))]
        : step.operations;
      try {
        await writer.pods.jsonPatch(namespace, name, operations);
      } catch (error) {
        if (isLostRace(error)) return;
        throw error;
      }
      writer.expectNewer(step.pod);
      writer.record("UpdatedInPlace", `updated pod ${name} in place`);
      return;
    }
    case "start-operation": {
      // The operation begins and the pod leaves traffic in one write, unless PodTransitionRules
      // check it first: a round trip through the cache per pod is what a rollout waits on.
      await startOperation(writer.pods, step.pod, writer.nowMs(), id, step.operationType, step.checking === true);
      writer.expectNewer(step.pod);
      const purpose = step.operationType === "scale-in" ? "its deletion" : "an update";
      writer.record("OperationStarted", step.checking === true ? `pod ${name} is pre-checked by its PodTransitionRules before it leaves traffic for ${purpose} (PodOpsLifecycle)` : `pod ${name} leaves traffic for ${purpose} (PodOpsLifecycle)`);
      return;
    }
    case "pass-pre-check": {
      await passPreCheck(writer.pods, step.pod, writer.nowMs(), id, step.operationType);
      writer.expectNewer(step.pod);
      writer.record("PreChecked", `pod ${name} passed its PodTransitionRules and leaves traffic for ${step.operationType === "scale-in" ? "its deletion" : "an update"} (PodOpsLifecycle)`);
      return;
    }
    case "start-post-check": {
      await startPostCheck(writer.pods, step.pod, writer.nowMs(), id);
      writer.expectNewer(step.pod);
      return;
    }
    case "permit-operation": {
      await permitOperation(writer.pods, step.pod, writer.nowMs(), id);
      writer.expectNewer(step.pod);
      return;
    }
    case "set-service-available": {
      await setServiceAvailable(writer.pods, step.pod, step.available, writer.nowMs());
      writer.expectNewer(step.pod);
      return;
    }
    case "leave-traffic":
    case "mark-service-ready": {
      const written = await setServiceReady(writer.pods, step.pod, step.kind === "leave-traffic" ? "False" : "True", writer.nowMs());
      if (written !== step.pod) writer.expectNewer(step.pod);
      return;
    }
    case "end-operation": {
      await endOperation(writer.pods, step.pod, writer.nowMs(), id);
      writer.expectNewer(step.pod);
      writer.record("OperationCompleted", `pod ${name} is back in traffic: ${step.reason}`);
      return;
    }
  }
}
