// The rollout of decorations to pods of other owners than a CollaSet, one workload per key
// (DESIGN §5): plan from the caches (plan.ts), carry the steps out — in-place patches and
// PodOpsLifecycle writes (update-step-writes.ts), evictions through the Eviction API — then
// report each pod's standing for the PodDecoration status and tell its controller which
// decorations' reports changed. Events go to the decorations whose change a pod carries.
import type { Logger } from "pino";
import type { PodDecoration } from "../../api/poddecoration.ts";
import type { DecorationSource } from "../../decoration/updated-revisions.ts";
import { isLostRace, isNotFound, statusCode, statusMessage } from "../../kube/errors.ts";
import type { KubeObject, Namespace, Pod } from "../../kube/objects.ts";
import { outsideAdmissionScope, type AdmissionScope } from "../../decoration/admission-scope.ts";
import type { ResourceClient, StatusClient } from "../../kube/resource-client.ts";
import { DecorationRevisions } from "../decoration-revisions.ts";
import { fleetPlanning, type ClusterDecorations } from "../cluster-decorations.ts";
import { decorationKey, isClusterDecoration } from "../../decoration/decoration-kind.ts";
import type { Evictions } from "../eviction.ts";
import { DECORATION_OPERATION_ID } from "../lifecycle/pod-ops-lifecycle.ts";
import { selectablePods } from "../poddecoration/pod-indexes.ts";
import { isTerminating } from "../pod-availability.ts";
import type { Lister } from "../runtime/cache.ts";
import type { Clock } from "../runtime/clock.ts";
import type { LifecycleOptions } from "../reconciler-controller.ts";
import type { Result } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import type { Expectations } from "../runtime/expectations.ts";
import { writeUpdateStep, type StepWriter } from "../update-step-writes.ts";
import { planWorkload, type WorkloadStep } from "./plan.ts";
import type { PodRolloutReport, RolloutReports } from "./reports.ts";
import { indexPodsByWorkload, parseWorkloadKey, podWorkloadIndex } from "./workloads.ts";

type CachedDecoration = PodDecoration & KubeObject;

export interface WorkloadRolloutReconcilerOptions {
  pods: Lister<Pod>;
  decorations: Lister<CachedDecoration>;
  /** PodDecorations and their revisions, as the webhook reads them. */
  revisions: DecorationSource;
  client: { pods: Pick<ResourceClient<Pod>, "jsonPatch"> & Pick<StatusClient<Pod>, "jsonPatchStatus"> };
  evictions: Evictions;
  events: Pick<EventRecorder, "record">;
  expectations: Expectations;
  reports: RolloutReports;
  /** The decorations of a namespace whose pods' reports changed: their status is due again. */
  reportsChanged: (namespace: string, decorations: ReadonlySet<string>) => void;
  clock: Clock;
  logger: Logger;
  /** PodOpsLifecycle for the pods that carry its readiness gate (absent: off). */
  lifecycle?: LifecycleOptions | undefined;
  /** The pod webhook's scope, and the namespaces it is judged against: what an eviction's replacement will get. */
  webhookScope: { scope: AdmissionScope; namespaces: Lister<Namespace> };
  /** Writes in flight at once for one workload (default 16). */
  burst?: number;
  /** The ClusterPodDecorations selecting each namespace (absent: none are served). */
  clusterDecorations?: ClusterDecorations;
}

/** A refusal that waits: retried after this long, not with hot backoff. */
const REFUSED_RETRY_MS = 30_000;

export class WorkloadRolloutReconciler {
  readonly #options: WorkloadRolloutReconcilerOptions;
  readonly #decorations: DecorationRevisions;

  constructor(options: WorkloadRolloutReconcilerOptions) {
    // Every reconcile reads the workload's pods through this index; there is no scan to fall back on.
    indexPodsByWorkload(options.pods);
    this.#options = options;
    this.#decorations = new DecorationRevisions(options.revisions);
  }

  reconcile = async (key: string): Promise<Result | undefined> => {
    const { namespace } = parseWorkloadKey(key);
    const { pods, expectations } = this.#options;
    const own = pods.byIndex(podWorkloadIndex, key);
    if (own.length === 0) {
      expectations.forget(key);
      this.#report(namespace, key, new Map());
      return undefined;
    }
    const waiting = expectations.satisfied(key);
    if (!waiting.satisfied) return { requeueAfter: waiting.retryInMs };

    const { decorations, byName, updatedRevision } = this.#decorations.inNamespace(namespace);
    // The cached objects, which Events are recorded on (a cluster decoration's is cluster-scoped).
    const cached = new Map<string, KubeObject>(this.#options.decorations.list(namespace).map((decoration) => [decoration.metadata.name ?? "", decoration]));
    for (const decoration of decorations) {
      if (!isClusterDecoration(decoration)) continue;
      const object = this.#options.clusterDecorations?.named(decoration.metadata.name ?? "");
      if (object !== undefined) cached.set(decorationKey(decoration), object);
    }
    const ownNames = new Set(own.map((pod) => pod.metadata?.name ?? ""));
    const { scope, namespaces } = this.#options.webhookScope;
    const namespaceMetadata = namespaces.get(undefined, namespace)?.metadata;
    const scopedNamespace = namespaceMetadata === undefined ? undefined : { name: namespace, labels: namespaceMetadata.labels };
    const plan = planWorkload({
      namespace,
      outsideWebhookScope: (pod) => outsideAdmissionScope(scope, scopedNamespace, pod.metadata ?? {}),
      pods: own,
      ...fleetPlanning(this.#options.clusterDecorations, namespace, pods, (decoration) => selectablePods(pods, decoration).filter((pod) => !ownNames.has(pod.metadata?.name ?? "")), (pod) => pod.metadata?.namespace === namespace && ownNames.has(pod.metadata?.name ?? ""), selectablePods),
      decorations,
      updatedRevision,
      revision: (name, revision) => this.#decorations.toApply(namespace, byName, name, revision),
      lifecycle: this.#options.lifecycle === undefined ? undefined : { nowMs: this.#options.clock.now(), ...this.#options.lifecycle },
    });
    if (plan.waiting.length > 0) this.#options.logger.debug({ key, reason: plan.waiting.join("; ") });

    const retries = plan.retryInMs === undefined ? [] : [plan.retryInMs];
    const failures: Error[] = [];
    const outcome = (pod: Pod, blocked: NonNullable<PodRolloutReport["blocked"]>, retryInMs: number) => {
      const name = pod.metadata?.name ?? "";
      const report = plan.reports.get(name);
      if (report !== undefined) plan.reports.set(name, { ...report, blocked });
      retries.push(retryInMs);
    };
    const queue = [...plan.steps];
    const worker = async () => {
      for (let step = queue.shift(); step !== undefined; step = queue.shift()) {
        try {
          await this.#act(key, step, plan.reports.get(step.pod.metadata?.name ?? "")?.moving ?? [], cached, outcome);
        } catch (error) {
          if (isNotFound(error) || isLostRace(error)) continue;
          const code = statusCode(error);
          if (code !== undefined && code >= 400 && code < 500 && code !== 429) {
            outcome(step.pod, { reason: "UpdateRefused", message: `pod ${step.pod.metadata?.name ?? ""}: ${step.kind}: ${statusMessage(error)}` }, REFUSED_RETRY_MS);
          } else failures.push(error instanceof Error ? error : new Error(statusMessage(error)));
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#options.burst ?? 16, plan.steps.length) }, worker));
    if (this.#options.evictions.size > 0) this.#options.evictions.retain(pods.list().map((pod) => pod.metadata?.uid ?? ""));

    this.#reportBlocked(key, plan.reports, cached);
    this.#report(namespace, key, plan.reports);
    if (failures.length > 0) throw failures[0]!;
    return retries.length === 0 ? undefined : { requeueAfter: Math.min(...retries) };
  };

  async #act(key: string, step: WorkloadStep, moving: readonly string[], decorations: ReadonlyMap<string, KubeObject>, outcome: (pod: Pod, blocked: NonNullable<PodRolloutReport["blocked"]>, retryInMs: number) => void): Promise<void> {
    const record = (type: "Normal" | "Warning", reason: string, message: string) => {
      for (const name of moving) {
        const decoration = decorations.get(name);
        if (decoration !== undefined) this.#options.events.record(decoration, type, reason, message);
      }
    };
    if (step.kind !== "evict") {
      await writeUpdateStep(this.#stepWriter(key, (reason, message) => record("Normal", reason, message)), step);
      return;
    }
    const name = step.pod.metadata?.name ?? "";
    const eviction = await this.#options.evictions.evict(step.pod);
    if (eviction.kind === "refused") {
      // Never forced: the budget decides; the pod keeps running and is tried again with backoff.
      const message = `pod ${name}: eviction refused: ${eviction.message}`;
      record("Warning", "EvictionRefused", message);
      outcome(step.pod, { reason: "EvictionRefused", message }, eviction.retryInMs);
      return;
    }
    this.#expectGone(key, step.pod);
    record("Normal", "Evicted", `evicted pod ${name} so that its owner recreates it: ${step.reason}`);
  }

  #stepWriter(key: string, record: StepWriter["record"]): StepWriter {
    return {
      pods: this.#options.client.pods,
      nowMs: () => this.#options.clock.now(),
      operationId: DECORATION_OPERATION_ID,
      expectNewer: (pod) => {
        const { namespace = "", name = "", resourceVersion } = pod.metadata ?? {};
        this.#options.expectations.expect(key, () => this.#options.pods.get(namespace, name)?.metadata?.resourceVersion !== resourceVersion);
      },
      record,
    };
  }

  #expectGone(key: string, pod: Pod): void {
    const { namespace = "", name = "", uid } = pod.metadata ?? {};
    this.#options.expectations.expect(key, () => {
      const cached = this.#options.pods.get(namespace, name);
      return cached === undefined || cached.metadata?.uid !== uid || isTerminating(cached);
    });
  }

  /** A pod newly held for a reason of its own (not its turn) is said once, on the decorations it should move. */
  #reportBlocked(key: string, reports: ReadonlyMap<string, PodRolloutReport>, decorations: ReadonlyMap<string, KubeObject>): void {
    for (const [pod, report] of reports) {
      const blocked = report.blocked;
      if (blocked === undefined || blocked.reason === "EvictionRefused") continue;
      const before = this.#options.reports.get(key, pod)?.blocked;
      if (before?.reason === blocked.reason && before.message === blocked.message) continue;
      for (const name of report.moving) {
        const decoration = decorations.get(name);
        if (decoration !== undefined) this.#options.events.record(decoration, "Warning", "UpdateBlocked", blocked.message);
      }
    }
  }

  #report(namespace: string, key: string, reports: ReadonlyMap<string, PodRolloutReport>): void {
    const changed = this.#options.reports.set(key, reports);
    if (changed.size > 0) this.#options.reportsChanged(namespace, changed);
  }
}
