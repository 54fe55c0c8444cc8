// The PodDecoration controller's reconcile (DESIGN §4, §5, §7): keep the finalizer, store the
// spec's revision (create, reuse, roll back, escape collisions), validate what it renders,
// report status (with the rollout to pods of other owners, per workload), prune history; on
// deletion, hold the decoration until no pod that will drop it carries it. Reads only caches;
// every write is followed by the watch event it causes.
import type { Logger } from "pino";
import { formatFieldErrors } from "../../api/field-errors.ts";
import type { Condition } from "../../api/kubernetes.ts";
import { historyLimitOf, validatePodDecoration, type PodDecoration, type PodDecorationStatus } from "../../api/poddecoration.ts";
import { API_VERSION, POD_DECORATION_KIND } from "../../api/group.ts";
import { collaSetOwnerOf } from "../../api/owners.ts";
import { isNotFound } from "../../kube/errors.ts";
import { splitKey, type ControllerRevision, type KubeObject, type Pod } from "../../kube/objects.ts";
import type { ResourceClient, StatusClient } from "../../kube/resource-client.ts";
import { POD_DECORATION_NAME_LABEL } from "../../revision/controller-revision.ts";
import type { StoredRevision } from "../../revision/history.ts";
import { revisionData } from "../../revision/revision-data.ts";
import { RevisionHistory } from "../revision-history.ts";
import type { Lister } from "../runtime/cache.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Result } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import { isMatchedPod } from "../../decoration/rollout.ts";
import { recordedRevisions } from "../../decoration/recording.ts";
import { podsForSelector, podsRecording, selectablePods } from "./pod-indexes.ts";
import { desiredStatus } from "./status.ts";
import { WorkloadTally, type WorkloadReports } from "./workload-status.ts";
import { workloadKeyOfPod } from "../workload-rollout/workloads.ts";
import { addFinalizerOperation, hasFinalizer, removeFinalizerOperations } from "../finalizers.ts";
import { writeStatus } from "../status-write.ts";
import type { DryRunCreate } from "../../kube/server-dry-run.ts";
import { validateTemplate } from "./template-validation.ts";

export const POD_DECORATION_FINALIZER = "poddecoration.kusionstack.io/protection";

export type CachedDecoration = PodDecoration & KubeObject;

export interface PodDecorationReconcilerOptions {
  decorations: Lister<CachedDecoration>;
  revisions: Lister<ControllerRevision>;
  pods: Lister<Pod>;
  /** CollaSets, by which a CollaSet pod's ownership is checked: a pod names its owner, the cache says whether it exists. */
  collaSets: Lister<KubeObject>;
  client: {
    podDecorations: Pick<ResourceClient<CachedDecoration>, "jsonPatch"> & Pick<StatusClient<CachedDecoration>, "jsonPatchStatus">;
    controllerRevisions: Pick<ResourceClient<ControllerRevision>, "create" | "jsonPatch" | "delete">;
  };
  dryRunCreate: DryRunCreate;
  /** The API server's Kubernetes version (gitVersion) as serve last read it, for what a condition says. */
  kubernetesVersion?: () => string | undefined;
  /** The rollout to pods of other owners: what it reports of each pod (absent: not running). */
  rolloutReports?: WorkloadReports;
  events: Pick<EventRecorder, "record">;
  clock: Clock;
  logger: Logger;
}

/** A status computed from a stale cache lost its race; the newer object's event reconciles again. */
const STALE: Result = { requeueAfter: 1000 };

type TemplateCondition = Omit<Condition, "lastTransitionTime" | "observedGeneration">;

export class PodDecorationReconciler {
  readonly #options: PodDecorationReconcilerOptions;
  /**
   * The verdict per decoration key, for the uid and revision it was reached for: validate each
   * revision once. One entry per decoration in the cache: a deleted one's is forgotten.
   */
  readonly #verdicts = new Map<string, { uid: string; revision: string; condition: TemplateCondition }>();
  readonly #revisions: RevisionHistory;

  constructor(options: PodDecorationReconcilerOptions) {
    this.#options = options;
    this.#revisions = new RevisionHistory({ revisions: options.revisions, client: options.client.controllerRevisions, events: options.events, logger: options.logger });
  }

  reconcile = async (key: string): Promise<Result | undefined> => {
    const { namespace = "", name } = splitKey(key);
    const decoration = this.#options.decorations.get(namespace, name);
    if (decoration === undefined || decoration.metadata.deletionTimestamp != null) this.#verdicts.delete(key);
    if (decoration === undefined) return undefined;
    if (decoration.metadata.deletionTimestamp != null) return this.#finalize(decoration);
    if (!hasFinalizer(decoration, POD_DECORATION_FINALIZER)) {
      await this.#options.client.podDecorations.jsonPatch(namespace, name, [addFinalizerOperation(decoration, POD_DECORATION_FINALIZER)]);
      return undefined;
    }

    const errors = validatePodDecoration(decoration);
    if (errors.length > 0) {
      const message = formatFieldErrors("PodDecoration", name, errors).join("; ");
      const written = await this.#writeStatus(decoration, undefined, { type: "TemplateValid", status: "False", reason: "Invalid", message });
      return written.stale ? STALE : undefined;
    }

    const data = revisionData(decoration);
    const stored = await this.#revisions.storeNewest(
      { object: decoration, apiVersion: API_VERSION, kind: POD_DECORATION_KIND, ownerLabelKey: POD_DECORATION_NAME_LABEL },
      data,
      (collisionCount) => writeStatus(this.#options.client.podDecorations, decoration, { ...decoration.status, collisionCount }),
    );
    if (stored.kind === "requeue") return stored.result;

    const updatedRevision = stored.name;
    const templateValid = await this.#templateValidity(key, decoration, updatedRevision, data);
    const written = await this.#writeStatus(decoration, updatedRevision, templateValid);
    if (written.stale) return STALE;
    await this.#prune(decoration, stored.history, written.status);
    return undefined;
  };

  /**
   * The decoration goes once no pod that will drop it records it: live pods of a CollaSet that
   * exists, in the pod's namespace, with the UID the pod names (its controller removes it), and
   * live pods of other owners unless the rollout reports them blocked (a change it may not make:
   * they keep the decoration until their owner recreates them). A pod on its way out, a finished
   * one, or one naming a CollaSet that is not there drops nothing and holds nothing: anyone who
   * may create pods could otherwise make a decoration undeletable.
   */
  async #finalize(decoration: CachedDecoration): Promise<Result | undefined> {
    const { namespace = "", name = "" } = decoration.metadata;
    if (!hasFinalizer(decoration, POD_DECORATION_FINALIZER)) return undefined;
    const reports = this.#options.rolloutReports;
    const carriers = podsRecording(this.#options.pods, decoration).filter((pod) => {
      if (pod.metadata?.deletionTimestamp != null || pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") return false;
      const collaSet = collaSetOwnerOf(pod);
      if (collaSet !== undefined) return collaSet.uid !== undefined && this.#options.collaSets.get(namespace, collaSet.name)?.metadata?.uid === collaSet.uid;
      const key = workloadKeyOfPod(pod);
      if (reports === undefined || key === undefined) return false;
      return reports.get(key, pod.metadata?.name ?? "")?.blocked === undefined;
    });
    if (carriers.length > 0) {
      this.#options.logger.debug({ key: `${namespace}/${name}`, reason: `waiting for ${carriers.length} pods to drop the decoration` });
      return undefined;
    }
    try {
      await this.#options.client.podDecorations.jsonPatch(namespace, name, removeFinalizerOperations(decoration, POD_DECORATION_FINALIZER));
      this.#options.events.record(decoration, "Normal", "Released", "no pod that will drop the decoration carries it any more");
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    return undefined;
  }

  async #templateValidity(key: string, decoration: CachedDecoration, revision: string, data: ReturnType<typeof revisionData>): Promise<TemplateCondition> {
    const uid = decoration.metadata.uid ?? "";
    const known = this.#verdicts.get(key);
    if (known?.uid === uid && known.revision === revision) return known.condition;
    const matched = selectablePods(this.#options.pods, decoration).filter((pod) => isMatchedPod(decoration, pod)).sort(byName)[0];
    const verdict = await validateTemplate(decoration, { revisionName: revision, template: data.template, injectStrategy: data.injectStrategy }, matched, this.#options.dryRunCreate);
    const condition: TemplateCondition = !verdict.valid
      ? { type: "TemplateValid", status: "False", reason: "DryRunRejected", message: verdict.message }
      : verdict.dropped !== undefined && verdict.dropped.length > 0
        ? { type: "TemplateValid", status: "False", reason: "FieldsDropped", message: this.#droppedMessage(revision, verdict.dropped) }
        : { type: "TemplateValid", status: "True", reason: "DryRunAccepted", message: `a pod rendered with revision ${revision} passes a server-side dry run` };
    if (!verdict.valid) this.#options.events.record(decoration, "Warning", "TemplateInvalid", `revision ${revision}: ${verdict.message}`);
    if (condition.reason === "FieldsDropped") {
      // Not a refusal: pods are created, without these fields. Said where operators look: status, an Event, the log.
      this.#options.events.record(decoration, "Warning", "TemplateNotEnforced", condition.message ?? "");
      this.#options.logger.warn({ key, revision, dropped: verdict.valid ? verdict.dropped : [] }, "the API server drops fields of this decoration from pods: they are not enforced");
    }
    this.#verdicts.set(key, { uid, revision, condition });
    return condition;
  }

  #droppedMessage(revision: string, dropped: readonly string[]): string {
    const version = this.#options.kubernetesVersion?.();
    const server = version === undefined ? "the API server" : `the API server (Kubernetes ${version})`;
    return `${server} accepts a pod rendered with revision ${revision} but drops ${dropped.join(", ")}: that part of the decoration is not enforced on this cluster (a feature this Kubernetes version or its feature gates lack, or a field it does not know)`;
  }

  async #writeStatus(decoration: CachedDecoration, updatedRevision: string | undefined, templateValid: TemplateCondition): Promise<{ status: PodDecorationStatus; stale: boolean }> {
    const now = new Date(this.#options.clock.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
    const status = decorationStatus(this.#options.pods, decoration, updatedRevision, templateValid, now, this.#options.rolloutReports);
    return { status, stale: (await writeStatus(this.#options.client.podDecorations, decoration, status)) === "stale" };
  }

  async #prune(decoration: CachedDecoration, history: readonly StoredRevision[], status: PodDecorationStatus): Promise<void> {
    const name = decoration.metadata.name ?? "";
    const inUse = new Set<string>([status.currentRevision, status.updatedRevision].filter((revision) => revision !== undefined));
    for (const pod of podsRecording(this.#options.pods, decoration)) {
      const revision = recordedRevisions(pod)?.get(name);
      if (revision !== undefined) inUse.add(revision);
    }
    await this.#revisions.prune(decoration.metadata.namespace ?? "", history, status.updatedRevision, historyLimitOf(decoration), inUse);
  }
}

function byName(a: Pod, b: Pod): number {
  const [x, y] = [a.metadata?.name ?? "", b.metadata?.name ?? ""];
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The status a decoration should have, from the caches: its pods through the indexes, the
 * counts and details (status.ts), and — when the rollout to pods of other owners runs — its
 * per-workload standing (workload-status.ts). What the reconciler writes, and what the
 * benchmarks time.
 */
export function decorationStatus(
  pods: Lister<Pod>,
  decoration: CachedDecoration,
  updatedRevision: string | undefined,
  templateValid: TemplateCondition,
  now: string,
  reports?: WorkloadReports,
): PodDecorationStatus {
  const { namespace = "", name = "" } = decoration.metadata;
  const selectable = podsForSelector(pods, decoration);
  return desiredStatus({
    decoration,
    pods: selectable.pods,
    podsSelected: selectable.selected,
    updatedRevision,
    collisionCount: decoration.status?.collisionCount ?? 0,
    templateValid,
    now,
    workloads: reports === undefined ? undefined : new WorkloadTally(namespace, name, reports),
  });
}
