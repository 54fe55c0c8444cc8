// What a rendered pod records about its decorations (DESIGN §3): the revisions annotation,
// the source of truth for idempotency and rollout, and one label per decoration so pods can
// be selected by decoration and revision. PodDecorations are recorded where kuperator reads
// them; ClusterPodDecorations (DESIGN §12) in an annotation and labels of the project's own
// group, so that kuperator never takes one for a PodDecoration of the same name. Readers get
// both as one list, each decoration by its key (decoration-kind.ts).
import { isQualifiedName } from "../api/names.ts";
import { OWN_GROUP } from "../api/group.ts";
import { clusterKey, isClusterKey, nameOfKey } from "./decoration-kind.ts";
import { safeHash } from "../revision/hash.ts";
import { boundedLabelValue } from "../revision/name.ts";

export const REVISIONS_ANNOTATION = "poddecoration.kusionstack.io/revisions";
/**
 * The containers decorations injected (containers and init containers), comma-separated and
 * sorted: what the bookkeeping policy keeps the pod's author from changing (DESIGN §10).
 */
export const INJECTED_CONTAINERS_ANNOTATION = "poddecoration.kusionstack.io/injected-containers";
export const DECORATION_LABEL_PREFIX = "poddecoration.kusionstack.io/pd-";
/** The ClusterPodDecorations a pod records, as REVISIONS_ANNOTATION records PodDecorations. */
export const CLUSTER_REVISIONS_ANNOTATION = `${OWN_GROUP}/cluster-revisions`;
export const CLUSTER_DECORATION_LABEL_PREFIX = `${OWN_GROUP}/cpd-`;

/** One entry of the revisions annotation. */
export interface RecordedRevision {
  name: string;
  revision: string;
}

const LABEL_NAME_PART_MAX = 63;

// Every pod a decoration applies to records the same key: it is derived once per name. Bounded,
// so that a long-lived webhook seeing decorations come and go cannot grow it without limit.
const labelKeys = new Map<string, string>();
const LABEL_KEYS_KEPT = 4096;

/**
 * The label recording a decoration (by its key): `poddecoration.kusionstack.io/pd-<name>`, or
 * `pod-decorator.io/cpd-<name>` for a ClusterPodDecoration, when that is a valid label key; for
 * names too long for the 63-character name part, a truncated name and a hash of the full name.
 */
export function decorationLabelKey(decorationKey: string): string {
  let key = labelKeys.get(decorationKey);
  if (key === undefined) {
    if (labelKeys.size >= LABEL_KEYS_KEPT) labelKeys.clear();
    key = deriveLabelKey(isClusterKey(decorationKey) ? CLUSTER_DECORATION_LABEL_PREFIX : DECORATION_LABEL_PREFIX, nameOfKey(decorationKey));
    labelKeys.set(decorationKey, key);
  }
  return key;
}

function deriveLabelKey(prefix: string, decorationName: string): string {
  const simple = `${prefix}${decorationName}`;
  if (isQualifiedName(simple)) return simple;
  const bounded = boundedLabelValue(decorationName, LABEL_NAME_PART_MAX - prefix.slice(prefix.indexOf("/") + 1).length);
  const candidate = `${prefix}${bounded}`;
  return isQualifiedName(candidate) ? candidate : `${prefix}${safeHash(decorationName)}`;
}

/** Whether a label key is one recording a decoration (of either kind). */
export function isDecorationLabel(key: string): boolean {
  return key.startsWith(DECORATION_LABEL_PREFIX) || key.startsWith(CLUSTER_DECORATION_LABEL_PREFIX);
}

/** The label value recording `revision`, or undefined when it cannot be one (then no label is written). */
export function decorationLabelValue(revision: string): string | undefined {
  return boundedLabelValue(revision) === revision ? revision : undefined;
}

export interface ParsedRevisions {
  revisions: RecordedRevision[];
  /** What was wrong with the annotation; unusable entries are dropped, never fatal. */
  warnings: string[];
}

/** Reads one revisions annotation (by default the PodDecorations'), tolerating anything (a pod's annotations are user input). */
export function parseRevisionsAnnotation(value: string | undefined, annotation = REVISIONS_ANNOTATION): ParsedRevisions {
  if (value === undefined) return { revisions: [], warnings: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return { revisions: [], warnings: [`annotation ${annotation} is not JSON; treated as empty`] };
  }
  if (!Array.isArray(parsed)) return { revisions: [], warnings: [`annotation ${annotation} is not a JSON array; treated as empty`] };
  const revisions: RecordedRevision[] = [];
  const warnings: string[] = [];
  parsed.forEach((entry: unknown, index) => {
    if (isRecordedRevision(entry)) revisions.push({ name: entry.name, revision: entry.revision });
    else warnings.push(`annotation ${annotation}[${index}] is not {"name": string, "revision": string}; ignored`);
  });
  return { revisions, warnings };
}

function isRecordedRevision(value: unknown): value is RecordedRevision {
  if (typeof value !== "object" || value === null) return false;
  const entry = value as Record<string, unknown>;
  return typeof entry.name === "string" && entry.name !== "" && typeof entry.revision === "string";
}

/** One annotation's value: entries sorted by name, one per name, compact JSON. */
export function formatRevisionsAnnotation(revisions: readonly RecordedRevision[]): string {
  const byName = new Map<string, string>();
  for (const { name, revision } of revisions) byName.set(name, revision);
  const names = [...byName.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // Written as JSON.stringify writes [{name, revision}, …], without building those objects first.
  let text = "";
  for (const name of names) text += `${text === "" ? "" : ","}{"name":${JSON.stringify(name)},"revision":${JSON.stringify(byName.get(name))}}`;
  return `[${text}]`;
}

export function formatInjectedContainers(names: Iterable<string>): string {
  return [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(",");
}

export function parseInjectedContainers(value: string | undefined): Set<string> {
  return new Set((value ?? "").split(",").filter((name) => name !== ""));
}

/** The revisions a pod records, of both kinds, each by its decoration's key. */
export function podRevisions(pod: { metadata?: { annotations?: Record<string, string> } }): ParsedRevisions {
  const annotations = pod.metadata?.annotations;
  const own = parseRevisionsAnnotation(annotations?.[REVISIONS_ANNOTATION]);
  const clusterText = annotations?.[CLUSTER_REVISIONS_ANNOTATION];
  if (clusterText === undefined) return own;
  const cluster = parseRevisionsAnnotation(clusterText, CLUSTER_REVISIONS_ANNOTATION);
  return { revisions: [...own.revisions, ...cluster.revisions.map((entry) => ({ name: clusterKey(entry.name), revision: entry.revision }))], warnings: [...own.warnings, ...cluster.warnings] };
}

/**
 * `annotations` with `revisions` (by key) written where each kind is recorded: the PodDecorations'
 * always (`[]`: decided, none), the ClusterPodDecorations' while there are any or were.
 */
export function withRecordedRevisions(annotations: Readonly<Record<string, string>> | undefined, revisions: readonly RecordedRevision[]): Record<string, string> {
  const own = revisions.filter((entry) => !isClusterKey(entry.name));
  const cluster = revisions.filter((entry) => isClusterKey(entry.name)).map((entry) => ({ name: nameOfKey(entry.name), revision: entry.revision }));
  const result: Record<string, string> = { ...annotations, [REVISIONS_ANNOTATION]: formatRevisionsAnnotation(own) };
  if (cluster.length > 0 || result[CLUSTER_REVISIONS_ANNOTATION] !== undefined) result[CLUSTER_REVISIONS_ANNOTATION] = formatRevisionsAnnotation(cluster);
  return result;
}

const recordedCache = new WeakMap<object, Map<string, string> | null>();

// Every pod a decoration applies to records the same name and revision: the maps share one
// string of each, so looking a decoration up in 100,000 pods' maps reads a few strings that stay
// in the CPU cache, not one per pod, and the pod cache keeps one copy (13 MiB less at 100,000
// pods). Bounded, as labelKeys: pods are user input; past the bound sharing starts over.
const sharedTexts = new Map<string, string>();
const SHARED_TEXTS_KEPT = 16_384;

function shared(text: string): string {
  let kept = sharedTexts.get(text);
  if (kept === undefined) {
    if (sharedTexts.size >= SHARED_TEXTS_KEPT) sharedTexts.clear();
    sharedTexts.set(text, (kept = text));
  }
  return kept;
}

/** key → revision from a pod's annotations; null when the pod has neither. Cached per (frozen) pod. */
export function recordedRevisions(pod: { metadata?: { annotations?: Record<string, string> } | undefined }): Map<string, string> | null {
  let recorded = recordedCache.get(pod);
  if (recorded === undefined) {
    recorded = pod.metadata?.annotations?.[REVISIONS_ANNOTATION] === undefined && pod.metadata?.annotations?.[CLUSTER_REVISIONS_ANNOTATION] === undefined
      ? null
      : new Map(podRevisions(pod).revisions.map((entry) => [shared(entry.name), shared(entry.revision)]));
    recordedCache.set(pod, recorded);
  }
  return recorded;
}
