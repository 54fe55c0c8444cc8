// The PodTransitionRule controller's reconcile, kuperator's (podtransitionrule_controller.go):
// the pods the selector picks are its targets; those in a PodOpsLifecycle stage (PreCheck,
// PostCheck) are checked by the rules of that stage (rules.ts, webhook-calls.ts); the status
// records the targets, each checked pod's detail and the webhook rules' tasks; and every target
// carries its verdict in the annotation kuperator writes (pod-details.ts), which PodOpsLifecycle
// reads (gate.ts). A rule being deleted takes its annotations off its pods, then its finalizer.
import type { Logger } from "pino";
import { formatFieldErrors } from "../../api/field-errors.ts";
import { API_VERSION, COLLASET_KIND } from "../../api/group.ts";
import { defaultPodTransitionRule, TRANSITION_STAGES, transitionRuleSelector, validatePodTransitionRule, type PodTransitionRuleStatus } from "../../api/podtransitionrule.ts";
import type { CollaSet } from "../../api/collaset.ts";
import { sameJson } from "../../api/json.ts";
import { isLostRace, isNotFound } from "../../kube/errors.ts";
import { controllerOf, splitKey, type KubeObject, type Pod } from "../../kube/objects.ts";
import type { ResourceClient, StatusClient } from "../../kube/resource-client.ts";
import { formatTime } from "../../kube/timestamps.ts";
import { addFinalizerOperation, hasFinalizer, removeFinalizerOperations } from "../finalizers.ts";
import { annotationOperations } from "../label-patch.ts";
import { transitionStage } from "../lifecycle/pod-ops-lifecycle.ts";
import { isAvailable } from "../pod-availability.ts";
import type { Lister } from "../runtime/cache.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Result } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import type { Expectations } from "../runtime/expectations.ts";
import type { CachedTransitionRule } from "./gate.ts";
import { detailAnnotation, formatVerdict, recordedVerdict, UNKNOWN_STAGE } from "./pod-details.ts";
import { checkStage } from "./rules.ts";
import type { WebhookCalls } from "./webhook-calls.ts";

/** kube-api's ProtectFinalizer, which kuperator puts on PodTransitionRules and OperationJobs. */
export const PROTECT_FINALIZER = "finalizer.operating.kusionstack.io/protected";

export interface TransitionRuleReconcilerOptions {
  transitionRules: Lister<CachedTransitionRule>;
  pods: Lister<Pod>;
  collaSets: Lister<CollaSet & KubeObject>;
  client: {
    transitionRules: Pick<ResourceClient<CachedTransitionRule>, "jsonPatch"> & Pick<StatusClient<CachedTransitionRule>, "jsonPatchStatus">;
    pods: Pick<ResourceClient<Pod>, "jsonPatch">;
  };
  webhooks: WebhookCalls;
  events: Pick<EventRecorder, "record">;
  expectations: Expectations;
  clock: Clock;
  logger: Logger;
  /** Pod writes in flight at once for one rule (default 16). */
  burst?: number;
}

export class TransitionRuleReconciler {
  readonly #options: TransitionRuleReconcilerOptions;

  constructor(options: TransitionRuleReconcilerOptions) {
    this.#options = options;
  }

  reconcile = async (key: string): Promise<Result | undefined> => {
    const { namespace = "", name } = splitKey(key);
    const { expectations } = this.#options;
    const cached = this.#options.transitionRules.get(namespace, name);
    if (cached === undefined) {
      expectations.forget(key);
      this.#options.webhooks.forget(key);
      return undefined;
    }
    const waiting = expectations.satisfied(key);
    if (!waiting.satisfied) return { requeueAfter: waiting.retryInMs };
    if (cached.metadata.deletionTimestamp != null) {
      this.#options.webhooks.forget(key);
      await this.#release(key, cached);
      return undefined;
    }
    if (!hasFinalizer(cached, PROTECT_FINALIZER)) {
      await this.#options.client.transitionRules.jsonPatch(namespace, name, [{ op: "test", path: "/metadata/resourceVersion", value: cached.metadata.resourceVersion }, addFinalizerOperation(cached, PROTECT_FINALIZER)]);
      this.#expectNewer(key, cached);
      return undefined;
    }
    const errors = validatePodTransitionRule(cached);
    if (errors.length > 0) {
      // Stored while no validating webhook ran: it gates nothing it cannot read; say so.
      this.#options.events.record(cached, "Warning", "InvalidSpec", formatFieldErrors("PodTransitionRule", name, errors).join("; "));
      return undefined;
    }

    const transitionRule = defaultPodTransitionRule(cached) as CachedTransitionRule;
    const selector = transitionRuleSelector(transitionRule);
    const targets = new Map(this.#options.pods.list(namespace).filter((pod) => selector?.(pod.metadata?.labels ?? {}) === true).map((pod) => [pod.metadata?.name ?? "", pod]));
    const names = [...targets.keys()].sort();
    const uncreatedReplicas = this.#uncreatedReplicas(namespace, targets);
    const details: NonNullable<PodTransitionRuleStatus["details"]> = [];
    const ruleStates: NonNullable<PodTransitionRuleStatus["ruleStates"]> = [];
    const retries: number[] = [];
    this.#options.webhooks.retain(key, new Set(names.filter((pod) => transitionStage(targets.get(pod)!) !== undefined)));
    for (const stage of TRANSITION_STAGES) {
      const subjects = names.filter((pod) => transitionStage(targets.get(pod)!) === stage);
      if (subjects.length === 0) continue;
      const result = checkStage({
        transitionRule,
        stage,
        targets,
        subjects,
        available: isAvailable,
        uncreatedReplicas,
        webhook: (rule, checked, approved) => this.#options.webhooks.check(transitionRule, rule, stage, checked, targets, approved),
      });
      details.push(...result.details.values());
      ruleStates.push(...result.ruleStates);
      if (result.retryInMs !== undefined) retries.push(result.retryInMs);
    }
    details.sort((a, b) => ((a.name ?? "") < (b.name ?? "") ? -1 : 1));

    const generation = cached.metadata.generation;
    const status: PodTransitionRuleStatus = {
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      ...(names.length === 0 ? {} : { targets: names }),
      ...(ruleStates.length === 0 ? {} : { ruleStates }),
      ...(details.length === 0 ? {} : { details }),
    };
    // As kuperator compares it: everything but the time of the write.
    const { updateTime: _updateTime, ...previous } = cached.status ?? {};
    if (!sameJson(status, previous)) {
      try {
        await this.#options.client.transitionRules.jsonPatchStatus(namespace, name, [
          { op: "test", path: "/metadata/resourceVersion", value: cached.metadata.resourceVersion },
          { op: "add", path: "/status", value: { updateTime: formatTime(this.#options.clock.now()), ...status } },
        ]);
      } catch (error) {
        // A newer object: its event brings this key back with it.
        if (isLostRace(error)) return { requeueAfter: 1000 };
        throw error;
      }
      this.#expectNewer(key, cached);
    }

    // Each target carries its verdict; pods no longer selected lose it.
    const byName = new Map(details.map((detail) => [detail.name ?? "", detail]));
    const writes: { pod: Pod; set: Record<string, string>; remove: string[] }[] = [];
    const annotation = detailAnnotation(name);
    for (const [podName, pod] of targets) {
      if (pod.metadata?.deletionTimestamp != null) continue;
      const detail = byName.get(podName);
      const text = formatVerdict(detail === undefined ? { stage: UNKNOWN_STAGE, passed: true } : { stage: detail.stage ?? "", passed: detail.passed, ...(detail.rejectInfo === undefined ? {} : { rejectInfo: detail.rejectInfo }) });
      if (pod.metadata?.annotations?.[annotation] !== text) writes.push({ pod, set: { [annotation]: text }, remove: [] });
    }
    for (const pod of this.#options.pods.list(namespace)) {
      if (!targets.has(pod.metadata?.name ?? "") && recordedVerdict(pod, name) !== undefined && pod.metadata?.deletionTimestamp == null) writes.push({ pod, set: {}, remove: [annotation] });
    }
    await this.#writePods(writes);
    return retries.length === 0 ? undefined : { requeueAfter: Math.min(...retries) };
  };

  /** kuperator's considerOwnerReplicas: pods the targets' CollaSets want and have not made yet. */
  #uncreatedReplicas(namespace: string, targets: ReadonlyMap<string, Pod>): number {
    const counts = new Map<string, { name: string; uid: string; current: number }>();
    for (const pod of targets.values()) {
      const owner = controllerOf(pod);
      if (owner?.kind !== COLLASET_KIND || owner.apiVersion !== API_VERSION) continue;
      const entry = counts.get(owner.uid) ?? { name: owner.name, uid: owner.uid, current: 0 };
      entry.current++;
      counts.set(owner.uid, entry);
    }
    let uncreated = 0;
    for (const { name, uid, current } of counts.values()) {
      const collaSet = this.#options.collaSets.get(namespace, name);
      const desired = collaSet === undefined || collaSet.metadata.uid !== uid ? 0 : (collaSet.spec.replicas ?? 1);
      uncreated += Math.max(0, desired - current);
    }
    return uncreated;
  }

  /** A rule being deleted: its verdicts leave its pods, then its finalizer goes. */
  async #release(key: string, transitionRule: CachedTransitionRule): Promise<void> {
    const { namespace = "", name = "" } = transitionRule.metadata;
    const annotation = detailAnnotation(name);
    await this.#writePods(this.#options.pods.list(namespace).filter((pod) => pod.metadata?.annotations?.[annotation] !== undefined && pod.metadata.deletionTimestamp == null).map((pod) => ({ pod, set: {}, remove: [annotation] })));
    if (!hasFinalizer(transitionRule, PROTECT_FINALIZER)) return;
    try {
      await this.#options.client.transitionRules.jsonPatch(namespace, name, removeFinalizerOperations(transitionRule, PROTECT_FINALIZER));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.#expectNewer(key, transitionRule);
  }

  async #writePods(writes: readonly { pod: Pod; set: Record<string, string>; remove: string[] }[]): Promise<void> {
    const queue = [...writes];
    const failures: unknown[] = [];
    const worker = async () => {
      for (let write = queue.shift(); write !== undefined; write = queue.shift()) {
        const { namespace = "", name = "" } = write.pod.metadata ?? {};
        try {
          await this.#options.client.pods.jsonPatch(namespace, name, annotationOperations(write.pod, write.set, write.remove));
        } catch (error) {
          // The pod changed or went: its event brings the rule back.
          if (!isLostRace(error) && !isNotFound(error)) failures.push(error);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#options.burst ?? 16, writes.length) }, worker));
    if (failures.length > 0) throw failures[0];
  }

  #expectNewer(key: string, transitionRule: CachedTransitionRule): void {
    const { namespace = "", name = "", resourceVersion } = transitionRule.metadata;
    this.#options.expectations.expect(key, () => this.#options.transitionRules.get(namespace, name)?.metadata.resourceVersion !== resourceVersion);
  }
}
