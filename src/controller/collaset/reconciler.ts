// The CollaSet controller's reconcile (DESIGN §5, §6): store the template's revision, decide
// from the caches what each instance should be (sync-plan.ts), carry that out — create,
// delete, update in place, recreate — then report status and prune history. A pod is never
// deleted for recreation before a dry run shows its replacement would be admitted, and it is
// held by a finalizer until the replacement exists, so no pod and no decision is lost.
import type { Logger } from "pino";
import { defaultCollaSet, validateCollaSet, type CollaSet, type CollaSetStatus } from "../../api/collaset.ts";
import { formatFieldErrors } from "../../api/field-errors.ts";
import { API_VERSION, COLLASET_KIND } from "../../api/group.ts";
import { collaSetOwnerOf } from "../../api/owners.ts";
import { recordedRevisions } from "../../decoration/recording.ts";
import type { DecorationSource } from "../../decoration/updated-revisions.ts";
import { DecorationRevisions, type NamespaceDecorations } from "../decoration-revisions.ts";
import { isLostRace, isNotFound, statusCode, statusMessage } from "../../kube/errors.ts";
import { controllerOf, splitKey, type ControllerRevision, type KubeObject, type Pod } from "../../kube/objects.ts";
import type { ResourceClient, StatusClient } from "../../kube/resource-client.ts";
import { collaSetRevisionData, COLLASET_NAME_LABEL, templateOf } from "../../revision/collaset-revision-data.ts";
import { addFinalizerOperation, hasFinalizer, removeFinalizerOperations } from "../finalizers.ts";
import { RevisionHistory } from "../revision-history.ts";
import { writeStatus } from "../status-write.ts";
import { controlledByKey, controllerUidIndex, type Lister } from "../runtime/cache.ts";
import type { Clock } from "../runtime/clock.ts";
import type { LifecycleOptions } from "../reconciler-controller.ts";
import type { Result } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import type { Expectations } from "../runtime/expectations.ts";
import type { DryRunCreate } from "../../kube/server-dry-run.ts";
import type { Evictions } from "../eviction.ts";
import { writeUpdateStep, type StepWriter } from "../update-step-writes.ts";
import { labelOperations } from "../label-patch.ts";
import { decorationTargets, type Slot } from "../decoration-targets.ts";
import { fleetPlanning, type ClusterDecorations } from "../cluster-decorations.ts";
import { selectablePods } from "../poddecoration/pod-indexes.ts";
import type { PodRolloutReport, RolloutReports } from "../workload-rollout/reports.ts";
import { workloadKey } from "../workload-rollout/workloads.ts";
import { INSTANCE_ID_LABEL, instanceIdOf, RECREATE_FINALIZER, templateRevisionOf } from "./pod-state.ts";
import { isTerminating } from "../pod-availability.ts";
import type { RevisionSources } from "./slot-pod.ts";
import { desiredCollaSetStatus } from "./status.ts";
import { planSync, type Action, type SyncPlan } from "./sync-plan.ts";
import type { InExcludeWrites } from "./in-exclude-writes.ts";
import { idsOfNamesTaken, isPersistentSequence } from "./naming.ts";
import type { ClaimWrites } from "./claim-writes.ts";
import type { ContextWrites } from "./context-writes.ts";

export type CachedCollaSet = CollaSet & KubeObject;

export interface CollaSetReconcilerOptions {
  collaSets: Lister<CachedCollaSet>;
  pods: Lister<Pod>;
  /** CollaSet template revisions. */
  revisions: Lister<ControllerRevision>;
  /** PodDecorations and their revisions. */
  decorations: DecorationSource;
  client: {
    collaSets: Pick<StatusClient<CachedCollaSet>, "jsonPatchStatus">;
    pods: Pick<ResourceClient<Pod>, "create" | "delete" | "jsonPatch"> & Pick<StatusClient<Pod>, "jsonPatchStatus">;
    controllerRevisions: Pick<ResourceClient<ControllerRevision>, "create" | "jsonPatch" | "delete">;
  };
  dryRunCreate: DryRunCreate;
  events: Pick<EventRecorder, "record">;
  expectations: Expectations;
  clock: Clock;
  logger: Logger;
  /** Writes in flight at once for one CollaSet (default 16). */
  burst?: number;
  /** Recreations go through the Eviction API, with a per-pod backoff when a budget refuses. */
  evictions: Evictions;
  /** The CollaSet's PersistentVolumeClaims (volumeClaimTemplates). */
  claims: ClaimWrites;
  /** The ResourceContext its instance ids are recorded in. */
  contexts: ContextWrites;
  /** Pods leaving (podToExclude, the to-exclude label) and joining (podToInclude) the CollaSet. */
  inExclude: InExcludeWrites;
  /** PodOpsLifecycle before each update (absent: off). */
  lifecycle?: LifecycleOptions;
  /** The ClusterPodDecorations selecting each namespace (absent: none are served). */
  clusterDecorations?: ClusterDecorations;
  /** Where what holds its pods' decorations back is reported, for the decorations' status (absent: nowhere). */
  rolloutReports?: RolloutReports;
  /** The decorations of a namespace whose reports changed: their status is due again. */
  reportsChanged?: (namespace: string, decorations: ReadonlySet<string>) => void;
}

/** A write the API server refused for what it is (4xx other than conflicts): retrying will not help soon. */
class Refused extends Error {
  /** When to try again (default 30 s). */
  retryInMs = 30_000;
}

/** A write that failed for a passing reason (the API server or a webhook unavailable): retried with backoff. */
class WriteFailed extends Error {}

export class CollaSetReconciler {
  readonly #options: CollaSetReconcilerOptions;
  readonly #revisions: RevisionHistory;
  readonly #decorations: DecorationRevisions;

  constructor(options: CollaSetReconcilerOptions) {
    this.#options = options;
    this.#revisions = new RevisionHistory({ revisions: options.revisions, client: options.client.controllerRevisions, events: options.events, logger: options.logger });
    this.#decorations = new DecorationRevisions(options.decorations);
  }

  reconcile = async (key: string): Promise<Result | undefined> => {
    const { namespace = "", name } = splitKey(key);
    const cached = this.#options.collaSets.get(namespace, name);
    if (cached === undefined || cached.metadata.deletionTimestamp != null) {
      // The garbage collector deletes the pods; none may wait on us for a replacement.
      this.#options.expectations.forget(key);
      await this.#releaseAll(namespace, name, cached?.metadata.uid);
      if (cached !== undefined) await this.#options.claims.reclaim(cached);
      await this.#options.contexts.release(key, namespace, name);
      return undefined;
    }
    const errors = validateCollaSet(cached);
    if (errors.length > 0) {
      // Stored while no validating webhook was watching: report, touch no pod.
      const message = formatFieldErrors("CollaSet", name, errors).join("; ");
      this.#options.events.record(cached, "Warning", "InvalidSpec", message);
      return undefined;
    }
    const waiting = this.#options.expectations.satisfied(key);
    if (!waiting.satisfied) {
      this.#options.logger.debug({ key, reason: `waiting for ${waiting.pending} writes to show in the cache` });
      return { requeueAfter: waiting.retryInMs };
    }

    const collaSet = defaultCollaSet(cached);
    const stored = await this.#revisions.storeNewest(
      { object: cached, apiVersion: API_VERSION, kind: COLLASET_KIND, ownerLabelKey: COLLASET_NAME_LABEL },
      collaSetRevisionData(collaSet),
      (collisionCount) => writeStatus(this.#options.client.collaSets, cached, { ...cached.status, collisionCount }),
    );
    if (stored.kind === "requeue") return stored.result;
    const { history } = stored;
    const collisionCount = cached.status?.collisionCount ?? 0;

    const pods = this.#options.pods.byIndex(controllerUidIndex, controlledByKey(cached));
    // The revision just stored may not be cached yet: its data is known.
    const decorations = this.#decorations.inNamespace(namespace);
    const sources = this.#sources(namespace, decorations, cached, stored.name, collaSetRevisionData(collaSet));
    let otherPods: Pod[] | undefined;
    const others = () => otherPods ??= this.#options.pods.list(namespace).filter((pod) => controllerOf(pod)?.uid !== cached.metadata.uid);
    // Ids other owners hold in a shared context, and (PersistentSequence) those whose names other pods
    // hold, but a pod about to join: it may take its own name's id back.
    const toInclude = new Set(collaSet.spec.scaleStrategy?.podToInclude ?? []);
    const namesHeld = isPersistentSequence(collaSet) ? others().filter((pod) => !toInclude.has(pod.metadata?.name ?? "")) : [];
    const reservedIds = new Set([...this.#options.contexts.reservedIds(collaSet), ...idsOfNamesTaken(collaSet, namesHeld)]);
    // Pods leaving and joining (podToExclude, podToInclude): that done, the next sync scales and updates (kube-xset skips doSync).
    const inExclude = this.#options.inExclude.plan(collaSet, pods, reservedIds);
    const moving = inExclude.exclude.length > 0 || inExclude.include.length > 0;
    let planned: { slots: readonly Slot[]; targets: Map<string, Map<string, string>> } | undefined;
    const plan: SyncPlan = moving ? { actions: [], blocked: [], waiting: [], stuck: [], held: new Map() } : planSync({
      collaSet,
      updatedRevision: stored.name,
      currentRevision: cached.status?.currentRevision,
      pods,
      nowMs: this.#options.clock.now(),
      reservedIds,
      excluding: inExclude.waiting,
      sources,
      ...(this.#options.lifecycle === undefined ? {} : { lifecycle: { nowMs: this.#options.clock.now(), ...this.#options.lifecycle } }),
      decorationTargets: (slots) => {
        const targets = decorationTargets({
          namespace,
          decorations: decorations.decorations,
          updatedRevision: decorations.updatedRevision,
          maxSelectionRounds: decorations.maxSelectionRounds,
          ...fleetPlanning(this.#options.clusterDecorations, namespace, this.#options.pods, others, (pod) => controllerOf(pod)?.uid === cached.metadata.uid, selectablePods),
          recorded: recordedRevisions,
          slots,
        });
        planned = { slots, targets };
        return targets;
      },
    });
    if (!moving) this.#reportHolds(cached, planned, plan.held);

    if (plan.waiting.length > 0) this.#options.logger.debug({ key, reason: `waiting for revisions: ${plan.waiting.join("; ")}` });
    for (const message of plan.stuck) this.#options.events.record(cached, "Warning", "LifecycleStuck", message);
    if (this.#options.evictions.size > 0) this.#options.evictions.retain(this.#options.pods.list().map((pod) => pod.metadata?.uid ?? ""));
    // The ids are recorded before a pod takes a new one; until they are, no pod is created.
    // A joining pod's id too.
    const creates = [
      ...plan.actions.flatMap((action) => (action.kind === "create" ? [{ instanceId: action.instanceId, pod: action.pod as Pod }] : [])),
      ...inExclude.include.map(({ instanceId, pod }) => ({ instanceId, pod })),
    ];
    let actions = plan.actions;
    let joining = inExclude.include;
    const failures: Error[] = [];
    try {
      await this.#options.contexts.record(key, collaSet, pods, creates);
    } catch (error) {
      if (!isLostRace(error)) failures.push(new WriteFailed(`recording instance ids in ResourceContext: ${statusMessage(error)}`, { cause: error }));
      actions = actions.filter((action) => action.kind !== "create");
      joining = [];
    }
    failures.push(...(await this.#options.inExclude.apply(key, cached, { ...inExclude, include: joining })));
    failures.push(...(await this.#execute(key, cached, actions)));
    // Claims are judged once the pods that leave or join show in the cache.
    // The pods just created count: their ids (not always the smallest free ones) keep their claims.
    if (!moving) failures.push(...(await this.#options.claims.sync(key, cached, [...pods, ...actions.flatMap((action) => (action.kind === "create" ? [action.pod as Pod] : []))])));
    const refused = failures.find((failure) => failure instanceof Refused);
    const retryable = failures.find((failure) => !(failure instanceof Refused));
    const status = desiredCollaSetStatus({
      collaSet: cached,
      pods,
      updatedRevision: stored.name,
      collisionCount,
      // A name in podToInclude without a pod (often one included already, then recreated: the
      // lists are the user's) is an Event only, as kube-xset answers it; other refusals hold.
      blocked: [...plan.blocked, ...inExclude.refusals.flatMap((refusal) => (refusal.pod === undefined ? [] : [refusal.message]))],
      // A write that will be retried failed all the same: the status says so until one succeeds.
      failure: (refused ?? retryable)?.message,
      now: new Date(this.#options.clock.now()).toISOString().replace(/\.\d{3}Z$/, "Z"),
    });
    // A stale cache: the CollaSet's update event requeues this key.
    if ((await writeStatus(this.#options.client.collaSets, cached, status)) === "stale") return { requeueAfter: 1000 };
    await this.#prune(cached, history, stored.name, status, pods);

    if (retryable !== undefined) throw retryable;
    // A refused write is retried slowly: the cause (a webhook, a quota, a budget) may go away by itself.
    const retries = [...failures.flatMap((failure) => (failure instanceof Refused ? [failure.retryInMs] : [])), ...(plan.retryInMs === undefined ? [] : [plan.retryInMs])];
    return retries.length === 0 ? undefined : { requeueAfter: Math.min(...retries) };
  };

  /**
   * What holds its pods' decorations back, for the decorations' status (DESIGN §10, "held back is
   * said"): each live pod whose decoration targets differ from what it runs, with the holder
   * when it is more than its turn — the CollaSet paused, InPlaceOnly, a lifecycle step stuck.
   */
  #reportHolds(collaSet: CachedCollaSet, planned: { slots: readonly Slot[]; targets: Map<string, Map<string, string>> } | undefined, held: SyncPlan["held"]): void {
    const reports = this.#options.rolloutReports;
    if (reports === undefined) return;
    const { namespace = "", name = "", uid = "" } = collaSet.metadata;
    const byPod = new Map<string, PodRolloutReport>();
    for (const slot of planned?.slots ?? []) {
      if (slot.isNew === true) continue;
      const target = planned?.targets.get(slot.name) ?? new Map<string, string>();
      const moving = [...new Set([...slot.current.keys(), ...target.keys()])].filter((decoration) => slot.current.get(decoration) !== target.get(decoration)).sort();
      if (moving.length === 0) continue;
      const blocked = collaSet.spec.paused === true
        ? { reason: "Paused" as const, message: `pod ${slot.name}: CollaSet ${name} is paused (spec.paused): its pods keep what they have until it is resumed` }
        : held.get(slot.name);
      byPod.set(slot.name, { moving, ...(blocked === undefined ? {} : { blocked }) });
    }
    const changed = reports.set(workloadKey(namespace, { kind: COLLASET_KIND, name, uid }), byPod);
    if (changed.size > 0) this.#options.reportsChanged?.(namespace, changed);
  }

  /** Template revisions from the CollaSet's history; decoration revisions stored, or the live spec's. */
  #sources(namespace: string, decorations: NamespaceDecorations, collaSet: CachedCollaSet, updated: string, updatedData: unknown): RevisionSources {
    const templates = new Map(this.#revisions.of(collaSet).map((revision) => [revision.name, revision.data]));
    templates.set(updated, updatedData);
    return {
      template: (revision) => templateOf(templates.get(revision)),
      decoration: (name, revision) => this.#decorations.toApply(namespace, decorations.byName, name, revision),
    };
  }

  /** Carries the actions out, at most `burst` at once; returns the failures. */
  async #execute(key: string, collaSet: CachedCollaSet, actions: readonly Action[]): Promise<Error[]> {
    const failures: Error[] = [];
    const queue = [...actions];
    const worker = async () => {
      for (let action = queue.shift(); action !== undefined; action = queue.shift()) {
        try {
          await this.#act(key, collaSet, action);
        } catch (error) {
          if (isNotFound(error) || isLostRace(error)) continue;
          failures.push(error instanceof Refused ? error : new WriteFailed(`${describe(action)}: ${statusMessage(error)}`, { cause: error }));
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#options.burst ?? 16, actions.length) }, worker));
    return failures;
  }

  async #act(key: string, collaSet: CachedCollaSet, action: Action): Promise<void> {
    const { pods: client } = this.#options.client;
    const { expectations, events } = this.#options;
    switch (action.kind) {
      case "create": {
        let created: Pod;
        try {
          created = await client.create((await this.#options.claims.bind(key, collaSet, action.instanceId, action.pod)) as Pod);
        } catch (error) {
          throw this.#refusal(collaSet, "FailedCreate", `creating instance ${action.instanceId}`, error);
        }
        const { namespace = "", name = "" } = created.metadata ?? {};
        expectations.expect(key, () => this.#options.pods.get(namespace, name) !== undefined);
        const replaces = action.replacing ?? action.surgeFor;
        events.record(collaSet, "Normal", "SuccessfulCreate", `created pod ${name} (instance ${action.instanceId})${replaces === undefined ? "" : ` to replace ${replaces.metadata?.name ?? ""}`}`);
        return;
      }
      case "delete": {
        await this.#delete(key, action.pod);
        events.record(collaSet, "Normal", "SuccessfulDelete", `deleted pod ${action.pod.metadata?.name ?? ""}: ${action.reason}`);
        const id = instanceIdOf(action.pod);
        if (action.releaseClaims === true && id !== undefined) await this.#options.claims.releaseInstance(key, collaSet, id, `it goes with pod ${action.pod.metadata?.name ?? ""} (${action.reason})`);
        return;
      }
      case "label": {
        const { namespace = "", name = "", resourceVersion } = action.pod.metadata ?? {};
        const operations = [
          { op: "test" as const, path: "/metadata/resourceVersion", value: resourceVersion },
          action.pod.metadata?.labels === undefined
            ? { op: "add" as const, path: "/metadata/labels", value: { [INSTANCE_ID_LABEL]: String(action.instanceId) } }
            : { op: "add" as const, path: `/metadata/labels/${INSTANCE_ID_LABEL.replace("/", "~1")}`, value: String(action.instanceId) },
        ];
        await client.jsonPatch(namespace, name, operations);
        expectations.expect(key, () => this.#options.pods.get(namespace, name)?.metadata?.resourceVersion !== resourceVersion);
        events.record(collaSet, "Normal", "InstanceIdAssigned", `pod ${name} is instance ${action.instanceId}`);
        return;
      }
      case "relabel": {
        const { namespace = "", name = "", resourceVersion } = action.pod.metadata ?? {};
        await client.jsonPatch(namespace, name, labelOperations(action.pod, action.set, action.remove));
        expectations.expect(key, () => this.#options.pods.get(namespace, name)?.metadata?.resourceVersion !== resourceVersion);
        events.record(collaSet, "Normal", "Relabelled", `pod ${name}: ${action.reason}`);
        return;
      }
      case "release": {
        await this.#release(action.pod);
        const { namespace = "", name = "" } = action.pod.metadata ?? {};
        expectations.expect(key, () => !hasFinalizer(this.#options.pods.get(namespace, name) ?? {}, RECREATE_FINALIZER));
        return;
      }
      case "recreate": {
        const verdict = await this.#options.dryRunCreate(action.replacement);
        if (!verdict.valid) {
          throw this.#refusal(collaSet, "FailedUpdate", `recreating pod ${action.pod.metadata?.name ?? ""}`, undefined, verdict.message);
        }
        const { namespace = "", name = "", resourceVersion } = action.pod.metadata ?? {};
        // A lost race here has deleted nothing yet: #execute lets it go, the winner's event requeues us.
        // After a refused eviction the pod holds the finalizer already.
        if (!hasFinalizer(action.pod, RECREATE_FINALIZER)) {
          await client.jsonPatch(namespace, name, [
            { op: "test", path: "/metadata/resourceVersion", value: resourceVersion },
            addFinalizerOperation(action.pod, RECREATE_FINALIZER),
          ]);
        }
        const eviction = await this.#options.evictions.evict(action.pod);
        if (eviction.kind === "refused") {
          // Never forced: the budget decides; the pod keeps running and is tried again with backoff.
          const message = `recreating pod ${name}: eviction refused: ${eviction.message}`;
          events.record(collaSet, "Warning", "EvictionRefused", message);
          const refusal = new Refused(message);
          refusal.retryInMs = eviction.retryInMs;
          throw refusal;
        }
        this.#expectGone(key, action.pod);
        events.record(collaSet, "Normal", "Recreating", `recreating pod ${name}: ${action.reason}`);
        return;
      }
      case "in-place":
        try {
          await writeUpdateStep(this.#stepWriter(key, collaSet), action);
        } catch (error) {
          throw this.#refusal(collaSet, "FailedUpdate", `updating pod ${action.pod.metadata?.name ?? ""} in place`, error);
        }
        return;
      case "start-operation":
      case "pass-pre-check":
      case "start-post-check":
      case "permit-operation":
      case "leave-traffic":
      case "mark-service-ready":
      case "set-service-available":
      case "end-operation":
        await writeUpdateStep(this.#stepWriter(key, collaSet), action);
        return;
    }
  }

  #stepWriter(key: string, collaSet: CachedCollaSet): StepWriter {
    return {
      pods: this.#options.client.pods,
      nowMs: () => this.#options.clock.now(),
      expectNewer: (pod) => this.#expectNewer(key, pod),
      record: (reason, message) => this.#options.events.record(collaSet, "Normal", reason, message),
    };
  }

  /** The next sync waits until the cache shows the pod changed. */
  #expectNewer(key: string, pod: Pod): void {
    const { namespace = "", name = "", resourceVersion } = pod.metadata ?? {};
    this.#options.expectations.expect(key, () => this.#options.pods.get(namespace, name)?.metadata?.resourceVersion !== resourceVersion);
  }

  async #delete(key: string, pod: Pod): Promise<void> {
    const { namespace = "", name = "", uid } = pod.metadata ?? {};
    await this.#options.client.pods.delete(namespace, name, uid === undefined ? {} : { preconditions: { uid } });
    this.#expectGone(key, pod);
  }

  #expectGone(key: string, pod: Pod): void {
    const { namespace = "", name = "", uid } = pod.metadata ?? {};
    this.#options.expectations.expect(key, () => {
      const cached = this.#options.pods.get(namespace, name);
      return cached === undefined || cached.metadata?.uid !== uid || isTerminating(cached);
    });
  }

  /** A 4xx answer (but a lost race) is the API server's verdict: an Event and a condition, not a hot retry. */
  #refusal(collaSet: CachedCollaSet, reason: string, what: string, error: unknown, message = statusMessage(error)): Error {
    const code = statusCode(error);
    if (error !== undefined && (code === undefined || code >= 500 || code === 429 || isLostRace(error))) {
      return error instanceof Error ? error : new Error(statusMessage(error));
    }
    this.#options.events.record(collaSet, "Warning", reason, `${what}: ${message}`);
    return new Refused(`${what}: ${message}`);
  }

  /** Pods of a gone CollaSet awaiting replacement are let go, so the garbage collector can finish. */
  async #releaseAll(namespace: string, name: string, uid: string | undefined): Promise<void> {
    for (const pod of this.#options.pods.list(namespace)) {
      const owner = collaSetOwnerOf(pod);
      if (owner?.name !== name || (uid !== undefined && owner.uid !== uid)) continue;
      if (!hasFinalizer(pod, RECREATE_FINALIZER)) continue;
      try {
        await this.#release(pod);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }

  /** Removes the recreate finalizer; a concurrent change of the finalizers fails the test instead of being overwritten. */
  async #release(pod: Pod): Promise<void> {
    const { namespace = "", name = "" } = pod.metadata ?? {};
    await this.#options.client.pods.jsonPatch(namespace, name, removeFinalizerOperations(pod, RECREATE_FINALIZER));
  }

  async #prune(collaSet: CachedCollaSet, history: Parameters<RevisionHistory["prune"]>[1], updated: string, status: CollaSetStatus, pods: readonly Pod[]): Promise<void> {
    const inUse = new Set([updated, status.currentRevision].filter((revision) => revision !== undefined));
    for (const pod of pods) {
      const revision = templateRevisionOf(pod);
      if (revision !== undefined) inUse.add(revision);
    }
    await this.#revisions.prune(collaSet.metadata.namespace ?? "", history, updated, collaSet.spec.historyLimit ?? 20, inUse);
  }
}

/** What an action was doing, for a failure's message. */
function describe(action: Action): string {
  const pod = action.kind === "create" ? "" : (action.pod.metadata?.name ?? "");
  switch (action.kind) {
    case "create":
      return `creating instance ${action.instanceId}`;
    case "delete":
      return `deleting pod ${pod}`;
    case "label":
      return `labelling pod ${pod} as instance ${action.instanceId}`;
    case "release":
      return `releasing pod ${pod}`;
    case "relabel":
      return `labelling pod ${pod}: ${action.reason}`;
    case "recreate":
      return `recreating pod ${pod}`;
    case "in-place":
      return `updating pod ${pod} in place`;
    case "start-operation":
      return `starting the update's PodOpsLifecycle operation on pod ${pod}`;
    case "pass-pre-check":
      return `taking pod ${pod}, pre-checked by its PodTransitionRules, out of traffic`;
    case "start-post-check":
      return `beginning the PostCheck stage of pod ${pod}'s operation`;
    case "permit-operation":
      return `allowing the update of pod ${pod} once operationDelaySeconds pass`;
    case "set-service-available":
      return `labelling pod ${pod} ${action.available ? "" : "no longer "}service-available`;
    case "leave-traffic":
      return `taking pod ${pod} out of traffic`;
    case "mark-service-ready":
    case "end-operation":
      return `taking pod ${pod} back into traffic`;
  }
}
