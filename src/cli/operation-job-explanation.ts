// `pod-decorator explain operationjob NAME`: where each target of an OperationJob stands — within
// the partition or not yet, its progress, the pod that replaces it, what holds it — from the job's
// status and the pods, as its controller reads them. Pure: explain-cluster.ts reads the cluster.
import type { OperationJob } from "../api/operationjob.ts";
import { controllerOf, type Pod } from "../kube/objects.ts";
import { PAIR_NEW_ID_LABEL, PAIR_ORIGIN_NAME_LABEL, TO_REPLACE_LABEL } from "../controller/collaset/pod-state.ts";
import { NEW_POD_INFO, NOT_ALLOWED_INFO, REPLACE_PROTECTION_FINALIZER } from "../controller/operation-jobs/plan.ts";

export interface OperationJobExplanation {
  kind: "OperationJobExplanation";
  name: string;
  namespace: string;
  action: string;
  progress: string;
  partition: string;
  counts: { total: number; succeeded: number; failed: number };
  targets: {
    name: string;
    inPartition: boolean;
    progress: string;
    owner: string;
    pod: "present" | "on its way out" | "gone";
    replacing: boolean;
    newPod?: string;
    error?: string;
    note?: string;
  }[];
}

export function explainOperationJob(job: OperationJob, pods: readonly Pod[]): OperationJobExplanation {
  const byName = new Map(pods.map((pod) => [pod.metadata?.name ?? "", pod]));
  const details = new Map((job.status?.targetDetails ?? []).map((detail) => [detail.name ?? "", detail]));
  const targets = job.spec.targets ?? [];
  const pending = (name: string) => (details.get(name)?.progress ?? "Pending") === "Pending";
  // The controller's order: started targets first, then as written; the partition takes the first of them.
  const ordered = targets.map((target, index) => ({ name: target.name ?? "", index })).sort((a, b) => Number(pending(a.name)) - Number(pending(b.name)) || a.index - b.index);
  const selected = new Set((job.spec.partition === undefined ? ordered : ordered.slice(0, job.spec.partition)).map((target) => target.name));
  return {
    kind: "OperationJobExplanation",
    name: job.metadata.name ?? "",
    namespace: job.metadata.namespace ?? "",
    action: job.spec.action ?? "",
    progress: job.status?.progress ?? "Pending",
    partition: job.spec.partition === undefined ? "all targets" : `${job.spec.partition} of ${targets.length}`,
    counts: { total: job.status?.totalPodCount ?? 0, succeeded: job.status?.succeededPodCount ?? 0, failed: job.status?.failedPodCount ?? 0 },
    targets: targets.map((target) => {
      const name = target.name ?? "";
      const pod = byName.get(name);
      const detail = details.get(name);
      const owner = pod === undefined ? undefined : controllerOf(pod);
      const labels = pod?.metadata?.labels ?? {};
      const note = detail?.extraInfo?.[NOT_ALLOWED_INFO]
        ?? (pod?.metadata?.deletionTimestamp != null && (pod.metadata.finalizers ?? []).includes(REPLACE_PROTECTION_FINALIZER) ? "held by the job's replace-protection finalizer until the job has seen its new pod" : undefined);
      return {
        name,
        inPartition: selected.has(name),
        progress: detail?.progress ?? "Pending",
        owner: pod === undefined ? "-" : owner === undefined ? "<none>" : `${owner.kind}/${owner.name}`,
        pod: pod === undefined ? "gone" as const : pod.metadata?.deletionTimestamp != null ? "on its way out" as const : "present" as const,
        replacing: labels[TO_REPLACE_LABEL] !== undefined || labels[PAIR_NEW_ID_LABEL] !== undefined,
        ...(detail?.extraInfo?.[NEW_POD_INFO] === undefined ? {} : { newPod: detail.extraInfo[NEW_POD_INFO] }),
        ...(detail?.error === undefined ? {} : { error: `${detail.error.reason ?? ""}: ${detail.error.message ?? ""}` }),
        ...(note === undefined ? {} : { note }),
        ...(labels[PAIR_ORIGIN_NAME_LABEL] === undefined ? {} : { note: `a new pod for ${labels[PAIR_ORIGIN_NAME_LABEL]}: not replaced` }),
      };
    }),
  };
}

export function formatOperationJobReport(report: OperationJobExplanation): string {
  const lines = [
    `OperationJob:  ${report.namespace}/${report.name}`,
    `Action:        ${report.action}`,
    `Progress:      ${report.progress} (succeeded ${report.counts.succeeded}, failed ${report.counts.failed}, of ${report.counts.total})`,
    `Partition:     ${report.partition}`,
    "Targets:",
    ...report.targets.map((target) => {
      const parts = [
        `  ${target.name}  ${target.progress}${target.inPartition ? "" : "  (outside the partition)"}`,
        `    pod: ${target.pod}, owner ${target.owner}${target.replacing ? ", being replaced" : ""}${target.newPod === undefined ? "" : `, new pod ${target.newPod}`}`,
        ...(target.error === undefined ? [] : [`    error: ${target.error}`]),
        ...(target.note === undefined ? [] : [`    ${target.note}`]),
      ];
      return parts.join("\n");
    }),
  ];
  return `${lines.join("\n")}\n`;
}
