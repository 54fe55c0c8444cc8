// The writes of PodOpsLifecycle (see pod-ops-lifecycle.ts): its labels, by JSON Patch guarded
// by the pod's resourceVersion, and the readiness gate's condition, by a JSON Patch of
// pods/status guarded by the condition's position — the kubelet keeps the pod not Ready while
// the gate's condition is not True, and leaves a condition it does not own alone.
import type { Pod } from "../../kube/objects.ts";
import type { JsonPatchOperation } from "../../kube/patch.ts";
import type { ResourceClient, StatusClient } from "../../kube/resource-client.ts";
import { formatTime } from "../../kube/timestamps.ts";
import { lifecycleLabel, lifecycleTime, OPERATION_ID, operationLabels, OPERATION_TYPE, SERVICE_READY_GATE } from "./pod-ops-lifecycle.ts";

export type LifecyclePods = Pick<ResourceClient<Pod>, "jsonPatch"> & Pick<StatusClient<Pod>, "jsonPatchStatus">;

function pointer(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

function labelOperations(pod: Pod, set: Record<string, string>, remove: readonly string[]): JsonPatchOperation[] {
  const labels = pod.metadata?.labels;
  const operations: JsonPatchOperation[] = [{ op: "test", path: "/metadata/resourceVersion", value: pod.metadata?.resourceVersion }];
  if (labels === undefined) operations.push({ op: "add", path: "/metadata/labels", value: {} });
  for (const key of remove) if (labels !== undefined && key in labels && !(key in set)) operations.push({ op: "remove", path: `/metadata/labels/${pointer(key)}` });
  for (const [key, value] of Object.entries(set)) operations.push({ op: "add", path: `/metadata/labels/${pointer(key)}`, value });
  return operations;
}

/** The labels that start an update: operating, its type and permission, pre-checked, prepare. */
export function startOperation(pods: LifecyclePods, pod: Pod, nowMs: number, id = OPERATION_ID): Promise<Pod> {
  const time = lifecycleTime(nowMs);
  const { namespace = "", name = "" } = pod.metadata ?? {};
  return pods.jsonPatch(namespace, name, labelOperations(pod, {
    [lifecycleLabel("operating", id)]: time,
    [lifecycleLabel("operationType", id)]: OPERATION_TYPE,
    [lifecycleLabel("preCheck", id)]: time,
    [lifecycleLabel("preChecked", id)]: time,
    [lifecycleLabel("operationPermission", id)]: time,
    [lifecycleLabel("prepare", id)]: time,
  }, []));
}

/** The label an in-place update or a recreation carries when the lifecycle operates on the pod. */
export function operateLabel(nowMs: number, id = OPERATION_ID): Record<string, string> {
  return { [lifecycleLabel("operate", id)]: lifecycleTime(nowMs) };
}

/** Removes every label of the operation: it completed, or was undone before it was carried out. */
export function endOperation(pods: LifecyclePods, pod: Pod, id = OPERATION_ID): Promise<Pod> {
  const { namespace = "", name = "" } = pod.metadata ?? {};
  return pods.jsonPatch(namespace, name, labelOperations(pod, {}, operationLabels(id)));
}

/** Sets the readiness gate's condition; returns the pod as written (as given when it had that status already). */
export async function setServiceReady(pods: LifecyclePods, pod: Pod, status: "True" | "False", nowMs: number): Promise<Pod> {
  const conditions = pod.status?.conditions;
  const index = conditions?.findIndex((condition) => condition.type === SERVICE_READY_GATE) ?? -1;
  if (index >= 0 && conditions![index]!.status === status) return pod;
  const condition = {
    type: SERVICE_READY_GATE,
    status,
    lastTransitionTime: formatTime(nowMs),
    reason: status === "True" ? "ServiceAvailable" : "Operating",
    message: status === "True" ? "updated by pod-decorator's PodOpsLifecycle: in service" : "updated by pod-decorator's PodOpsLifecycle: out of service for an update",
  };
  const operations: JsonPatchOperation[] = conditions === undefined
    ? [{ op: "add", path: "/status/conditions", value: [condition] }]
    : index < 0
      ? [{ op: "add", path: "/status/conditions/-", value: condition }]
      : [{ op: "test", path: `/status/conditions/${index}/type`, value: SERVICE_READY_GATE }, { op: "replace", path: `/status/conditions/${index}`, value: condition }];
  const { namespace = "", name = "" } = pod.metadata ?? {};
  return pods.jsonPatchStatus(namespace, name, operations);
}
