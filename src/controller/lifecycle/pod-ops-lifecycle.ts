// KusionStack's PodOpsLifecycle protocol, as the CollaSet controller speaks it before it updates
// a pod (names from kube-api's apps/v1alpha1 well_known_labels.go and well_known_annotations.go,
// the module kuperator pins; `preparing` and `completing` were `prepare` and `complete` before
// kube-api v0.1.1): the pod leaves traffic
// (readiness gate pod.kusionstack.io/service-ready False), waits until the protection
// finalizers (prot.podopslifecycle.kusionstack.io/*) that traffic controllers hold are gone —
// or, when none are held, a drain delay — is operated on, and returns to traffic once its
// containers are ready. Pure: the step a pod is in and what comes next, from the pod and a clock.
import type { Pod } from "../../kube/objects.ts";
import { parseTime } from "../../kube/timestamps.ts";

/** Marks a pod as taking part in PodOpsLifecycle (value "true"). */
export const CONTROL_LABEL = "kusionstack.io/control";
/** The readiness gate whose condition the controller turns False before and True after an operation. */
export const SERVICE_READY_GATE = "pod.kusionstack.io/service-ready";
/** Finalizers with this prefix mean "a traffic controller still has this pod in rotation". */
export const PROTECTION_FINALIZER_PREFIX = "prot.podopslifecycle.kusionstack.io";

/** Label families: each key is `<prefix>/<operation id>` (operation-permission: `<prefix>/<type>`). */
export const LIFECYCLE_PREFIXES = {
  operating: "operating.podopslifecycle.kusionstack.io",
  operationType: "operation-type.podopslifecycle.kusionstack.io",
  operationPermission: "operation-permission.podopslifecycle.kusionstack.io",
  undoOperationType: "undo-operation-type.podopslifecycle.kusionstack.io",
  preCheck: "pre-check.podopslifecycle.kusionstack.io",
  preChecked: "pre-checked.podopslifecycle.kusionstack.io",
  preparing: "preparing.podopslifecycle.kusionstack.io",
  operate: "operate.podopslifecycle.kusionstack.io",
  operated: "operated.podopslifecycle.kusionstack.io",
  postCheck: "post-check.podopslifecycle.kusionstack.io",
  postChecked: "post-checked.podopslifecycle.kusionstack.io",
  completing: "completing.podopslifecycle.kusionstack.io",
} as const;

/**
 * Set (Unix nanoseconds) while the pod serves: ready, no operation under way, and every finalizer
 * its available-conditions annotation expects is on it (kuperator's CheckAvailable reads it).
 */
export const SERVICE_AVAILABLE_LABEL = "podopslifecycle.kusionstack.io/service-available";
/**
 * JSON `{"expectedFinalizers": {"<key>": "<finalizer>"}}`, written by traffic controllers: the
 * finalizers that say "back in my rotation". An operation is not over until they are all back.
 */
export const AVAILABLE_CONDITIONS_ANNOTATION = "pod.kusionstack.io/available-conditions";

/** The operation id and type the CollaSet controller uses (kuperator's CollaSet update adapter). */
export const OPERATION_ID = "collaset";
/** The operation id of a decoration rollout to pods of other owners than a CollaSet. */
export const DECORATION_OPERATION_ID = "poddecoration";
export const OPERATION_TYPE = "update";
/** kube-xset's operation types of the CollaSet's operations (it uses one id, "collaset", for both). */
export type OperationType = "update" | "scale-in";
/** kube-api's PodPreparingDeleteLabel: set when a scale-in operation begins (kuperator's WhenBeginDelete). */
export const PREPARING_DELETE_LABEL = "podopslifecycle.kusionstack.io/preparing-to-delete";

/** operation-permission is keyed by the operation's type, the other families by its id. */
export function lifecycleLabel(prefix: keyof typeof LIFECYCLE_PREFIXES, id = OPERATION_ID, type: OperationType = OPERATION_TYPE): string {
  return `${LIFECYCLE_PREFIXES[prefix]}/${prefix === "operationPermission" ? type : id}`;
}

/** The label keys an operation of ours carries, removed together when it completes or is undone. */
export function operationLabels(id = OPERATION_ID): string[] {
  return [...(Object.keys(LIFECYCLE_PREFIXES) as (keyof typeof LIFECYCLE_PREFIXES)[]).map((prefix) => lifecycleLabel(prefix, id)), lifecycleLabel("operationPermission", id, "scale-in")];
}

/** Unix nanoseconds, the protocol's time label value. */
export function lifecycleTime(nowMs: number): string {
  return (BigInt(Math.floor(nowMs)) * 1_000_000n).toString();
}

function timeOfLabel(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,20}$/.test(value)) return undefined;
  return Number(BigInt(value) / 1_000_000n);
}

export type LifecycleStep =
  /** No operation of ours. */
  | { kind: "none" }
  /**
   * Begun since `sinceMs` and waiting for the PodTransitionRules that select the pod to pass it
   * (the pre-check label, no pre-checked yet): still in traffic.
   */
  | { kind: "pre-checking"; sinceMs: number }
  /** Taken out of traffic since `sinceMs`, not yet operated on. */
  | { kind: "preparing"; sinceMs: number }
  /**
   * Out of traffic and drained: allowed to be operated on since `sinceMs` (the operate label),
   * not yet operated on — it waits out operationDelaySeconds.
   */
  | { kind: "permitted"; sinceMs: number }
  /** Operated on since `sinceMs` (the operated label): waiting for its containers, then back to traffic. */
  | { kind: "operating"; sinceMs: number }
  /** Someone asked to undo the operation before it was carried out. */
  | { kind: "undone" };

/** The step the pod is in of the operation `id`. */
export function lifecycleStep(pod: Pod, id = OPERATION_ID): LifecycleStep {
  const labels = pod.metadata?.labels ?? {};
  const operating = labels[lifecycleLabel("operating", id)];
  if (operating === undefined) return { kind: "none" };
  const operate = labels[lifecycleLabel("operate", id)];
  const operated = labels[lifecycleLabel("operated", id)];
  if (operated !== undefined) return { kind: "operating", sinceMs: timeOfLabel(operated) ?? 0 };
  if (labels[lifecycleLabel("undoOperationType", id)] !== undefined) return { kind: "undone" };
  if (operate !== undefined) return { kind: "permitted", sinceMs: timeOfLabel(operate) ?? 0 };
  const preCheck = labels[lifecycleLabel("preCheck", id)];
  if (preCheck !== undefined && labels[lifecycleLabel("preChecked", id)] === undefined) return { kind: "pre-checking", sinceMs: timeOfLabel(preCheck) ?? timeOfLabel(operating) ?? 0 };
  return { kind: "preparing", sinceMs: timeOfLabel(labels[lifecycleLabel("preparing", id)] ?? operating) ?? 0 };
}

/** In an operation of ours: out of traffic, or about to be. */
export function inLifecycle(pod: Pod): boolean {
  return lifecycleStep(pod, OPERATION_ID).kind !== "none" || lifecycleStep(pod, DECORATION_OPERATION_ID).kind !== "none";
}

/**
 * Out of service for an operation of ours: past its pre-check (a pod whose operation waits for
 * its PodTransitionRules still serves, as kuperator keeps it service-available until preparing).
 */
export function outOfService(pod: Pod): boolean {
  return [OPERATION_ID, DECORATION_OPERATION_ID].some((id) => {
    const kind = lifecycleStep(pod, id).kind;
    return kind !== "none" && kind !== "pre-checking";
  });
}

/**
 * The PodTransitionRule stage the pod is in (kuperator registers them by label prefix): PreCheck
 * while a pre-check label is on it, PostCheck while a post-check label is; undefined otherwise.
 */
export function transitionStage(pod: Pod): "PreCheck" | "PostCheck" | undefined {
  const keys = Object.keys(pod.metadata?.labels ?? {});
  if (keys.some((key) => key.startsWith(`${LIFECYCLE_PREFIXES.preCheck}/`))) return "PreCheck";
  if (keys.some((key) => key.startsWith(`${LIFECYCLE_PREFIXES.postCheck}/`))) return "PostCheck";
  return undefined;
}

/** When the PostCheck stage of the operation `id` began (its post-check label), if it did. */
export function postCheckSinceMs(pod: Pod, id = OPERATION_ID): number | undefined {
  return timeOfLabel(pod.metadata?.labels?.[lifecycleLabel("postCheck", id)]);
}

/** The operation `id` carries the post-check label (its PostCheck stage has begun), and whether it passed it. */
export function postCheck(pod: Pod, id = OPERATION_ID): "none" | "checking" | "checked" {
  const labels = pod.metadata?.labels ?? {};
  if (labels[lifecycleLabel("postChecked", id)] !== undefined) return "checked";
  return labels[lifecycleLabel("postCheck", id)] !== undefined ? "checking" : "none";
}

export function hasServiceReadyGate(pod: Pod): boolean {
  return (pod.spec?.readinessGates ?? []).some((gate) => gate.conditionType === SERVICE_READY_GATE);
}

/** The gate condition's status: "True", "False", or undefined while it was never written. */
export function serviceReady(pod: Pod): string | undefined {
  return pod.status?.conditions?.find((condition) => condition.type === SERVICE_READY_GATE)?.status;
}

export function protectionFinalizers(pod: Pod): string[] {
  return (pod.metadata?.finalizers ?? []).filter((finalizer) => finalizer.startsWith(PROTECTION_FINALIZER_PREFIX));
}

/**
 * The finalizers the available-conditions annotation expects that the pod does not carry, by
 * their key. An annotation that is not that JSON expects nothing (as kuperator reads it, whose
 * parse error also leaves the pod available).
 */
export function missingExpectedFinalizers(pod: Pod): string[] {
  const annotation = pod.metadata?.annotations?.[AVAILABLE_CONDITIONS_ANNOTATION];
  if (annotation === undefined) return [];
  let expected: unknown;
  try {
    expected = (JSON.parse(annotation) as { expectedFinalizers?: unknown } | null)?.expectedFinalizers;
  } catch {
    return [];
  }
  if (typeof expected !== "object" || expected === null) return [];
  const held = new Set(pod.metadata?.finalizers ?? []);
  return Object.values(expected).filter((finalizer): finalizer is string => typeof finalizer === "string" && !held.has(finalizer));
}

export type Readiness = { ready: true } | { ready: false; reason: string; retryInMs?: number };

/**
 * Whether a preparing pod may be operated on: out of traffic (the gate's condition False and
 * the pod no longer Ready, so the EndpointSlice lists it not ready), no protection finalizer
 * left, and — when no traffic controller holds one — the drain delay passed since it left:
 * since the kubelet marked it not Ready, for a pod with the gate (the EndpointSlice follows that,
 * and a slow kubelet must not eat the delay), else since the operation began.
 */
export function readyToOperate(pod: Pod, sinceMs: number, nowMs: number, drainDelayMs: number): Readiness {
  if (serviceReady(pod) !== "False") return { ready: false, reason: `waiting for condition ${SERVICE_READY_GATE} to be False` };
  const podReady = pod.status?.conditions?.find((condition) => condition.type === "Ready");
  const gated = hasServiceReadyGate(pod);
  if (gated && podReady?.status === "True") return { ready: false, reason: "waiting for the kubelet to mark the pod not Ready" };
  const held = protectionFinalizers(pod);
  if (held.length > 0) return { ready: false, reason: `waiting for protection finalizers ${held.join(", ")} to be removed` };
  // No delay asked for: nothing to round up.
  if (drainDelayMs <= 0) return { ready: true };
  // Condition times have whole seconds: the kubelet marked the pod not Ready within the second
  // after. Compared with this process's clock, as Kubernetes' controllers do for minReadySeconds.
  const notReadyAt = gated && podReady?.status === "False" ? parseTime(podReady.lastTransitionTime) : undefined;
  const outSince = notReadyAt === undefined ? sinceMs : Math.max(sinceMs, notReadyAt + 999);
  const left = outSince + drainDelayMs - nowMs;
  if (left > 0) return { ready: false, reason: `draining for ${Math.ceil(left / 1000)}s more`, retryInMs: left };
  return { ready: true };
}

/** Every container (and native sidecar) reports ready: the operation is over for the pod. */
export function containersReady(pod: Pod): boolean {
  const statuses = pod.status?.containerStatuses ?? [];
  const sidecars = new Set((pod.spec?.initContainers ?? []).filter((container) => container.restartPolicy === "Always").map((container) => container.name));
  const sidecarStatuses = (pod.status?.initContainerStatuses ?? []).filter((status) => sidecars.has(status.name));
  return statuses.length === (pod.spec?.containers ?? []).length
    && statuses.every((status) => status.ready)
    && sidecarStatuses.length === sidecars.size
    && sidecarStatuses.every((status) => status.ready);
}
