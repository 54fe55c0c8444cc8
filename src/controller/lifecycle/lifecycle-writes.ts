// The writes of PodOpsLifecycle (see pod-ops-lifecycle.ts): its labels and the readiness gate's
// condition (the kubelet keeps the pod not Ready while that condition is not True, and leaves a
// condition it does not own alone). Starting and ending an operation change both in one JSON
// Patch of pods/status, guarded by the pod's resourceVersion: the API server's status strategy
// for pods keeps the spec, owner references and deletion timestamp as they were, and takes the
// labels (k8s.io/kubernetes pkg/registry/core/pod/strategy.go, podStatusStrategy.PrepareForUpdate).
// No one sees a pod labelled as operating but still in traffic, or back in traffic but still
// labelled, and a rollout waits for one write per step. The gate's condition alone is written
// guarded by the condition's position.
import type { Pod } from "../../kube/objects.ts";
import type { JsonPatchOperation } from "../../kube/patch.ts";
import { labelOperations } from "../label-patch.ts";
import type { ResourceClient, StatusClient } from "../../kube/resource-client.ts";
import { formatTime } from "../../kube/timestamps.ts";
import { lifecycleLabel, lifecycleTime, OPERATION_ID, operationLabels, OPERATION_TYPE, PREPARING_DELETE_LABEL, SERVICE_AVAILABLE_LABEL, SERVICE_READY_GATE, type OperationType } from "./pod-ops-lifecycle.ts";

export type LifecyclePods = Pick<ResourceClient<Pod>, "jsonPatch"> & Pick<StatusClient<Pod>, "jsonPatchStatus">;

/**
 * The labels that start an operation (operating and its type), in place of those of an
 * operation before. With `checking` (PodTransitionRules select the pod for its PreCheck stage),
 * the pre-check label alone follows and the pod stays in traffic until they pass it
 * (passPreCheck). Otherwise it passes at once: pre-checked, the permission of its type,
 * preparing (preparing-to-delete for a scale-in) and the gate's condition False — the pod leaves
 * traffic (and is no longer service-available) as the operation begins, in one write.
 */
export function startOperation(pods: LifecyclePods, pod: Pod, nowMs: number, id = OPERATION_ID, type: OperationType = OPERATION_TYPE, checking = false): Promise<Pod> {
  const time = lifecycleTime(nowMs);
  const { namespace = "", name = "" } = pod.metadata ?? {};
  const begun = { [lifecycleLabel("operating", id)]: time, [lifecycleLabel("operationType", id)]: type };
  if (checking) return pods.jsonPatchStatus(namespace, name, labelOperations(pod, { ...begun, [lifecycleLabel("preCheck", id)]: time }, operationLabels(id)));
  return pods.jsonPatchStatus(namespace, name, [
    ...labelOperations(pod, { ...begun, ...passedPreCheckLabels(time, id, type) }, [...operationLabels(id), SERVICE_AVAILABLE_LABEL]),
    ...serviceReadyOperations(pod, "False", nowMs),
  ]);
}

/** Its PodTransitionRules passed the pod's pre-check: pre-check gives way to pre-checked, and it leaves traffic (see startOperation). */
export function passPreCheck(pods: LifecyclePods, pod: Pod, nowMs: number, id = OPERATION_ID, type: OperationType = OPERATION_TYPE): Promise<Pod> {
  const { namespace = "", name = "" } = pod.metadata ?? {};
  return pods.jsonPatchStatus(namespace, name, [
    ...labelOperations(pod, passedPreCheckLabels(lifecycleTime(nowMs), id, type), [lifecycleLabel("preCheck", id), SERVICE_AVAILABLE_LABEL]),
    ...serviceReadyOperations(pod, "False", nowMs),
  ]);
}

function passedPreCheckLabels(time: string, id: string, type: OperationType): Record<string, string> {
  return {
    [lifecycleLabel("preChecked", id)]: time,
    [lifecycleLabel("operationPermission", id, type)]: time,
    [lifecycleLabel("preparing", id)]: time,
    ...(type === "scale-in" ? { [PREPARING_DELETE_LABEL]: time } : {}),
  };
}

/** The operation was carried out: its PostCheck stage begins (the post-check label), for the PodTransitionRules that gate it. */
export function startPostCheck(pods: LifecyclePods, pod: Pod, nowMs: number, id = OPERATION_ID): Promise<Pod> {
  const { namespace = "", name = "" } = pod.metadata ?? {};
  return pods.jsonPatchStatus(namespace, name, labelOperations(pod, { [lifecycleLabel("postCheck", id)]: lifecycleTime(nowMs) }, []));
}

/** The operate label alone: the drained pod may be operated on once operationDelaySeconds have passed. */
export function permitOperation(pods: LifecyclePods, pod: Pod, nowMs: number, id = OPERATION_ID): Promise<Pod> {
  const { namespace = "", name = "" } = pod.metadata ?? {};
  return pods.jsonPatchStatus(namespace, name, labelOperations(pod, { [lifecycleLabel("operate", id)]: lifecycleTime(nowMs) }, []));
}

/**
 * The labels an in-place update carries when the lifecycle operates on the pod: operate (when
 * no delay permitted it before) and operated.
 */
export function operatedLabels(pod: Pod, nowMs: number, id = OPERATION_ID): Record<string, string> {
  const time = lifecycleTime(nowMs);
  const operate = lifecycleLabel("operate", id);
  return { ...(pod.metadata?.labels?.[operate] === undefined ? { [operate]: time } : {}), [lifecycleLabel("operated", id)]: time };
}

/** Adds (Unix nanoseconds) or removes the service-available label. */
export function setServiceAvailable(pods: LifecyclePods, pod: Pod, available: boolean, nowMs: number): Promise<Pod> {
  const { namespace = "", name = "" } = pod.metadata ?? {};
  return pods.jsonPatch(namespace, name, available ? labelOperations(pod, { [SERVICE_AVAILABLE_LABEL]: lifecycleTime(nowMs) }, []) : labelOperations(pod, {}, [SERVICE_AVAILABLE_LABEL]));
}

/**
 * Removes every label of the operation (it completed, or was undone before it was carried out)
 * and turns the gate's condition True: the pod is back in traffic.
 */
export function endOperation(pods: LifecyclePods, pod: Pod, nowMs: number, id = OPERATION_ID): Promise<Pod> {
  const { namespace = "", name = "" } = pod.metadata ?? {};
  return pods.jsonPatchStatus(namespace, name, [...labelOperations(pod, {}, [...operationLabels(id), PREPARING_DELETE_LABEL]), ...serviceReadyOperations(pod, "True", nowMs)]);
}

/** Sets the readiness gate's condition; returns the pod as written (as given when it had that status already). */
export async function setServiceReady(pods: LifecyclePods, pod: Pod, status: "True" | "False", nowMs: number): Promise<Pod> {
  const operations = serviceReadyOperations(pod, status, nowMs);
  if (operations.length === 0) return pod;
  const { namespace = "", name = "" } = pod.metadata ?? {};
  return pods.jsonPatchStatus(namespace, name, operations);
}

/** The operations that give the gate's condition `status`: none when it has it already. */
function serviceReadyOperations(pod: Pod, status: "True" | "False", nowMs: number): JsonPatchOperation[] {
  const conditions = pod.status?.conditions;
  const index = conditions?.findIndex((condition) => condition.type === SERVICE_READY_GATE) ?? -1;
  if (index >= 0 && conditions![index]!.status === status) return [];
  const condition = {
    type: SERVICE_READY_GATE,
    status,
    lastTransitionTime: formatTime(nowMs),
    reason: status === "True" ? "ServiceAvailable" : "Operating",
    message: status === "True" ? "updated by pod-decorator's PodOpsLifecycle: in service" : "updated by pod-decorator's PodOpsLifecycle: out of service for an update",
  };
  if (conditions === undefined) return [{ op: "add", path: "/status/conditions", value: [condition] }];
  if (index < 0) return [{ op: "add", path: "/status/conditions/-", value: condition }];
  return [{ op: "test", path: `/status/conditions/${index}/type`, value: SERVICE_READY_GATE }, { op: "replace", path: `/status/conditions/${index}`, value: condition }];
}
