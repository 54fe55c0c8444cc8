// One workload's next steps in the rollout of decorations to pods of other owners than a
// CollaSet (DESIGN §5), decided from cached pods alone: every decoration of the namespace plans
// its rollout over all the pods it matches (decoration-targets.ts, as for CollaSet pods), the
// workload's pods take their share; a pod whose revisions differ from its targets is changed in
// place when the change is one the kubelet does in place, else evicted when every decoration
// whose change needs it asks for that (updateStrategy.recreatePolicy: Evict), else reported
// outdated. At most maxUnavailable pods of the workload unavailable at once, with
// PodOpsLifecycle for pods that carry its readiness gate (update-steps.ts). Pure.
import { resolveMaxUnavailable } from "../../api/max-unavailable.ts";
import type { PodDecoration } from "../../api/poddecoration.ts";
import { DecorationError } from "../../decoration/decoration-error.ts";
import { notInPlace, redecorate, type RevisionChange } from "../../decoration/redecorate.ts";
import { recordedRevisions } from "../../decoration/recording.ts";
import { revisionDrifts, type Drift } from "../../decoration/running-revisions.ts";
import { decorationKey } from "../../decoration/decoration-kind.ts";
import type { DecorationToApply } from "../../decoration/render.ts";
import { isMatchedPod, isPodReady } from "../../decoration/rollout.ts";
import type { Pod as EnginePod } from "../../api/pod.ts";
import type { Pod } from "../../kube/objects.ts";
import type { JsonPatchOperation } from "../../kube/patch.ts";
import { decorationTargets, type DecorationTargetsInput } from "../decoration-targets.ts";
import { DECORATION_OPERATION_ID, hasServiceReadyGate } from "../lifecycle/pod-ops-lifecycle.ts";
import { isAvailable, isTerminating } from "../pod-availability.ts";
import { podUpdate } from "../pod-update.ts";
import { operationInProgress, orderForUpdate, planUpdateSteps, type LifecycleSettings, type PodChange, type UpdateStep } from "../update-steps.ts";
import type { PodRolloutReport } from "./reports.ts";

/** Evicts a pod so that its owner recreates it and the webhook renders its targets into the new one. */
export interface Eviction {
  kind: "evict";
  pod: Pod;
  reason: string;
  /** The decorations whose change the eviction carries out (their Events name it). */
  decorations: string[];
}

export type WorkloadStep = UpdateStep<Eviction>;

export interface WorkloadPlanInput {
  namespace: string;
  /** The workload's pods, terminating ones included. */
  pods: readonly Pod[];
  /** For a decoration, the namespace's other pods it may match: it plans its rollout over all the pods it matches. */
  otherPods: (decoration: PodDecoration) => readonly Pod[];
  /** How cluster decorations plan over the fleet (cluster-decorations.ts, fleetPlanning). */
  matched?: DecorationTargetsInput<Pod>["matched"];
  namespaceLabels?: DecorationTargetsInput<Pod>["namespaceLabels"];
  keeps?: DecorationTargetsInput<Pod>["keeps"];
  /** The namespace's decorations, those being deleted included. */
  decorations: readonly PodDecoration[];
  /** The decoration's updated revision, or undefined when it cannot be resolved (its pods keep what they have). */
  updatedRevision: (decoration: PodDecoration) => string | undefined;
  /** A stored revision of a decoration (also of one deleted from the cache), or undefined. */
  revision: (name: string, revision: string) => DecorationToApply | undefined;
  lifecycle?: LifecycleSettings | undefined;
  /**
   * Why the pod webhook would not be called for the pod's replacement (admission-scope.ts), or
   * undefined when it would: only then does an eviction bring the pod its decorations.
   */
  outsideWebhookScope: (pod: Pod) => string | undefined;
}

export interface WorkloadPlan {
  steps: WorkloadStep[];
  /** Pod name → what the status reports of it (pods with nothing to move are absent). */
  reports: Map<string, PodRolloutReport>;
  /** Pods waiting for a revision to be stored; its arrival plans again. */
  waiting: string[];
  retryInMs?: number;
}

export function planWorkload(input: WorkloadPlanInput): WorkloadPlan {
  const live = input.pods.filter((pod) => !isTerminating(pod) && !isFinished(pod));
  // What a pod records counts only where its parts agree (running-revisions.ts); a drift in
  // images, labels or annotations keeps the record and is put back in place.
  const drifts = new Map<Pod, Map<string, Drift>>();
  const driftOf = (pod: Pod): Map<string, Drift> => {
    let found = drifts.get(pod);
    if (found === undefined) {
      const recorded = recordedRevisions(pod);
      found = recorded === null ? new Map() : revisionDrifts(pod, recorded, (name, revision) => input.revision(name, revision)?.template);
      drifts.set(pod, found);
    }
    return found;
  };
  const running = (pod: Pod): Map<string, string> | null => {
    const recorded = recordedRevisions(pod);
    if (recorded === null) return null;
    const drifted = driftOf(pod);
    return new Map([...recorded].filter(([decoration]) => drifted.get(decoration)?.inPlace !== false));
  };
  const byName = new Map(input.decorations.map((decoration) => [decorationKey(decoration), decoration]));
  const targets = decorationTargets({
    namespace: input.namespace,
    decorations: input.decorations,
    updatedRevision: input.updatedRevision,
    otherPods: input.otherPods,
    ...(input.matched === undefined ? {} : { matched: input.matched }),
    ...(input.namespaceLabels === undefined ? {} : { namespaceLabels: input.namespaceLabels }),
    ...(input.keeps === undefined ? {} : { keeps: input.keeps }),
    recorded: running,
    slots: live.map((pod) => ({ name: pod.metadata?.name ?? "", labels: pod.metadata?.labels ?? {}, ready: isPodReady(pod), current: running(pod) ?? new Map() })),
  });

  const reports = new Map<string, PodRolloutReport>();
  const waiting: string[] = [];
  const changes: PodChange<Eviction>[] = [];
  const repairs: WorkloadStep[] = [];
  for (const { pod, available } of orderForUpdate(live.map((pod) => ({ pod, available: isAvailable(pod) })))) {
    const name = pod.metadata?.name ?? "";
    const recorded = running(pod) ?? new Map<string, string>();
    const target = targets.get(name) ?? new Map<string, string>();
    const drifted = driftOf(pod);
    // A revision kept whose images, labels or annotations drifted moves to itself: put back.
    const moving = [...new Set([...recorded.keys(), ...target.keys()])]
      .filter((decoration) => recorded.get(decoration) !== target.get(decoration) || (target.has(decoration) && drifted.get(decoration)?.inPlace === true))
      .sort();
    if (moving.length === 0) continue;
    const report: { moving: string[]; blocked?: PodRolloutReport["blocked"] } = { moving };
    reports.set(name, report);
    if (operationInProgress(pod, DECORATION_OPERATION_ID)) continue;

    const revisionChanges: RevisionChange[] = [];
    const unknown: string[] = [];
    for (const decoration of moving) {
      const from = recorded.get(decoration);
      const to = target.get(decoration);
      const toApply = to === undefined ? undefined : input.revision(decoration, to);
      if (to !== undefined && toApply === undefined) unknown.push(`${decoration}@${to}`);
      revisionChanges.push({ name: decoration, from: from === undefined ? undefined : input.revision(decoration, from), to: toApply });
    }
    if (unknown.length > 0) {
      waiting.push(`pod ${name}: waiting for revisions ${unknown.join(", ")} to be stored`);
      continue;
    }
    const change = podChange(pod, recorded, revisionChanges, input.revision, drifted);
    if (change.kind === "render-error") {
      report.blocked = { reason: "RenderError", message: change.message };
      continue;
    }
    if (change.kind === "in-place") {
      // Labels and annotations alone disturb no container: put back at once, outside the budget.
      if (change.operations.every((operation) => operation.op === "test" || operation.path.startsWith("/metadata/"))) repairs.push({ kind: "in-place", pod, operations: change.operations });
      else changes.push({ pod, available, change: { kind: "in-place", operations: change.operations } });
      continue;
    }
    const refusing = change.decorations.filter((decoration) => byName.get(decoration)?.spec.updateStrategy?.recreatePolicy !== "Evict");
    if (refusing.length > 0) {
      report.blocked = { reason: "NeedsRecreation", message: `pod ${name}: ${change.reason}; updateStrategy.recreatePolicy of ${refusing.join(", ")} is not Evict, so the pod is left running until its owner recreates it` };
      continue;
    }
    const outside = input.outsideWebhookScope(pod);
    if (outside !== undefined) {
      report.blocked = { reason: "NeedsRecreation", message: `pod ${name}: ${change.reason}; ${outside}, so it is not evicted: its replacement would not be decorated either` };
      continue;
    }
    changes.push({ pod, available, change: { kind: "replace", step: { kind: "evict", pod, reason: change.reason, decorations: change.decorations } } });
  }

  const matchedDecorations = input.decorations.filter((decoration) => live.some((pod) => isMatchedPod(decoration, pod)));
  const maxUnavailable = Math.min(...matchedDecorations.map((decoration) =>
    resolveMaxUnavailable(decoration.spec.updateStrategy?.rollingUpdate?.maxUnavailable, live.filter((pod) => isMatchedPod(decoration, pod)).length)), Number.POSITIVE_INFINITY);
  const planned = planUpdateSteps<Eviction>({
    changes,
    // The pods whose PodOpsLifecycle steps are ours to take: those a decoration rolls out to.
    pods: live.filter((pod) => recordedRevisions(pod) !== null && input.decorations.some((decoration) => isMatchedPod(decoration, pod) || recordedRevisions(pod)?.has(decorationKey(decoration)) === true)),
    maxUnavailable: Number.isFinite(maxUnavailable) ? maxUnavailable : 1,
    // A pod on its way out (evicted, deleted) is unavailable until its replacement is available.
    unavailable: input.pods.filter((pod) => !isFinished(pod) && !isAvailable(pod)).length,
    lifecycle: input.lifecycle,
    // Only pods that opted in (their owner's template has the gate) go through PodOpsLifecycle:
    // nothing else would take a pod out of traffic, and a gate cannot be added to a live pod.
    lifecycleFor: hasServiceReadyGate,
    operationId: DECORATION_OPERATION_ID,
  });
  for (const { pod, message } of planned.stuck) {
    const report = reports.get(pod.metadata?.name ?? "");
    if (report !== undefined) reports.set(pod.metadata?.name ?? "", { ...report, blocked: { reason: "LifecycleStuck", message } });
  }
  const retryInMs = planned.retries.length === 0 ? undefined : Math.max(100, Math.min(...planned.retries));
  return { steps: [...repairs, ...planned.steps], reports, waiting, ...(retryInMs === undefined ? {} : { retryInMs }) };
}

type PodChangeDecision =
  | { kind: "in-place"; operations: JsonPatchOperation[] }
  | { kind: "recreate"; reason: string; decorations: string[] }
  | { kind: "render-error"; message: string };

function podChange(pod: Pod, recorded: ReadonlyMap<string, string>, changes: readonly RevisionChange[], revision: WorkloadPlanInput["revision"], drifted: ReadonlyMap<string, Drift>): PodChangeDecision {
  const lost = changes.filter((change) => recorded.has(change.name) && change.from === undefined).map((change) => change.name);
  if (lost.length > 0) return { kind: "recreate", reason: `the revisions it records of ${lost.join(", ")} are no longer stored`, decorations: lost };
  // Drifted beyond what changes in place (a container, env, mounts, volumes): only a new pod has them.
  const beyondRepair = changes.filter((change) => drifted.get(change.name)?.inPlace === false);
  if (beyondRepair.length > 0) {
    const reason = beyondRepair.map((change) => `it does not run the revision of ${change.name} it records (${drifted.get(change.name)!.details.join("; ")})`).join("; ");
    return { kind: "recreate", reason, decorations: beyondRepair.map((change) => change.name) };
  }
  const beyond = changes.flatMap((change) => {
    const reason = notInPlace(change);
    return reason === undefined ? [] : [{ name: change.name, reason }];
  });
  if (beyond.length > 0) return { kind: "recreate", reason: beyond.map((entry) => entry.reason).join("; "), decorations: beyond.map((entry) => entry.name) };
  const recordedTemplates = [...recorded].flatMap(([name, revisionName]) => revision(name, revisionName)?.template ?? []);
  let renders: ReturnType<typeof redecorate>;
  try {
    // The engine's Pod is the same object, typed openly (client-node types enum fields as plain strings).
    renders = redecorate(pod as unknown as EnginePod, changes, recordedTemplates);
  } catch (error) {
    if (error instanceof DecorationError) return { kind: "render-error", message: `pod ${pod.metadata?.name ?? ""}: ${error.message}` };
    throw error;
  }
  const update = podUpdate(pod, renders.from, renders.to);
  if (update.kind === "recreate") return { kind: "recreate", reason: update.reason, decorations: changes.map((change) => change.name) };
  return { kind: "in-place", operations: update.operations };
}

/** A pod whose containers have all terminated for good (a Job's): no rollout touches it, no budget counts it. */
function isFinished(pod: Pod): boolean {
  return pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";
}
