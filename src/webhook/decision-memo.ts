// The pod webhook's memory of its recent answers. Pods created from one template (a
// ReplicaSet's, a CollaSet's, a Job's) reach the webhook as one object again and again, a
// scale-up as a burst of them, but for what replica-identity.ts sets aside; each answer is a
// pure function of that identity, the requester's standing, the namespace's decorations and the
// ControllerRevision data rendering read. An answer is given again only while all of those are
// still the same objects: the caches replace an object when it changes, never change it, so
// identity says "unchanged" exactly. An answer that stands for a token volume's name is kept
// only while no decoration or revision mentions such names, so that the name is opaque to it.
// An answer is kept from the second time its pod comes (a template's second replica) on: a pod
// that comes once is never kept. Keeping every answer cost 45 µs of server CPU per request for
// pods that never came again (381 → 335 µs at 2,700 distinct pods/s, test/bench/webhook.ts): a
// kept answer outlives the young generation, so the garbage collector copies it out and later
// collects it from the old one. Pods are known by the SHA-256 digest of their key, so that
// neither the answers kept nor the pods seen hold a copy of the pod's text.
// Bounded in entries and in bytes: hostile input can only push answers out, never grow it.
import { hash } from "node:crypto";
import type { PodDecoration } from "../api/poddecoration.ts";
import type { DecorationSource } from "../decoration/updated-revisions.ts";
import type { AdmissionResponse } from "./admission-review.ts";
import { occurrences, TOKEN_VOLUME_PLACEHOLDER, TOKEN_VOLUME_PREFIX } from "./replica-identity.ts";
import type { AdmissionDecision } from "./server.ts";

export interface DecisionMemoLimits {
  /** Answers kept at most. */
  entries: number;
  /** Characters kept at most, over every entry's digest, patch and warnings. */
  characters: number;
  /** A pod whose key is longer is answered without being remembered. */
  keyCharacters: number;
}

/** Pods remembered as seen for each entry the memo can keep. */
const SIGHTINGS_PER_ENTRY = 4;

export const DEFAULT_DECISION_MEMO_LIMITS: DecisionMemoLimits = { entries: 512, characters: 8 * 1024 * 1024, keyCharacters: 64 * 1024 };

interface RevisionRead {
  namespace: string;
  name: string;
  data: unknown;
}

interface Entry {
  namespace: string;
  reads: readonly RevisionRead[];
  response: Omit<AdmissionResponse, "uid">;
  /**
   * With a token volume: the patch as JSON text and the warnings, with the placeholder for its
   * name, where they name it (most patches do not: the stored base64 then serves every replica).
   */
  withPlaceholder?: { patch: string | undefined; warnings: readonly string[] | undefined };
  result: AdmissionDecision["result"];
  characters: number;
}

/** Whether a decoration or revision data mentions token volume names; per (frozen) object. */
const mentionsTokenVolumes = new WeakMap<object, boolean>();

function mentionsTokenVolume(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return typeof value === "string" && value.includes(TOKEN_VOLUME_PREFIX);
  let mentions = mentionsTokenVolumes.get(value);
  if (mentions === undefined) {
    mentions = JSON.stringify(value).includes(TOKEN_VOLUME_PREFIX);
    mentionsTokenVolumes.set(value, mentions);
  }
  return mentions;
}

/**
 * The decorations a namespace's answers were rendered with, one list per namespace: when the
 * namespace's list changes, every answer of it is forgotten at once, so that answers never pin
 * old versions of decorations (a list per answer could hold hundreds).
 */
interface NamespaceSnapshot {
  decorations: readonly PodDecoration[];
  digests: Set<string>;
}

function sameObjects(a: readonly object[], b: readonly object[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) {
    if (a[index] !== b[index]) return false;
  }
  return true;
}

export class DecisionMemo {
  readonly #limits: DecisionMemoLimits;
  readonly #source: DecorationSource;
  readonly #onRemembered: (() => void) | undefined;
  /** Least recently used first (a Map keeps insertion order). */
  readonly #entries = new Map<string, Entry>();
  readonly #namespaces = new Map<string, NamespaceSnapshot>();
  /** Digests of pods seen, least recently first: their answers are kept when they come again. */
  readonly #seen = new Set<string>();
  #characters = 0;
  #reads: RevisionRead[] | undefined;

  /** What rendering reads from: `source`, noting the revision data each answer depended on. */
  readonly source: DecorationSource;

  constructor(source: DecorationSource, limits: DecisionMemoLimits = DEFAULT_DECISION_MEMO_LIMITS, onRemembered?: () => void) {
    this.#source = source;
    this.#limits = limits;
    this.#onRemembered = onRemembered;
    this.source = {
      decorations: (namespace) => source.decorations(namespace),
      revisionData: (namespace, name) => {
        const data = source.revisionData(namespace, name);
        this.#reads?.push({ namespace, name, data });
        return data;
      },
      bounds: source.bounds,
      clusterRevisionNamespace: source.clusterRevisionNamespace,
      ...(source.namespaceLabels === undefined ? {} : { namespaceLabels: (namespace: string) => source.namespaceLabels?.(namespace) }),
    };
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The answer for `uid` to the pod `key` stands for (a key names its namespace), given the
   * namespace's `decorations`: remembered when still valid, else from `decide` (which renders
   * from `this.source`), and remembered, unless it is an error (an internal error may not
   * repeat), when the pod came before. `tokenVolume`: the name the key's placeholder stands for
   * in this pod (replica-identity.ts).
   */
  answer(uid: string, namespace: string, key: string, tokenVolume: string | undefined, decorations: readonly PodDecoration[], decide: () => AdmissionDecision): AdmissionDecision {
    if (key.length > this.#limits.keyCharacters) return decide();
    this.#forgetIfChanged(namespace, decorations);
    const digest = hash("sha256", key, "base64");
    const remembered = this.#entries.get(digest);
    if (remembered !== undefined && this.#readsUnchanged(remembered)) {
      // Most recently used goes last.
      this.#entries.delete(digest);
      this.#entries.set(digest, remembered);
      this.#onRemembered?.();
      return { response: { uid, ...remembered.response, ...withTokenVolume(remembered, tokenVolume) }, result: remembered.result };
    }
    if (remembered !== undefined) this.#forget(digest, remembered);
    const cameBefore = remembered !== undefined || this.#cameBefore(digest);
    const reads: RevisionRead[] = [];
    this.#reads = reads;
    let decision: AdmissionDecision;
    try {
      decision = decide();
    } finally {
      this.#reads = undefined;
    }
    if (cameBefore && decision.result !== "error") this.#remember(digest, namespace, tokenVolume, decorations, reads, decision);
    return decision;
  }

  /**
   * Whether the pod was seen before (its answer may have been forgotten since, with a changed
   * decoration); notes that it has been, forgetting the pod seen longest ago beyond the bound.
   */
  #cameBefore(digest: string): boolean {
    const seen = this.#seen.delete(digest);
    this.#seen.add(digest);
    if (this.#seen.size > this.#limits.entries * SIGHTINGS_PER_ENTRY) this.#seen.delete(this.#seen.values().next().value!);
    return seen;
  }

  /** Forgets the namespace's answers when its decorations are no longer the objects they were rendered with. */
  #forgetIfChanged(namespace: string, decorations: readonly PodDecoration[]): void {
    const snapshot = this.#namespaces.get(namespace);
    if (snapshot === undefined || sameObjects(snapshot.decorations, decorations)) return;
    for (const digest of [...snapshot.digests]) this.#forget(digest, this.#entries.get(digest)!);
  }

  #readsUnchanged(entry: Entry): boolean {
    return entry.reads.every((read) => this.#source.revisionData(read.namespace, read.name) === read.data);
  }

  #remember(digest: string, namespace: string, tokenVolume: string | undefined, decorations: readonly PodDecoration[], reads: readonly RevisionRead[], decision: AdmissionDecision): void {
    const { uid: _uid, ...response } = decision.response;
    let withPlaceholder: Entry["withPlaceholder"];
    if (tokenVolume !== undefined) {
      if (decorations.some(mentionsTokenVolume) || reads.some((read) => mentionsTokenVolume(read.data))) return;
      withPlaceholder = placeholderFor(response, tokenVolume);
      if (withPlaceholder === undefined) return;
    }
    const characters = digest.length + (response.patch?.length ?? 0) + (withPlaceholder?.patch?.length ?? 0) + 2 * (response.warnings ?? []).reduce((sum, warning) => sum + warning.length, 0);
    if (characters > this.#limits.characters) return;
    if (response.warnings !== undefined) Object.freeze(response.warnings);
    const entry: Entry = { namespace, reads, response: Object.freeze(response), ...(withPlaceholder === undefined ? {} : { withPlaceholder }), result: decision.result, characters };
    let snapshot = this.#namespaces.get(namespace);
    if (snapshot === undefined) this.#namespaces.set(namespace, (snapshot = { decorations: [...decorations], digests: new Set() }));
    snapshot.digests.add(digest);
    this.#entries.set(digest, entry);
    this.#characters += characters;
    for (const [oldest, evicted] of this.#entries) {
      if (this.#entries.size <= this.#limits.entries && this.#characters <= this.#limits.characters) break;
      this.#forget(oldest, evicted);
    }
  }

  #forget(digest: string, entry: Entry): void {
    this.#entries.delete(digest);
    this.#characters -= entry.characters;
    const snapshot = this.#namespaces.get(entry.namespace);
    snapshot?.digests.delete(digest);
    if (snapshot?.digests.size === 0) this.#namespaces.delete(entry.namespace);
  }
}

/**
 * The patch (as JSON text) and warnings with the placeholder for `tokenVolume`; undefined when
 * they mention a token volume name other than it (then the answer is this pod's alone).
 */
function placeholderFor(response: Omit<AdmissionResponse, "uid">, tokenVolume: string): Entry["withPlaceholder"] {
  const patch = response.patch === undefined ? undefined : Buffer.from(response.patch, "base64").toString("utf8");
  const texts = [patch ?? "", ...(response.warnings ?? [])];
  if (texts.some((text) => occurrences(text, TOKEN_VOLUME_PREFIX) !== occurrences(text, tokenVolume))) return undefined;
  const names = (text: string) => text.includes(tokenVolume);
  return {
    patch: patch !== undefined && names(patch) ? patch.replaceAll(tokenVolume, TOKEN_VOLUME_PLACEHOLDER) : undefined,
    warnings: response.warnings?.some(names) === true ? Object.freeze(response.warnings.map((warning) => warning.replaceAll(tokenVolume, TOKEN_VOLUME_PLACEHOLDER))) : undefined,
  };
}

/** The remembered patch and warnings written for a replica whose token volume is `tokenVolume`. */
function withTokenVolume(entry: Entry, tokenVolume: string | undefined): Partial<AdmissionResponse> {
  if (entry.withPlaceholder === undefined || tokenVolume === undefined) return {};
  const { patch, warnings } = entry.withPlaceholder;
  return {
    ...(patch === undefined ? {} : { patch: Buffer.from(patch.replaceAll(TOKEN_VOLUME_PLACEHOLDER, tokenVolume)).toString("base64") }),
    ...(warnings === undefined ? {} : { warnings: warnings.map((warning) => warning.replaceAll(TOKEN_VOLUME_PLACEHOLDER, tokenVolume)) }),
  };
}
