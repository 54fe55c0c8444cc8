// One OperationJob's next steps, decided from cached objects as kuperator's OperationJob
// controller decides them (pkg/controllers/operationjob: operationjob_manager.go, opscore,
// replace/replace.go): each target (a pod named in the job's namespace) carries its own status;
// the partition picks the targets to operate on, those already started first; a `Replace` labels
// the pod collaset.kusionstack.io/to-replace with kuperator's replace-protection finalizer, so its
// CollaSet replaces it (a surge pod first, the pod released once the surge pod serves); the
// target succeeds once its pod is gone and its new pod is service-available. A target still not
// done activeDeadlineSeconds after it started fails and is let go (label and finalizer off, which
// cancels the replace); the job is deleted TTLSecondsAfterFinished after it finished.
//
// Beyond kuperator: a pod whose owner cannot replace it so (anything but a CollaSet here) is not
// labelled but fails at once, with the reason, rather than wait for a replace that never comes.
// Pure: the reconciler writes what this says.
import type { OperationJob, OperationJobStatus, OpsStatus, OperationProgress } from "../../api/operationjob.ts";
import { DEFAULT_ACTIVE_DEADLINE_SECONDS, DEFAULT_TTL_SECONDS_AFTER_FINISHED, REPLACE_ACTION } from "../../api/operationjob.ts";
import type { Pod } from "../../kube/objects.ts";
import { formatTime, parseTime } from "../../kube/timestamps.ts";
import { INSTANCE_ID_LABEL, PAIR_NEW_ID_LABEL, PAIR_ORIGIN_NAME_LABEL, REPLACED_BY_UPDATE_LABEL, TO_DELETE_LABEL, TO_REPLACE_LABEL } from "../collaset/pod-state.ts";
import { SERVICE_AVAILABLE_LABEL } from "../lifecycle/pod-ops-lifecycle.ts";

/** kuperator's OperationJobReplacePodFinalizer: the origin's object stays until the job has seen its new pod. */
export const REPLACE_PROTECTION_FINALIZER = "finalizer.operationjob.kusionstack.io/replace-protected";
/** kube-api's ExtraInfoReplacedNewPodKey. */
export const NEW_POD_INFO = "NewPod";
/** kuperator's ExtraInfoReleased and ExtraInfoNotAllowedToReplaceNewPod. */
export const RELEASED_INFO = "Released";
export const NOT_ALLOWED_INFO = "NotAllowedToReplaceNewPod";
/** kube-api's ReasonPodNotFound; kuperator's ReasonGetObjectFailed. */
export const POD_NOT_FOUND = "PodNotFound";
export const GET_OBJECT_FAILED = "GetObjectFailed";
/** This project's reason for a pod whose owner cannot replace it. */
export const NOT_REPLACEABLE = "ReplaceNotSupported";

export type PodWrite =
  /** Asks the pod's owner to replace it: the to-replace label and the replace-protection finalizer. */
  | { kind: "mark-replace"; pod: Pod }
  /** Lets the pod go: the to-replace label and the finalizer off (a cancelled replace). */
  | { kind: "release"; pod: Pod }
  /** The origin is on its way out and its new pod known: the finalizer off, so it can go. */
  | { kind: "unprotect"; pod: Pod };

export interface JobEvent {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}

export interface JobInput {
  job: OperationJob;
  nowMs: number;
  /** A pod of the job's namespace, by name, as the cache has it. */
  pod(name: string): Pod | undefined;
  /** The pods labelled as the new pods of the named origin (collaset.kusionstack.io/replace-pair-origin-name). */
  newPodsOf(origin: string): Pod[];
  /** Whether the pod's owner replaces a pod labelled to-replace; if not, why. */
  replaceable(pod: Pod): { ok: true } | { ok: false; reason: string };
}

export interface JobPlan {
  status: OperationJobStatus;
  writes: PodWrite[];
  events: JobEvent[];
  /** TTLSecondsAfterFinished has passed: the job is deleted. */
  deleteJob: boolean;
  /** Look again after this long (a deadline or the TTL comes). */
  requeueAfterMs?: number;
}

interface Candidate {
  index: number;
  name: string;
  pod: Pod | undefined;
  status: OpsStatus;
}

export function isJobFinished(status: OperationJobStatus | undefined): boolean {
  return status?.progress === "Succeeded" || status?.progress === "Failed";
}

const isPending = (status: OpsStatus) => status.progress === undefined || status.progress === "" || status.progress === "Pending";
const isFinished = (status: OpsStatus) => status.progress === "Succeeded" || status.progress === "Failed";

/** The targets' statuses as the job records them, a new one (Pending) for a target it does not yet. */
function candidates(input: JobInput): Candidate[] {
  const recorded = new Map((input.job.status?.targetDetails ?? []).map((detail) => [detail.name ?? "", detail]));
  return (input.job.spec.targets ?? []).map((target, index) => {
    const name = target.name ?? "";
    const status = structuredClone(recorded.get(name) ?? { name, progress: "Pending", extraInfo: {} });
    status.extraInfo ??= {};
    return { index, name, pod: input.pod(name), status };
  });
}

/** kuperator's DecideCandidateByPartition: started targets first, then in the order written; the first `partition` of them. */
function selectedByPartition(job: OperationJob, all: readonly Candidate[]): Candidate[] {
  const partition = job.spec.partition;
  if (partition === undefined) return [...all];
  const ordered = [...all].sort((a, b) => Number(isPending(a.status)) - Number(isPending(b.status)) || a.index - b.index);
  return ordered.slice(0, Math.max(0, partition));
}

export function planJob(input: JobInput): JobPlan {
  const { job, nowMs } = input;
  const now = formatTime(nowMs);
  const writes: PodWrite[] = [];
  const events: JobEvent[] = [];
  const requeues: number[] = [];
  const all = candidates(input);

  // activeDeadlineSeconds: a started target not done in time fails (and is let go below).
  const deadlineMs = (job.spec.activeDeadlineSeconds ?? DEFAULT_ACTIVE_DEADLINE_SECONDS) * 1000;
  for (const candidate of all) {
    const started = parseTime(candidate.status.startTime);
    if (started === undefined || isFinished(candidate.status)) continue;
    const left = started + deadlineMs - nowMs;
    if (left > 0) requeues.push(left);
    else {
      candidate.status.progress = "Failed";
      events.push({ type: "Normal", reason: "Timeout", message: `target ${candidate.name} did not finish within activeDeadlineSeconds (${deadlineMs / 1000}s): it fails and is let go` });
    }
  }
  // TTLSecondsAfterFinished: the finished job goes.
  const endedAt = parseTime(job.status?.endTime);
  if (isJobFinished(job.status) && endedAt !== undefined) {
    const left = endedAt + (job.spec.TTLSecondsAfterFinished ?? DEFAULT_TTL_SECONDS_AFTER_FINISHED) * 1000 - nowMs;
    if (left <= 0) {
      events.push({ type: "Normal", reason: "TTL", message: "the job finished TTLSecondsAfterFinished ago: it is deleted" });
      return { status: job.status ?? {}, writes, events, deleteJob: true };
    }
    requeues.push(left);
  }
  // A failed target is let go once (kuperator's ensureFailedTargetsReleased).
  for (const candidate of all) {
    if (candidate.status.progress !== "Failed" || candidate.status.extraInfo?.[RELEASED_INFO] === "true") continue;
    writes.push(...releaseWrites(candidate.pod));
    candidate.status.extraInfo![RELEASED_INFO] = "true";
  }

  if (job.spec.action === REPLACE_ACTION) {
    for (const candidate of selectedByPartition(job, all)) {
      if (isFinished(candidate.status)) continue;
      if (isPending(candidate.status)) {
        candidate.status.progress = "Processing";
        candidate.status.startTime ??= now;
        requeues.push(deadlineMs);
      }
      operate(input, candidate, writes, events);
      if (!isFinished(candidate.status)) progress(input, candidate, writes, events);
    }
  }

  const status = jobStatus(job, all, now);
  const retryInMs = requeues.length === 0 ? undefined : Math.max(100, Math.min(...requeues));
  return { status, writes, events, deleteJob: false, ...(retryInMs === undefined ? {} : { requeueAfterMs: retryInMs }) };
}

/** kuperator's PodReplaceHandler.OperateTargets, and the owner check it lacks. */
function operate(input: JobInput, candidate: Candidate, writes: PodWrite[], events: JobEvent[]): void {
  const pod = candidate.pod;
  if (pod === undefined || pod.metadata?.deletionTimestamp != null) return;
  const labels = pod.metadata?.labels ?? {};
  const extraInfo = candidate.status.extraInfo!;
  const origin = labels[PAIR_ORIGIN_NAME_LABEL];
  if (origin !== undefined) {
    extraInfo[NOT_ALLOWED_INFO] = `Not allowed to replace pod when it is a new pod for origin pod [${origin}]`;
    return;
  }
  delete extraInfo[NOT_ALLOWED_INFO];
  if (labels[TO_REPLACE_LABEL] !== undefined || labels[REPLACED_BY_UPDATE_LABEL] !== undefined || labels[PAIR_NEW_ID_LABEL] !== undefined) return;
  const replaceable = input.replaceable(pod);
  if (!replaceable.ok) {
    candidate.status.progress = "Failed";
    candidate.status.error = { reason: NOT_REPLACEABLE, message: replaceable.reason };
    events.push({ type: "Warning", reason: NOT_REPLACEABLE, message: `pod ${candidate.name}: ${replaceable.reason}` });
    return;
  }
  writes.push({ kind: "mark-replace", pod });
  events.push({ type: "Normal", reason: "ReplaceOriginPod", message: `Succeeded to trigger originPod ${pod.metadata?.namespace ?? ""}/${candidate.name} to replace` });
}

/** kuperator's PodReplaceHandler.GetOpsProgress. */
function progress(input: JobInput, candidate: Candidate, writes: PodWrite[], events: JobEvent[]): void {
  const { status, pod } = candidate;
  const extraInfo = status.extraInfo!;
  if (pod !== undefined) {
    status.progress = "Processing";
    const newId = pod.metadata?.labels?.[PAIR_NEW_ID_LABEL];
    if (newId === undefined) return;
    const newPod = input.newPodsOf(candidate.name).find((item) =>
      item.metadata?.labels?.[INSTANCE_ID_LABEL] === newId && item.metadata.labels[TO_DELETE_LABEL] === undefined && item.metadata.deletionTimestamp == null);
    if (newPod === undefined) return;
    const newName = newPod.metadata?.name ?? "";
    if (extraInfo[NEW_POD_INFO] !== newName) events.push({ type: "Normal", reason: "ReplaceNewPod", message: `Succeeded to create newPod ${newPod.metadata?.namespace ?? ""}/${newName} for originPod ${pod.metadata?.namespace ?? ""}/${candidate.name}` });
    extraInfo[NEW_POD_INFO] = newName;
    if (pod.metadata?.deletionTimestamp != null && (pod.metadata.finalizers ?? []).includes(REPLACE_PROTECTION_FINALIZER)) writes.push({ kind: "unprotect", pod });
    return;
  }
  const newName = extraInfo[NEW_POD_INFO];
  if (newName === undefined) {
    status.progress = "Failed";
    status.error = { reason: POD_NOT_FOUND, message: "failed to replace a non-exist pod" };
    return;
  }
  const newPod = input.pod(newName);
  if (newPod === undefined) {
    status.progress = "Processing";
    status.error = { reason: GET_OBJECT_FAILED, message: `fail to find replace newPod ${input.job.metadata.namespace ?? ""}/${newName}` };
    return;
  }
  if (newPod.metadata?.labels?.[SERVICE_AVAILABLE_LABEL] === undefined) {
    status.progress = "Processing";
    return;
  }
  delete status.error;
  status.progress = "Succeeded";
}

/** Takes the job off a pod it asked to be replaced: the label and the finalizer, when it has either and is not on its way out. */
export function releaseWrites(pod: Pod | undefined): PodWrite[] {
  if (pod === undefined || pod.metadata?.deletionTimestamp != null) return [];
  const labelled = pod.metadata?.labels?.[TO_REPLACE_LABEL] !== undefined;
  const protectedPod = (pod.metadata?.finalizers ?? []).includes(REPLACE_PROTECTION_FINALIZER);
  return labelled || protectedPod ? [{ kind: "release", pod }] : [];
}

/** kuperator's calculateStatus: per-target end times, counts, and the job's progress. */
function jobStatus(job: OperationJob, all: readonly Candidate[], now: string): OperationJobStatus {
  const details = all.map((candidate) => {
    const status = candidate.status;
    if (status.endTime === undefined && isFinished(status)) status.endTime = now;
    if (Object.keys(status.extraInfo ?? {}).length === 0) delete status.extraInfo;
    return status;
  });
  const count = (progress: OperationProgress) => details.filter((detail) => detail.progress === progress).length;
  const [succeeded, failed, pending] = [count("Succeeded"), count("Failed"), count("Pending")];
  const total = details.length;
  const status: OperationJobStatus = {
    ...(job.metadata.generation === undefined ? {} : { observedGeneration: job.metadata.generation }),
    ...(job.status?.progress === undefined ? {} : { progress: job.status.progress }),
    ...(job.status?.startTime === undefined ? {} : { startTime: job.status.startTime }),
    ...(job.status?.endTime === undefined ? {} : { endTime: job.status.endTime }),
  };
  if (!isJobFinished(job.status)) {
    status.progress = "Processing";
    status.startTime ??= now;
    if (pending === total) status.progress = "Pending";
    if (succeeded + failed === total) {
      status.progress = failed > 0 ? "Failed" : "Succeeded";
      status.endTime ??= now;
    }
  }
  // Go's omitempty leaves zero counts out.
  return {
    ...status,
    ...(total === 0 ? {} : { totalPodCount: total }),
    ...(succeeded === 0 ? {} : { succeededPodCount: succeeded }),
    ...(failed === 0 ? {} : { failedPodCount: failed }),
    ...(details.length === 0 ? {} : { targetDetails: details }),
  };
}
