// The PodDecoration controller's reconcile (DESIGN §4, §5, §7): keep the finalizer, store the
// spec's revision (create, reuse, roll back, escape collisions), validate what it renders,
// report status (with the rollout to pods of other owners, per workload), prune history; on
// deletion, hold the decoration until no pod that will drop it carries it. Reads only caches;
// every write is followed by the watch event it causes. ClusterPodDecorations (DESIGN §12) go
// the same way, over every namespace they select (decoration-kinds.ts says what differs).
import type { Logger } from "pino";
import { formatFieldErrors } from "../../api/field-errors.ts";
import type { Condition } from "../../api/kubernetes.ts";
import { historyLimitOf, type PodDecoration, type PodDecorationStatus } from "../../api/poddecoration.ts";
import { NAMESPACES_LISTED_BUDGET_BYTES, type ClusterPodDecorationStatus } from "../../api/cluster-poddecoration.ts";
import { collaSetOwnerOf } from "../../api/owners.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { ControllerRevision, KubeObject, Pod } from "../../kube/objects.ts";
import type { ResourceClient, StatusClient } from "../../kube/resource-client.ts";
import type { StoredRevision } from "../../revision/history.ts";
import { revisionData } from "../../revision/revision-data.ts";
import { RevisionHistory } from "../revision-history.ts";
import type { Lister } from "../runtime/cache.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Result } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import { isMatchedPod } from "../../decoration/rollout.ts";
import { decorationKey, isClusterKey } from "../../decoration/decoration-kind.ts";
import { selectablePods } from "./pod-indexes.ts";
import { desiredStatus, recordedRevision, selectedFacts, type RecordedTemplateOf, type StatusFacts } from "./status.ts";
import { WorkloadTally, type WorkloadReports } from "./workload-status.ts";
import { workloadKeyOfPod } from "../workload-rollout/workloads.ts";
import { addFinalizerOperation, hasFinalizer, removeFinalizerOperations } from "../finalizers.ts";
import { writeStatus } from "../status-write.ts";
import type { DryRunCreate } from "../../kube/server-dry-run.ts";
import { validateTemplate } from "./template-validation.ts";
import { DEFAULT_DECORATION_BOUNDS, type DecorationBounds } from "../../decoration/engine-bounds.ts";
import { NamespaceStandings, type NamespaceStanding } from "./namespace-standing.ts";
import { storedRevision, type DecorationSource } from "../../decoration/updated-revisions.ts";
import { podDecorationKind, type CachedDecoration, type ReconciledKind } from "./decoration-kinds.ts";
import type { ConditionWithoutTime } from "../conditions.ts";
import { namespaceStandards } from "../../decoration/pod-security-standards.ts";

export const POD_DECORATION_FINALIZER = "poddecoration.kusionstack.io/protection";

export type { CachedDecoration } from "./decoration-kinds.ts";

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
  /** The namespace limit the webhook enforces (DESIGN §10); the default when absent. */
  bounds?: DecorationBounds;
  /** The kind reconciled (default PodDecorations, from `decorations` and `client.podDecorations`). */
  kind?: ReconciledKind;
  /** A namespace's labels (a ClusterPodDecoration's Pod Security standing reads them). */
  namespaceLabels?: (namespace: string) => Readonly<Record<string, string>> | undefined;
  /**
   * The templates of the revisions pods record, of both kinds (storedTemplates over both
   * revision caches), by which status judges what pods run. Absent: this kind's own revisions,
   * so a pod recording the other kind too is judged anew every pass.
   */
  recordedTemplates?: RecordedTemplateOf;
}

/** A status computed from a stale cache lost its race; the newer object's event reconciles again. */
const STALE: Result = { requeueAfter: 1000 };

type TemplateCondition = Omit<Condition, "lastTransitionTime" | "observedGeneration">;

/** Namespaces named at most in one condition's message: a fleet is thousands. */
const NAMESPACES_NAMED = 5;

export class PodDecorationReconciler {
  readonly #options: PodDecorationReconcilerOptions;
  readonly #kind: ReconciledKind;
  /**
   * The verdict per decoration key, for the uid and revision it was reached for: validate each
   * revision once. One entry per decoration in the cache: a deleted one's is forgotten.
   */
  readonly #verdicts = new Map<string, { uid: string; revision: string; condition: TemplateCondition }>();
  readonly #revisions: RevisionHistory;
  readonly #standings: NamespaceStandings;

  constructor(options: PodDecorationReconcilerOptions) {
    this.#options = options;
    this.#kind = options.kind ?? podDecorationKind(options.decorations, options.client.podDecorations);
    this.#standings = new NamespaceStandings((options.bounds ?? DEFAULT_DECORATION_BOUNDS).maxDecorationsPerNamespace);
    this.#revisions = new RevisionHistory({ revisions: options.revisions, client: options.client.controllerRevisions, events: options.events, logger: options.logger });
  }

  reconcile = async (key: string): Promise<Result | undefined> => {
    const decoration = this.#kind.get(key);
    if (decoration === undefined || decoration.metadata.deletionTimestamp != null) this.#verdicts.delete(key);
    if (decoration === undefined) return undefined;
    if (decoration.metadata.deletionTimestamp != null) return this.#finalize(decoration);
    const { namespace = "", name = "" } = decoration.metadata;
    if (!hasFinalizer(decoration, POD_DECORATION_FINALIZER)) {
      await this.#kind.client.jsonPatch(namespace, name, [addFinalizerOperation(decoration, POD_DECORATION_FINALIZER)]);
      return undefined;
    }

    const views = this.#kind.views(decoration);
    const standing = this.#standing(decoration, views);
    const errors = this.#kind.validate(decoration);
    if (errors.length > 0) {
      const message = formatFieldErrors(this.#kind.kind, name, errors).join("; ");
      const written = await this.#writeStatus(decoration, views, undefined, { type: "TemplateValid", status: "False", reason: "Invalid", message }, standing);
      return written.stale ? STALE : undefined;
    }

    const data = revisionData(decoration);
    const stored = await this.#revisions.storeNewest(
      { object: decoration, apiVersion: this.#kind.apiVersion, kind: this.#kind.kind, ownerLabelKey: this.#kind.ownerLabelKey, revisionNamespace: this.#kind.revisionNamespace(decoration), namePrefix: this.#kind.namePrefix },
      data,
      (collisionCount) => writeStatus(this.#kind.client, decoration, { ...decoration.status, collisionCount }),
    );
    if (stored.kind === "requeue") return stored.result;

    const updatedRevision = stored.name;
    const templateValid = await this.#templateValidity(key, decoration, views, updatedRevision, data);
    const written = await this.#writeStatus(decoration, views, updatedRevision, templateValid, standing);
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
    const carriers = this.#kind.recording(this.#options.pods, decoration).filter((pod) => {
      if (pod.metadata?.deletionTimestamp != null || pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") return false;
      const collaSet = collaSetOwnerOf(pod);
      if (collaSet !== undefined) return collaSet.uid !== undefined && this.#options.collaSets.get(pod.metadata?.namespace ?? "", collaSet.name)?.metadata?.uid === collaSet.uid;
      const key = workloadKeyOfPod(pod);
      if (reports === undefined || key === undefined) return false;
      return reports.get(key, pod.metadata?.name ?? "")?.blocked === undefined;
    });
    if (carriers.length > 0) {
      this.#options.logger.debug({ key: `${namespace}/${name}`, reason: `waiting for ${carriers.length} pods to drop the decoration` });
      return undefined;
    }
    try {
      await this.#kind.client.jsonPatch(namespace, name, removeFinalizerOperations(decoration, POD_DECORATION_FINALIZER));
      this.#options.events.record(decoration, "Normal", "Released", "no pod that will drop the decoration carries it any more");
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    return undefined;
  }

  async #templateValidity(key: string, decoration: CachedDecoration, views: readonly PodDecoration[], revision: string, data: ReturnType<typeof revisionData>): Promise<TemplateCondition> {
    const uid = decoration.metadata.uid ?? "";
    const known = this.#verdicts.get(key);
    if (known?.uid === uid && known.revision === revision) return known.condition;
    // Dry-run in a namespace it decorates, with a pod it selects there when there is one.
    let view: PodDecoration | undefined;
    let matched: Pod | undefined;
    for (const candidate of views) {
      view ??= candidate;
      matched = selectablePods(this.#options.pods, candidate).filter((pod) => isMatchedPod(candidate, pod)).sort(byName)[0];
      if (matched !== undefined) {
        view = candidate;
        break;
      }
    }
    if (view === undefined) return { type: "TemplateValid", status: "Unknown", reason: "NoNamespaceSelected", message: "it selects no namespace: no pod to render it into is dry-run" };
    const verdict = await validateTemplate(view, { revisionName: revision, template: data.template, injectStrategy: data.injectStrategy }, matched, this.#options.dryRunCreate);
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

  /** Its standing among each namespace's decorations it decorates; an Event when others newly out-rank it. */
  #standing(decoration: CachedDecoration, views: readonly PodDecoration[]): NamespaceStanding {
    const standings = views.map((view) => ({ namespace: view.metadata.namespace ?? "", standing: this.#standings.of(view, this.#kind.namespaceDecorations(view.metadata.namespace ?? "")) }));
    const standing = this.#kind.fleet ? fleetStanding(standings, this.#podSecurity(decoration, views)) : (standings[0]?.standing ?? { overLimit: undefined, conditions: [] });
    const outRanked = standing.conditions.find((condition) => condition.type === "OutRanked");
    const before = decoration.status?.conditions?.find((condition) => condition.type === "OutRanked");
    if (outRanked?.status === "True" && (before?.status !== "True" || before.message !== outRanked.message)) this.#options.events.record(decoration, "Warning", "OutRanked", outRanked.message ?? "");
    return standing;
  }

  /**
   * A ClusterPodDecoration's template against the Pod Security Standards of every namespace it
   * selects now: admission checked those it selected then; a namespace labelled in later, or
   * whose level was raised, is said here (DESIGN §12).
   */
  #podSecurity(decoration: CachedDecoration, views: readonly PodDecoration[]): ConditionWithoutTime {
    const refusing: string[] = [];
    for (const view of views) {
      const namespace = view.metadata.namespace ?? "";
      const labels = this.#options.namespaceLabels?.(namespace);
      if (labels === undefined) continue;
      const judged = namespaceStandards(decoration.spec.template ?? {}, namespace, labels, this.#kind.kind, decoration.metadata.name);
      if (judged.refusals.length > 0) refusing.push(judged.refusals[0]!);
    }
    if (refusing.length === 0) return { type: "PodSecurityAdmitted", status: "True", reason: "Admitted", message: `its template keeps the pods of the ${views.length} namespaces it selects admissible under their Pod Security Standards` };
    const more = refusing.length > NAMESPACES_NAMED ? `; and ${refusing.length - NAMESPACES_NAMED} more namespaces` : "";
    return { type: "PodSecurityAdmitted", status: "False", reason: "NamespaceStandardsRefuse", message: `${refusing.slice(0, NAMESPACES_NAMED).join("; ")}${more}` };
  }

  async #writeStatus(decoration: CachedDecoration, views: readonly PodDecoration[], updatedRevision: string | undefined, templateValid: TemplateCondition, standing: NamespaceStanding): Promise<{ status: PodDecorationStatus; stale: boolean }> {
    const now = new Date(this.#options.clock.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
    const template = this.#options.recordedTemplates ?? (this.#kind.fleet ? storedTemplates(undefined, { revisions: this.#options.revisions, namespace: this.#kind.revisionNamespace(decoration) }) : storedTemplates(this.#options.revisions));
    const status = this.#kind.fleet
      ? fleetStatus(this.#options.pods, decoration, views, this.#kind.recordingFacts(this.#options.pods, decoration), updatedRevision, templateValid, now, this.#options.rolloutReports, standing, template)
      : decorationStatus(this.#options.pods, decoration, updatedRevision, templateValid, now, this.#options.rolloutReports, standing, template);
    return { status, stale: (await writeStatus(this.#kind.client, decoration, status)) === "stale" };
  }

  async #prune(decoration: CachedDecoration, history: readonly StoredRevision[], status: PodDecorationStatus): Promise<void> {
    const key = decorationKey(decoration);
    const inUse = new Set<string>([status.currentRevision, status.updatedRevision].filter((revision) => revision !== undefined));
    for (const facts of this.#kind.recordingFacts(this.#options.pods, decoration)) {
      const revision = recordedRevision(facts, key);
      if (revision !== undefined) inUse.add(revision);
    }
    await this.#revisions.prune(this.#kind.revisionNamespace(decoration), history, status.updatedRevision, historyLimitOf(decoration), inUse);
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
  standing?: NamespaceStanding,
  template?: RecordedTemplateOf,
): PodDecorationStatus {
  const { namespace = "", name = "" } = decoration.metadata;
  return desiredStatus({
    decoration,
    selected: selectedFacts(pods, decoration),
    updatedRevision,
    collisionCount: decoration.status?.collisionCount ?? 0,
    templateValid,
    now,
    workloads: reports === undefined ? undefined : new WorkloadTally(namespace, name, reports),
    standing,
    template,
  });
}

/**
 * A ClusterPodDecoration's status (DESIGN §12): the counts over the pods of every namespace it
 * selects (`views`), one pass; a summary per namespace — pods matched and updated, and pods of
 * namespaces it no longer selects that keep what they carry (`recording`) — most outdated first,
 * within its budget, the rest counted; the namespaces it selects.
 */
export function fleetStatus(
  pods: Lister<Pod>,
  decoration: CachedDecoration,
  views: readonly PodDecoration[],
  recording: readonly StatusFacts[],
  updatedRevision: string | undefined,
  templateValid: TemplateCondition,
  now: string,
  reports?: WorkloadReports,
  standing?: NamespaceStanding,
  template?: RecordedTemplateOf,
): ClusterPodDecorationStatus {
  const selected: StatusFacts[] = [];
  for (const view of views) for (const facts of selectedFacts(pods, view)) selected.push(facts);
  const byNamespace = new Map<string, { name: string; matchedPods: number; updatedPods: number; keptPods?: number }>();
  const entry = (namespace: string) => {
    let summary = byNamespace.get(namespace);
    if (summary === undefined) byNamespace.set(namespace, (summary = { name: namespace, matchedPods: 0, updatedPods: 0 }));
    return summary;
  };
  const status = desiredStatus({
    decoration,
    selected,
    updatedRevision,
    collisionCount: decoration.status?.collisionCount ?? 0,
    templateValid,
    now,
    workloads: reports === undefined ? undefined : new WorkloadTally(views.map((view) => view.metadata.namespace ?? ""), decorationKey(decoration), reports),
    standing,
    template,
    perPod: (facts, updated) => {
      const summary = entry(facts.namespace);
      summary.matchedPods++;
      if (updated) summary.updatedPods++;
    },
  });
  const selectedNamespaces = new Set(views.map((view) => view.metadata.namespace ?? ""));
  for (const { namespace, deleting } of recording) {
    if (selectedNamespaces.has(namespace) || deleting) continue;
    const summary = entry(namespace);
    summary.keptPods = (summary.keptPods ?? 0) + 1;
  }
  const summaries = [...byNamespace.values()].sort((a, b) => (b.matchedPods - b.updatedPods) - (a.matchedPods - a.updatedPods) || (b.keptPods ?? 0) - (a.keptPods ?? 0) || (a.name < b.name ? -1 : 1));
  let used = 0;
  let listed = 0;
  for (const summary of summaries) {
    used += JSON.stringify(summary).length + 1;
    if (used > NAMESPACES_LISTED_BUDGET_BYTES) break;
    listed++;
  }
  return {
    ...status,
    selectedNamespaces: views.length,
    ...(summaries.length === 0 ? {} : { namespaces: summaries.slice(0, listed) }),
    ...(summaries.length > listed ? { omittedNamespaces: summaries.length - listed } : {}),
  };
}

/**
 * One standing for a decoration of many namespaces: over its limit or out-ranked in any of them
 * (naming the first few), and its Pod Security standing across them.
 */
function fleetStanding(standings: readonly { namespace: string; standing: NamespaceStanding }[], podSecurity: ConditionWithoutTime): NamespaceStanding {
  const failing = (type: string, status: string) => standings.filter(({ standing }) => standing.conditions.some((condition) => condition.type === type && condition.status === status));
  const over = failing("WithinNamespaceLimit", "False");
  const outRanked = failing("OutRanked", "True");
  const named = (list: typeof standings, type: string) => list.slice(0, NAMESPACES_NAMED).map(({ namespace, standing }) => `in ${namespace}: ${standing.conditions.find((condition) => condition.type === type)?.message ?? ""}`).join("; ") + (list.length > NAMESPACES_NAMED ? `; and in ${list.length - NAMESPACES_NAMED} more namespaces` : "");
  const overLimit = over.length === 0 ? undefined : `over the limit of decorations in ${over.length} namespaces: ${named(over, "WithinNamespaceLimit")}`;
  return {
    overLimit,
    conditions: [
      over.length === 0
        ? { type: "WithinNamespaceLimit", status: "True", reason: "WithinLimit", message: `within the limit of decorations in each of the ${standings.length} namespaces it selects` }
        : { type: "WithinNamespaceLimit", status: "False", reason: "OverNamespaceLimit", message: overLimit! },
      outRanked.length === 0
        ? { type: "OutRanked", status: "False", reason: "NotOutRanked", message: "no decoration of a namespace it selects out-ranks it there" }
        : { type: "OutRanked", status: "True", reason: "OutRankedByOthers", message: named(outRanked, "OutRanked") },
      podSecurity,
    ],
  };
}

/**
 * Stored revisions' templates as pods record them, from the ControllerRevision caches: a
 * PodDecoration's in the pod's namespace (`namespaced`), a ClusterPodDecoration's in the release
 * namespace (`cluster`). A kind whose cache is not given is not found: its records cannot be
 * judged, and the answer is not kept (status.ts).
 */
export function storedTemplates(namespaced: Lister<ControllerRevision> | undefined, cluster?: { revisions: Lister<ControllerRevision>; namespace: string }): RecordedTemplateOf {
  const source = (revisions: Lister<ControllerRevision>): DecorationSource => ({ decorations: () => [], revisionData: (namespace, name) => revisions.get(namespace, name)?.data as unknown });
  const own = namespaced === undefined ? undefined : source(namespaced);
  const clusterSource = cluster === undefined ? undefined : source(cluster.revisions);
  return (namespace, decoration, revision) => {
    if (isClusterKey(decoration)) return clusterSource === undefined ? undefined : storedRevision(clusterSource, cluster!.namespace, revision)?.template;
    return own === undefined ? undefined : storedRevision(own, namespace, revision)?.template;
  };
}
