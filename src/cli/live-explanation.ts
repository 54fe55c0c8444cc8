// The account `explain` gives of a live cluster (pure: the caller reads the objects): for a pod,
// every decoration of its namespace, whether it matches, the revision the pod records, the one
// it should have and why not; for a decoration, its pods grouped by that same state. Every
// decision comes from the engine — selection and exclusivity (selectDecorations), matched pods
// (isMatchedPod), targets and partition positions (rolloutStanding) — never a copy of it here.
import type { Pod } from "../api/pod.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import type { LabelSelector } from "../api/label-selector.ts";
import { collaSetOwnerOf, workloadOf } from "../api/owners.ts";
import { podRevisions, recordedRevisions, type RecordedRevision } from "../decoration/recording.ts";
import { canaryOf, isMatchedPod, isPodReady, rolloutStandings, type RolloutPod, type RolloutStanding } from "../decoration/rollout.ts";
import { selectDecorations } from "../decoration/selection.ts";
import { selectorMatches } from "../decoration/selector.ts";
import { asSeenFrom, type ClusterPodDecoration } from "../api/cluster-poddecoration.ts";
import { decorationKey, isClusterDecoration } from "../decoration/decoration-kind.ts";
import type { Reason } from "./explanation.ts";

export type { Reason, ReasonCode } from "./explanation.ts";

/** Where a pod stands with one decoration. */
export type DecorationState =
  /** Records the decoration's updated revision. */
  | "updated"
  /** Matches, and the rollout keeps it on what it has (partition, canary selector). */
  | "held"
  /** Records an older revision than the one it should have. */
  | "outdated"
  /** Matches and should have a revision, records none. */
  | "missing"
  /** Matches, but another decoration of its exclusive group wins. */
  | "excluded"
  /** The controller has stored no revision yet. */
  | "pending"
  /** Does not match and records nothing. */
  | "not-matched"
  /** Does not match (any more) but the pod still records a revision of it. */
  | "stale";

export const DECORATION_STATES: readonly DecorationState[] = ["updated", "held", "outdated", "missing", "excluded", "pending", "stale", "not-matched"];

export interface DecorationVerdict {
  name: string;
  matches: boolean;
  state: DecorationState;
  /** The revision the pod records (its revisions annotation). */
  podRevision?: string;
  /** The revision the rollout says it should have (absent: none). */
  targetRevision?: string;
  updatedRevision?: string;
  reasons: Reason[];
}

/** Whether the pod webhook is called for the pod, from the MutatingWebhookConfiguration. */
export interface WebhookScope {
  /** undefined when it could not be read. */
  inScope: boolean | undefined;
  detail: string;
}

export interface PodReport {
  kind: "PodExplanation";
  /** Which controller moves the pod's decorations: its CollaSet's, or the PodDecoration controller's rollout to pods of other owners. */
  pod: { namespace: string; name: string; creationTimestamp?: string; owner?: string; updatedBy: "collaset-controller" | "poddecoration-controller" };
  webhook: WebhookScope;
  /** What the pod records; null when it has no revisions annotation (the webhook never decided on it). */
  recorded: RecordedRevision[] | null;
  decorations: DecorationVerdict[];
  warnings: string[];
}

export interface DecorationPod extends Omit<DecorationVerdict, "name" | "updatedRevision"> {
  pod: string;
}

export interface DecorationReport {
  kind: "PodDecorationExplanation";
  decoration: {
    namespace: string;
    name: string;
    updatedRevision?: string;
    currentRevision?: string;
    partition?: number;
    canarySelector?: LabelSelector;
    renderError?: string;
    /** A ClusterPodDecoration: the namespaces it selects (namespace is empty), its namespace canary. */
    clusterScoped?: boolean;
    namespaceSelector?: LabelSelector;
    namespaces?: string[];
    namespaceCanary?: LabelSelector;
  };
  /** Pods that match or record the decoration, by state; states without pods are left out. */
  pods: Partial<Record<DecorationState, DecorationPod[]>>;
  warnings: string[];
}

/** What `explain` reads from the cluster for one namespace. */
export interface ClusterView {
  namespaceLabels: Readonly<Record<string, string>>;
  /** The namespace's PodDecorations and the ClusterPodDecorations selecting it, as seen from it. */
  decorations: readonly PodDecoration[];
  pods: readonly Pod[];
  /** The pod webhook's scope in the MutatingWebhookConfiguration, or why it is unknown. */
  webhook: PodWebhook | { unreadable: string };
  /** Decoration name → the last render error recorded (status condition or Event). */
  renderErrors: ReadonlyMap<string, string>;
  /** What could not be read (the report is then partial, and says so). */
  warnings?: readonly string[];
  /**
   * For a ClusterPodDecoration, the pods of every namespace it selects with those namespaces'
   * labels: a partition counts them all, its namespace canary reads the labels. Without it, the
   * namespace's own pods stand for them (no partition to count across namespaces).
   */
  fleet?: (decoration: PodDecoration) => FleetPods | undefined;
}

export interface FleetPods {
  pods: readonly Pod[];
  namespaceLabels: (namespace: string) => Readonly<Record<string, string>> | undefined;
}

export interface PodWebhook {
  configuration: string;
  /** undefined: the configuration has no webhook for pods. */
  webhook: { name?: string; namespaceSelector?: LabelSelector; objectSelector?: LabelSelector; matchConditions?: readonly { name?: string }[] } | undefined;
}

const nameOf = (object: { metadata?: { name?: string } }): string => object.metadata?.name ?? "";

function collaSetNameOf(pod: Pod): string | undefined {
  const name = collaSetOwnerOf(pod)?.name;
  return typeof name === "string" ? name : undefined;
}

export function explainPod(pod: Pod, given: ClusterView): PodReport {
  // The pod read on its own is explained among its namespace's pods even if the list missed it.
  const view = given.pods.some((candidate) => nameOf(candidate) === nameOf(pod)) ? given : { ...given, pods: [...given.pods, pod] };
  const owner = pod.metadata?.ownerReferences?.find((reference) => reference.controller === true);
  const collaSet = collaSetOwnerOf(pod) !== undefined;
  const webhook = webhookScope(view, pod);
  const selection = selectDecorations(pod, view.decorations);
  const recorded = podRevisions(pod);
  return {
    kind: "PodExplanation",
    pod: {
      namespace: pod.metadata?.namespace ?? "",
      name: nameOf(pod),
      ...(pod.metadata?.creationTimestamp == null ? {} : { creationTimestamp: pod.metadata.creationTimestamp }),
      ...(owner === undefined ? {} : { owner: `${String(owner.kind)}/${String(owner.name)}` }),
      updatedBy: collaSet ? "collaset-controller" : "poddecoration-controller",
    },
    webhook,
    recorded: recordedRevisions(pod) === null ? null : recorded.revisions,
    decorations: view.decorations.map((decoration) => verdictFor(pod, decoration, view, selection, webhook)),
    warnings: [...recorded.warnings, ...(view.warnings ?? [])],
  };
}

export function explainDecoration(decoration: PodDecoration, given: ClusterView): DecorationReport {
  const pods: Partial<Record<DecorationState, DecorationPod[]>> = {};
  const view = addPodsByState(pods, decoration, given, nameOf);
  const renderError = view.renderErrors.get(decorationKey(decoration));
  return { kind: "PodDecorationExplanation", decoration: { namespace: decoration.metadata.namespace ?? "", name: nameOf(decoration), ...rolloutOf(decoration), ...(renderError === undefined ? {} : { renderError }) }, pods, warnings: [...(view.warnings ?? [])] };
}

/**
 * A ClusterPodDecoration's pods by state over the namespaces it selects: one view per namespace
 * (its decorations and pods), the pods known as namespace/name. `unselected` are the namespaces
 * whose pods still record it though it no longer selects them (they keep what they have).
 */
export function explainClusterDecoration(cpd: ClusterPodDecoration, views: ReadonlyMap<string, ClusterView>, extra: { renderError?: string | undefined; warnings?: readonly string[] } = {}): DecorationReport {
  const pods: Partial<Record<DecorationState, DecorationPod[]>> = {};
  const warnings: string[] = [...(extra.warnings ?? [])];
  for (const [namespace, view] of [...views].sort(([a], [b]) => compareNames(a, b))) {
    addPodsByState(pods, asSeenFrom(cpd, namespace), view, (pod) => `${namespace}/${nameOf(pod)}`);
    warnings.push(...(view.warnings ?? []));
  }
  const { canarySelector, ...rollout } = rolloutOf(cpd);
  const namespaceCanary = cpd.spec.updateStrategy?.rollingUpdate?.namespaceSelector;
  return {
    kind: "PodDecorationExplanation",
    decoration: {
      namespace: "",
      name: nameOf(cpd),
      clusterScoped: true,
      namespaceSelector: cpd.spec.namespaceSelector,
      namespaces: [...views.keys()].sort(compareNames),
      ...rollout,
      ...(canarySelector === undefined ? {} : { canarySelector }),
      ...(namespaceCanary === undefined ? {} : { namespaceCanary }),
      ...(extra.renderError === undefined ? {} : { renderError: extra.renderError }),
    },
    pods,
    warnings: [...new Set(warnings)],
  };
}

function rolloutOf(decoration: PodDecoration): Pick<DecorationReport["decoration"], "updatedRevision" | "currentRevision" | "partition" | "canarySelector"> {
  const rollingUpdate = decoration.spec.updateStrategy?.rollingUpdate;
  return {
    ...(decoration.status?.updatedRevision === undefined ? {} : { updatedRevision: decoration.status.updatedRevision }),
    ...(decoration.status?.currentRevision === undefined ? {} : { currentRevision: decoration.status.currentRevision }),
    ...(rollingUpdate?.partition === undefined ? {} : { partition: rollingUpdate.partition }),
    ...(rollingUpdate?.selector === undefined ? {} : { canarySelector: rollingUpdate.selector }),
  };
}

/** Adds the view's pods that match or record the decoration to `pods` by state; returns the view the decoration was judged in. */
function addPodsByState(pods: Partial<Record<DecorationState, DecorationPod[]>>, decoration: PodDecoration, given: ClusterView, podName: (pod: Pod) => string): ClusterView {
  // The decoration read on its own is another object than the listed one: selection must see it once.
  const key = decorationKey(decoration);
  const others = given.decorations.filter((candidate) => decorationKey(candidate) !== key);
  const view = { ...given, decorations: [...others, decoration] };
  for (const pod of [...view.pods].sort((a, b) => compareNames(nameOf(a), nameOf(b)))) {
    const verdict = verdictFor(pod, decoration, view, selectDecorations(pod, view.decorations), webhookScope(view, pod));
    if (verdict.state === "not-matched") continue;
    const { name: _name, updatedRevision: _updated, ...rest } = verdict;
    (pods[verdict.state] ??= []).push({ pod: podName(pod), ...rest });
  }
  return view;
}

function verdictFor(pod: Pod, decoration: PodDecoration, view: ClusterView, selection: ReturnType<typeof selectDecorations>, webhook: WebhookScope): DecorationVerdict {
  const name = decorationKey(decoration);
  const podRevision = recordedRevisions(pod)?.get(name);
  const updatedRevision = decoration.status?.updatedRevision;
  const base = { name, ...(podRevision === undefined ? {} : { podRevision }), ...(updatedRevision === undefined ? {} : { updatedRevision }) };
  const exclusion = selection.excluded.find((candidate) => decorationKey(candidate.decoration) === name);
  const renderError = view.renderErrors.get(name);
  const renderReasons: Reason[] = renderError === undefined ? [] : [{ reason: "render-error", detail: renderError }];

  if (exclusion !== undefined && exclusion.reason !== "group" && exclusion.reason !== "already-applied") {
    const reasons: Reason[] = [{ reason: exclusion.reason, detail: exclusion.detail }];
    if (podRevision === undefined) return { ...base, matches: false, state: "not-matched", reasons };
    return { ...base, matches: false, state: "stale", reasons: [...reasons, ...movingReasons(pod, decoration, undefined)] };
  }
  // Selected, but a terminal or terminating pod is not part of any rollout.
  if (!isMatchedPod(decoration, pod)) {
    return { ...base, matches: true, state: podRevision === undefined ? "not-matched" : "stale", reasons: [{ reason: "pod-inactive", detail: `the pod is ${pod.metadata?.deletionTimestamp == null ? `in phase ${String(pod.status?.phase)}` : "being deleted"}; rollouts leave it alone` }] };
  }
  // "already-applied" without a record of this decoration: another member of its group is settled on the pod.
  if (exclusion !== undefined && podRevision === undefined) {
    return { ...base, matches: true, state: "excluded", reasons: [{ reason: "group", detail: exclusion.detail }] };
  }
  if (updatedRevision === undefined) {
    return { ...base, matches: true, state: "pending", reasons: [{ reason: "revision-pending", detail: "the controller has stored no revision yet (status.updatedRevision is empty)" }, ...renderReasons] };
  }

  const standing = standingsOf(decoration, updatedRevision, view).get(rolloutName(decoration, pod));
  if (standing === undefined) throw new Error(`pod ${nameOf(pod)} is not among the pods of its namespace`);
  const target = standing.target;
  const verdict = { ...base, ...(target === undefined ? {} : { targetRevision: target }), matches: true };
  const heldReasons: Reason[] = standing.held === undefined
    ? []
    : standing.held.by === "canary-selector"
      ? [{ reason: "canary-selector", detail: `${canaryDescription(decoration)}: the pod keeps what it has` }]
      : [{
        reason: "partition",
        detail: `held by partition ${standing.held.partition}: position ${standing.held.position} of ${standing.held.candidates} in update order, and only the first ${Math.max(0, standing.held.candidates - standing.held.partition)} move`,
      }];

  if (podRevision === target) {
    if (podRevision === updatedRevision) return { ...verdict, state: "updated", reasons: [] };
    // Held with nothing to keep: whether the webhook could have given it one still matters.
    const unseen: Reason[] = podRevision === undefined && webhook.inScope === false ? [{ reason: "outside-webhook-scope", detail: webhook.detail }] : [];
    return { ...verdict, state: "held", reasons: [...heldReasons, ...unseen] };
  }
  if (podRevision !== undefined) return { ...verdict, state: "outdated", reasons: [...movingReasons(pod, decoration, target), ...renderReasons] };
  return { ...verdict, state: "missing", reasons: [...missingReasons(pod, decoration, webhook), ...movingReasons(pod, decoration, target), ...renderReasons] };
}

/**
 * Who moves the pod to its target, and what holds it: its CollaSet's controller, or the
 * PodDecoration controller's rollout to pods of other owners; the blocked pods of either the
 * decoration's status.workloads lists.
 */
function movingReasons(pod: Pod, decoration: PodDecoration, target: string | undefined): Reason[] {
  const to = target ?? "no revision";
  const collaSet = collaSetNameOf(pod);
  const workload = workloadOf(pod);
  // Its holder, as the status says it: a CollaSet paused or InPlaceOnly, a lifecycle step stuck, a change refused.
  const standing = decoration.status?.workloads?.find((entry) => entry.kind === workload.kind && entry.name === workload.name);
  const blocked = standing?.blocked?.find((entry) => entry.pod === nameOf(pod)) ?? unlistedBlocked(standing);
  if (blocked?.reason === "NeedsRecreation") return [{ reason: "needs-recreation", detail: blocked.message }];
  if (blocked !== undefined) return [{ reason: "update-blocked", detail: `${blocked.reason}: ${blocked.message}` }];
  if (collaSet !== undefined) return [{ reason: "rollout-in-progress", detail: `CollaSet ${collaSet}'s controller moves the pod to ${to} (at most maxUnavailable pods at a time)` }];
  return [{
    reason: "rollout-in-progress",
    detail: `the PodDecoration controller moves the pod to ${to}: in place when only images and labels or annotations change, ${workload.kind === "Pod" ? "as a pod without a controller, on its own" : `at most maxUnavailable pods of its ${workload.kind} ${workload.name} at a time`}`,
  }];
}

// One rollout plan per decoration and view: explaining a decoration asks it for each of its pods.
const standingsCache = new WeakMap<ClusterView, WeakMap<PodDecoration, Map<string, RolloutStanding>>>();

function standingsOf(decoration: PodDecoration, updatedRevision: string, view: ClusterView): Map<string, RolloutStanding> {
  let byDecoration = standingsCache.get(view);
  if (byDecoration === undefined) standingsCache.set(view, (byDecoration = new WeakMap()));
  let standings = byDecoration.get(decoration);
  if (standings === undefined) {
    const name = decorationKey(decoration);
    const fleet = isClusterDecoration(decoration) ? (view.fleet?.(decoration) ?? { pods: view.pods, namespaceLabels: () => view.namespaceLabels }) : undefined;
    // A cluster decoration matches each pod as seen from the pod's namespace.
    const matches = (candidate: Pod) => isMatchedPod(fleet === undefined ? decoration : asSeenFrom(decoration as ClusterPodDecoration, candidate.metadata?.namespace ?? ""), candidate);
    const pods: RolloutPod[] = (fleet?.pods ?? view.pods)
      .filter(matches)
      .map((candidate) => ({
        name: rolloutName(decoration, candidate),
        labels: candidate.metadata?.labels ?? {},
        ready: isPodReady(candidate),
        current: recordedRevisions(candidate)?.get(name),
        ...(fleet === undefined ? {} : { namespaceLabels: fleet.namespaceLabels(candidate.metadata?.namespace ?? "") }),
      }));
    standings = rolloutStandings(decoration, updatedRevision, pods, decoration.status?.currentRevision);
    byDecoration.set(decoration, standings);
  }
  return standings;
}

function canaryDescription(decoration: PodDecoration): string {
  const { selector, namespaceSelector } = canaryOf(decoration);
  const parts = [
    ...(selector === undefined ? [] : [`the rollout's selector ${JSON.stringify(selector)}`]),
    ...(namespaceSelector === undefined ? [] : [`the rollout's namespaceSelector ${JSON.stringify(namespaceSelector)} (the namespace canary)`]),
  ];
  return `outside ${parts.join(" or ")}`;
}

/** A pod among a decoration's rollout: by name, or for a cluster decoration by namespace and name. */
function rolloutName(decoration: PodDecoration, pod: Pod): string {
  return isClusterDecoration(decoration) ? `${pod.metadata?.namespace ?? ""}/${nameOf(pod)}` : nameOf(pod);
}

/**
 * A pod the status does not list (it lists the first blocked pods by name): when every outdated
 * pod of its workload is blocked, and all those listed for one reason, it is blocked for it too.
 */
function unlistedBlocked(standing: NonNullable<NonNullable<PodDecoration["status"]>["workloads"]>[number] | undefined): { reason: string; message: string } | undefined {
  const listed = standing?.blocked ?? [];
  const [first] = listed;
  if (standing === undefined || first === undefined || standing.blockedPods !== standing.outdatedPods || listed.some((entry) => entry.reason !== first.reason)) return undefined;
  return { reason: first.reason, message: `every outdated pod of the workload is blocked (${standing.blockedPods}; the status lists the first ${listed.length} by name), all for this reason; for example ${first.message}` };
}

/** Why a matching pod records nothing of a decoration that has a revision for it. */
function missingReasons(pod: Pod, decoration: PodDecoration, webhook: WebhookScope): Reason[] {
  const reasons: Reason[] = [];
  const podCreated = timestamp(pod.metadata?.creationTimestamp);
  const decorationCreated = timestamp(decoration.metadata.creationTimestamp);
  if (podCreated !== undefined && decorationCreated !== undefined && podCreated < decorationCreated) {
    reasons.push({
      reason: "created-before",
      detail: `the pod was created at ${pod.metadata?.creationTimestamp ?? ""}, before the decoration (${decoration.metadata.creationTimestamp ?? ""})`,
    });
  }
  if (webhook.inScope === false) reasons.push({ reason: "outside-webhook-scope", detail: webhook.detail });
  else if (isClusterDecoration(decoration) && reasons.length === 0) {
    // Which namespaces a cluster decoration selects changes with their labels, which leave no trace on the pod.
    reasons.push({ reason: "not-admitted-by-webhook", detail: "the pod records no revision of this ClusterPodDecoration: its namespace was not selected when the pod was created (labelled in since), or the webhook did not decorate it at admission" });
  } else if (recordedRevisions(pod) === null && reasons.length === 0) {
    reasons.push({ reason: "not-admitted-by-webhook", detail: "the pod has no revisions annotation: the webhook did not decorate it at admission (bypassed, or it failed and the pod was admitted undecorated)" });
  }
  else if (reasons.length === 0) {
    reasons.push({ reason: "not-admitted-by-webhook", detail: "the pod records other decorations but not this one: at admission it did not match, or no revision of it was known" });
  }
  return reasons;
}

/** Whether the API server calls the pod webhook for this pod, as far as selectors tell. */
export function webhookScope(view: Pick<ClusterView, "webhook" | "namespaceLabels">, pod: Pod): WebhookScope {
  if ("unreadable" in view.webhook) return { inScope: undefined, detail: view.webhook.unreadable };
  const { configuration, webhook } = view.webhook;
  if (webhook === undefined) return { inScope: false, detail: `MutatingWebhookConfiguration ${configuration} has no webhook for pods` };
  const namespace = pod.metadata?.namespace ?? "";
  if (webhook.namespaceSelector !== undefined && !selectorMatches(webhook.namespaceSelector, view.namespaceLabels)) {
    return { inScope: false, detail: `namespace ${namespace} is outside the webhook's scope: its labels ${JSON.stringify(view.namespaceLabels)} do not match the namespaceSelector ${JSON.stringify(webhook.namespaceSelector)} of ${configuration}` };
  }
  if (webhook.objectSelector !== undefined && !selectorMatches(webhook.objectSelector, pod.metadata?.labels ?? {})) {
    return { inScope: false, detail: `the pod is outside the webhook's scope: its labels do not match the objectSelector ${JSON.stringify(webhook.objectSelector)} of ${configuration}` };
  }
  const conditions = (webhook.matchConditions ?? []).map((condition) => condition.name ?? "");
  return {
    inScope: true,
    detail: `namespaceSelector and objectSelector of ${configuration} match${conditions.length === 0 ? "" : `; matchConditions (${conditions.join(", ")}) are evaluated by the API server, not here`}`,
  };
}

function timestamp(value: string | null | undefined): number | undefined {
  if (value == null) return undefined;
  const millis = Date.parse(value);
  return Number.isNaN(millis) ? undefined : millis;
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
