// The PodDecoration controller's reconcile (DESIGN §4, §5, §7): keep the finalizer, store the
// spec's revision (create, reuse, roll back, escape collisions), validate what it renders,
// report status, prune history; on deletion, hold the decoration until no CollaSet pod
// carries it. Reads only caches; every write is followed by the watch event it causes.
import type { Logger } from "pino";
import { formatFieldErrors } from "../../api/field-errors.ts";
import type { Condition } from "../../api/kubernetes.ts";
import { historyLimitOf, validatePodDecoration, type PodDecoration, type PodDecorationStatus } from "../../api/poddecoration.ts";
import { isNotFound } from "../../kube/errors.ts";
import { splitKey, type ControllerRevision, type KubeObject, type Pod } from "../../kube/objects.ts";
import type { ResourceClient, StatusClient } from "../../kube/resource-client.ts";
import { sameJson } from "../../api/json.ts";
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
import { podsRecording, selectablePods } from "./pod-indexes.ts";
import { collaSetOf, desiredStatus } from "./status.ts";
import type { DryRunCreate } from "../server-dry-run.ts";
import { validateTemplate } from "./template-validation.ts";

export const POD_DECORATION_FINALIZER = "poddecoration.kusionstack.io/protection";

export type CachedDecoration = PodDecoration & KubeObject;

export interface PodDecorationReconcilerOptions {
  decorations: Lister<CachedDecoration>;
  revisions: Lister<ControllerRevision>;
  pods: Lister<Pod>;
  client: {
    podDecorations: Pick<ResourceClient<CachedDecoration>, "jsonPatch"> & Pick<StatusClient<CachedDecoration>, "replaceStatus">;
    controllerRevisions: Pick<ResourceClient<ControllerRevision>, "create" | "jsonPatch" | "delete">;
  };
  dryRunCreate: DryRunCreate;
  events: Pick<EventRecorder, "record">;
  clock: Clock;
  logger: Logger;
}

type TemplateCondition = Omit<Condition, "lastTransitionTime" | "observedGeneration">;

export class PodDecorationReconciler {
  readonly #options: PodDecorationReconcilerOptions;
  /** The verdict per decoration uid, for the revision it was reached for: validate each revision once. */
  readonly #verdicts = new Map<string, { revision: string; condition: TemplateCondition }>();
  readonly #revisions: RevisionHistory;

  constructor(options: PodDecorationReconcilerOptions) {
    this.#options = options;
    this.#revisions = new RevisionHistory({ revisions: options.revisions, client: options.client.controllerRevisions, events: options.events });
  }

  reconcile = async (key: string): Promise<Result | undefined> => {
    const { namespace = "", name } = splitKey(key);
    const decoration = this.#options.decorations.get(namespace, name);
    if (decoration === undefined) return undefined;
    if (decoration.metadata.deletionTimestamp != null) return this.#finalize(decoration);
    if (!(decoration.metadata.finalizers ?? []).includes(POD_DECORATION_FINALIZER)) {
      await this.#addFinalizer(decoration);
      return undefined;
    }

    const errors = validatePodDecoration(decoration);
    if (errors.length > 0) {
      const message = formatFieldErrors("PodDecoration", name, errors).join("; ");
      await this.#writeStatus(decoration, undefined, { type: "TemplateValid", status: "False", reason: "Invalid", message });
      return undefined;
    }

    const history = this.#revisions.of(decoration);
    const collisionCount = decoration.status?.collisionCount ?? 0;
    const data = revisionData(decoration);
    const stored = await this.#revisions.store(
      { object: decoration, apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", ownerLabelKey: POD_DECORATION_NAME_LABEL },
      data,
      collisionCount,
      history,
    );
    if (stored.kind === "wait") return { requeueAfter: 500 };
    if (stored.kind === "collision") {
      this.#options.logger.info({ key, reason: `revision name ${stored.name} is taken by other data; collisionCount ${collisionCount + 1}` });
      await this.#options.client.podDecorations.replaceStatus({ ...decoration, status: { ...decoration.status, collisionCount: collisionCount + 1 } });
      return undefined;
    }

    const updatedRevision = stored.name;
    const templateValid = await this.#templateValidity(decoration, updatedRevision, data);
    const status = await this.#writeStatus(decoration, updatedRevision, templateValid);
    await this.#prune(decoration, history, status);
    return undefined;
  };

  async #addFinalizer(decoration: CachedDecoration): Promise<void> {
    const { namespace = "", name = "" } = decoration.metadata;
    const operations = decoration.metadata.finalizers === undefined
      ? [{ op: "add" as const, path: "/metadata/finalizers", value: [POD_DECORATION_FINALIZER] }]
      : [{ op: "add" as const, path: "/metadata/finalizers/-", value: POD_DECORATION_FINALIZER }];
    await this.#options.client.podDecorations.jsonPatch(namespace, name, operations);
  }

  /** The decoration goes once no CollaSet pod records it (the CollaSet controller removes it from them). */
  async #finalize(decoration: CachedDecoration): Promise<Result | undefined> {
    const { namespace = "", name = "" } = decoration.metadata;
    const finalizers = decoration.metadata.finalizers ?? [];
    if (!finalizers.includes(POD_DECORATION_FINALIZER)) return undefined;
    const carriers = podsRecording(this.#options.pods, decoration).filter((pod) => collaSetOf(pod) !== undefined);
    if (carriers.length > 0) {
      this.#options.logger.debug({ key: `${namespace}/${name}`, reason: `waiting for ${carriers.length} CollaSet pods to drop the decoration` });
      return undefined;
    }
    try {
      await this.#options.client.podDecorations.jsonPatch(namespace, name, [
        // The test makes a concurrent change of the finalizers fail instead of being overwritten.
        { op: "test", path: "/metadata/finalizers", value: finalizers },
        { op: "replace", path: "/metadata/finalizers", value: finalizers.filter((finalizer) => finalizer !== POD_DECORATION_FINALIZER) },
      ]);
      this.#options.events.record(decoration, "Normal", "Released", "no CollaSet pod carries the decoration any more");
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    return undefined;
  }

  async #templateValidity(decoration: CachedDecoration, revision: string, data: ReturnType<typeof revisionData>): Promise<TemplateCondition> {
    const uid = decoration.metadata.uid ?? "";
    const known = this.#verdicts.get(uid);
    if (known?.revision === revision) return known.condition;
    const matched = selectablePods(this.#options.pods, decoration).filter((pod) => isMatchedPod(decoration, pod)).sort(byName)[0];
    const verdict = await validateTemplate(decoration, { revisionName: revision, template: data.template, injectStrategy: data.injectStrategy }, matched, this.#options.dryRunCreate);
    const condition: TemplateCondition = verdict.valid
      ? { type: "TemplateValid", status: "True", reason: "DryRunAccepted", message: `a pod rendered with revision ${revision} passes a server-side dry run` }
      : { type: "TemplateValid", status: "False", reason: "DryRunRejected", message: verdict.message };
    if (!verdict.valid) this.#options.events.record(decoration, "Warning", "TemplateInvalid", `revision ${revision}: ${verdict.message}`);
    this.#verdicts.set(uid, { revision, condition });
    return condition;
  }

  async #writeStatus(decoration: CachedDecoration, updatedRevision: string | undefined, templateValid: TemplateCondition): Promise<PodDecorationStatus> {
    const status = desiredStatus({
      decoration,
      pods: selectablePods(this.#options.pods, decoration),
      updatedRevision,
      collisionCount: decoration.status?.collisionCount ?? 0,
      templateValid,
      now: new Date(this.#options.clock.now()).toISOString().replace(/\.\d{3}Z$/, "Z"),
    });
    if (!sameJson(status, decoration.status ?? {})) {
      await this.#options.client.podDecorations.replaceStatus({ ...decoration, status });
    }
    return status;
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
