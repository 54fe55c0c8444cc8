// The OperationJob controller's reconcile: kuperator's protection finalizer on the job, the plan
// (plan.ts) carried out — pods labelled for their owner's replace, let go, unprotected — then the
// status, or the job deleted once its time to live is over. A job being deleted lets its pods go
// first (deleting a job cancels its replaces), then its finalizer.
import type { Logger } from "pino";
import { API_VERSION, COLLASET_KIND } from "../../api/group.ts";
import { formatFieldErrors } from "../../api/field-errors.ts";
import { defaultOperationJob, validateOperationJob, type OperationJob } from "../../api/operationjob.ts";
import type { CollaSet } from "../../api/collaset.ts";
import { sameJson } from "../../api/json.ts";
import { isLostRace, isNotFound } from "../../kube/errors.ts";
import { controllerOf, splitKey, type KubeObject, type Pod } from "../../kube/objects.ts";
import type { ResourceClient, StatusClient } from "../../kube/resource-client.ts";
import { PAIR_ORIGIN_NAME_LABEL, TO_REPLACE_LABEL } from "../collaset/pod-state.ts";
import { addFinalizerOperation, hasFinalizer, removeFinalizerOperations } from "../finalizers.ts";
import { labelOperations } from "../label-patch.ts";
import type { Lister } from "../runtime/cache.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Result } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import type { Expectations } from "../runtime/expectations.ts";
import { PROTECT_FINALIZER } from "../transition-rules/reconciler.ts";
import { planJob, releaseWrites, REPLACE_PROTECTION_FINALIZER, type PodWrite } from "./plan.ts";

export type CachedOperationJob = OperationJob & KubeObject;

export interface OperationJobReconcilerOptions {
  jobs: Lister<CachedOperationJob>;
  pods: Lister<Pod>;
  collaSets: Lister<CollaSet & KubeObject>;
  client: {
    jobs: Pick<ResourceClient<CachedOperationJob>, "jsonPatch" | "delete"> & Pick<StatusClient<CachedOperationJob>, "jsonPatchStatus">;
    pods: Pick<ResourceClient<Pod>, "jsonPatch">;
  };
  events: Pick<EventRecorder, "record">;
  expectations: Expectations;
  clock: Clock;
  logger: Logger;
}

export class OperationJobReconciler {
  readonly #options: OperationJobReconcilerOptions;

  constructor(options: OperationJobReconcilerOptions) {
    this.#options = options;
  }

  reconcile = async (key: string): Promise<Result | undefined> => {
    const { namespace = "", name } = splitKey(key);
    const { expectations, events } = this.#options;
    const cached = this.#options.jobs.get(namespace, name);
    if (cached === undefined) {
      expectations.forget(key);
      return undefined;
    }
    const waiting = expectations.satisfied(key);
    if (!waiting.satisfied) return { requeueAfter: waiting.retryInMs };
    const pod = (podName: string) => this.#options.pods.get(namespace, podName);

    if (cached.metadata.deletionTimestamp != null) {
      // Cancelled: every target is let go, then the job may go.
      await this.#write(key, (cached.spec.targets ?? []).flatMap((target) => releaseWrites(pod(target.name ?? ""))));
      if (hasFinalizer(cached, PROTECT_FINALIZER)) {
        try {
          await this.#options.client.jobs.jsonPatch(namespace, name, removeFinalizerOperations(cached, PROTECT_FINALIZER));
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      }
      return undefined;
    }
    if (!hasFinalizer(cached, PROTECT_FINALIZER)) {
      await this.#options.client.jobs.jsonPatch(namespace, name, [{ op: "test", path: "/metadata/resourceVersion", value: cached.metadata.resourceVersion }, addFinalizerOperation(cached, PROTECT_FINALIZER)]);
      this.#expectNewer(key, cached);
      return undefined;
    }
    const errors = validateOperationJob(cached);
    if (errors.length > 0) {
      events.record(cached, "Warning", "InvalidSpec", formatFieldErrors("OperationJob", name, errors).join("; "));
      return undefined;
    }

    const job = defaultOperationJob(cached);
    const plan = planJob({
      job,
      nowMs: this.#options.clock.now(),
      pod,
      newPodsOf: (origin) => this.#options.pods.list(namespace).filter((item) => item.metadata?.labels?.[PAIR_ORIGIN_NAME_LABEL] === origin),
      replaceable: (target) => this.#replaceable(namespace, target),
    });
    for (const event of plan.events) events.record(cached, event.type, event.reason, event.message);
    if (plan.deleteJob) {
      try {
        await this.#options.client.jobs.delete(namespace, name, { preconditions: { uid: cached.metadata.uid } });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      return undefined;
    }
    await this.#write(key, plan.writes);
    if (!sameJson(plan.status, cached.status ?? {})) {
      try {
        await this.#options.client.jobs.jsonPatchStatus(namespace, name, [
          { op: "test", path: "/metadata/resourceVersion", value: cached.metadata.resourceVersion },
          { op: "add", path: "/status", value: plan.status },
        ]);
      } catch (error) {
        // A newer object: its event brings this key back.
        if (isLostRace(error)) return { requeueAfter: 1000 };
        throw error;
      }
      this.#expectNewer(key, cached);
    }
    return plan.requeueAfterMs === undefined ? undefined : { requeueAfter: plan.requeueAfterMs };
  };

  /**
   * A pod is replaced the way kuperator's Replace means (a new pod first, the pod released once
   * the new one serves) only by a CollaSet; any other owner, or none, would leave the label unread.
   */
  #replaceable(namespace: string, pod: Pod): { ok: true } | { ok: false; reason: string } {
    const owner = controllerOf(pod);
    if (owner === undefined) return { ok: false, reason: `pod ${pod.metadata?.name ?? ""} has no controller to replace it (only a CollaSet's pods are replaced: a new pod first, the pod released once the new one serves)` };
    if (owner.kind !== COLLASET_KIND || owner.apiVersion !== API_VERSION) return { ok: false, reason: `pod ${pod.metadata?.name ?? ""} is controlled by ${owner.kind} ${owner.name}, which does not replace a pod labelled ${TO_REPLACE_LABEL} (only a CollaSet's pods are replaced: a new pod first, the pod released once the new one serves)` };
    const collaSet = this.#options.collaSets.get(namespace, owner.name);
    if (collaSet?.metadata.uid !== owner.uid) return { ok: false, reason: `pod ${pod.metadata?.name ?? ""} names CollaSet ${owner.name} as its controller, which does not exist` };
    return { ok: true };
  }

  async #write(key: string, writes: readonly PodWrite[]): Promise<void> {
    for (const write of writes) {
      const { namespace = "", name = "", resourceVersion, finalizers } = write.pod.metadata ?? {};
      const operations = write.kind === "mark-replace"
        ? [...labelOperations(write.pod, { [TO_REPLACE_LABEL]: "true" }, []), ...(hasFinalizer(write.pod, REPLACE_PROTECTION_FINALIZER) ? [] : [addFinalizerOperation(write.pod, REPLACE_PROTECTION_FINALIZER)])]
        : write.kind === "release"
          ? [...labelOperations(write.pod, {}, [TO_REPLACE_LABEL]), ...((finalizers ?? []).includes(REPLACE_PROTECTION_FINALIZER) ? removeFinalizerOperations(write.pod, REPLACE_PROTECTION_FINALIZER) : [])]
          : [{ op: "test" as const, path: "/metadata/resourceVersion", value: resourceVersion }, ...removeFinalizerOperations(write.pod, REPLACE_PROTECTION_FINALIZER)];
      try {
        await this.#options.client.pods.jsonPatch(namespace, name, operations);
      } catch (error) {
        // The pod changed or went: its event brings the job back.
        if (isLostRace(error) || isNotFound(error)) continue;
        throw error;
      }
      this.#options.expectations.expect(key, () => this.#options.pods.get(namespace, name)?.metadata?.resourceVersion !== resourceVersion);
    }
  }

  #expectNewer(key: string, job: CachedOperationJob): void {
    const { namespace = "", name = "", resourceVersion } = job.metadata;
    this.#options.expectations.expect(key, () => this.#options.jobs.get(namespace, name)?.metadata.resourceVersion !== resourceVersion);
  }
}
