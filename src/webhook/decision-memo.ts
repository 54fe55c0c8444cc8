// The pod webhook's memory of its recent answers. Pods created from one template (a
// ReplicaSet's, a CollaSet's, a Job's) reach the webhook as the same object again and again, a
// scale-up as a burst of them; each answer is a pure function of the pod object, the requester's
// standing, the namespace's decorations and the ControllerRevision data rendering read. An answer
// is given again only while all of those are still the same objects: the caches replace an
// object when it changes, never change it, so identity says "unchanged" exactly.
// Bounded in entries and in bytes: hostile input can only push answers out, never grow it.
import type { PodDecoration } from "../api/poddecoration.ts";
import type { DecorationSource } from "../decoration/updated-revisions.ts";
import type { AdmissionResponse } from "./admission-review.ts";
import type { AdmissionDecision } from "./server.ts";

export interface DecisionMemoLimits {
  /** Answers kept at most. */
  entries: number;
  /** Characters kept at most, over every entry's key, patch and warnings. */
  characters: number;
  /** A pod whose key is longer is answered without being remembered. */
  keyCharacters: number;
}

export const DEFAULT_DECISION_MEMO_LIMITS: DecisionMemoLimits = { entries: 512, characters: 8 * 1024 * 1024, keyCharacters: 64 * 1024 };

interface RevisionRead {
  namespace: string;
  name: string;
  data: unknown;
}

interface Entry {
  decorations: readonly PodDecoration[];
  reads: readonly RevisionRead[];
  response: Omit<AdmissionResponse, "uid">;
  result: AdmissionDecision["result"];
  characters: number;
}

export class DecisionMemo {
  readonly #limits: DecisionMemoLimits;
  readonly #source: DecorationSource;
  /** Least recently used first (a Map keeps insertion order). */
  readonly #entries = new Map<string, Entry>();
  #characters = 0;
  #reads: RevisionRead[] | undefined;

  /** What rendering reads from: `source`, noting the revision data each answer depended on. */
  readonly source: DecorationSource;

  constructor(source: DecorationSource, limits: DecisionMemoLimits = DEFAULT_DECISION_MEMO_LIMITS) {
    this.#source = source;
    this.#limits = limits;
    this.source = {
      decorations: (namespace) => source.decorations(namespace),
      revisionData: (namespace, name) => {
        const data = source.revisionData(namespace, name);
        this.#reads?.push({ namespace, name, data });
        return data;
      },
    };
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The answer for `uid` to the pod `key` stands for, given the namespace's `decorations`:
   * remembered when still valid, else from `decide` (which renders from `this.source`), and
   * remembered unless it is an error (an internal error may not repeat).
   */
  answer(uid: string, key: string, decorations: readonly PodDecoration[], decide: () => AdmissionDecision): AdmissionDecision {
    if (key.length > this.#limits.keyCharacters) return decide();
    const remembered = this.#entries.get(key);
    if (remembered !== undefined && this.#stillValid(remembered, decorations)) {
      // Most recently used goes last.
      this.#entries.delete(key);
      this.#entries.set(key, remembered);
      return { response: { uid, ...remembered.response }, result: remembered.result };
    }
    if (remembered !== undefined) this.#forget(key, remembered);
    const reads: RevisionRead[] = [];
    this.#reads = reads;
    let decision: AdmissionDecision;
    try {
      decision = decide();
    } finally {
      this.#reads = undefined;
    }
    if (decision.result !== "error") this.#remember(key, decorations, reads, decision);
    return decision;
  }

  #stillValid(entry: Entry, decorations: readonly PodDecoration[]): boolean {
    if (entry.decorations.length !== decorations.length) return false;
    for (let index = 0; index < decorations.length; index++) {
      if (entry.decorations[index] !== decorations[index]) return false;
    }
    return entry.reads.every((read) => this.#source.revisionData(read.namespace, read.name) === read.data);
  }

  #remember(key: string, decorations: readonly PodDecoration[], reads: readonly RevisionRead[], decision: AdmissionDecision): void {
    const { uid: _uid, ...response } = decision.response;
    const characters = key.length + (response.patch?.length ?? 0) + (response.warnings ?? []).reduce((sum, warning) => sum + warning.length, 0);
    if (characters > this.#limits.characters) return;
    if (response.warnings !== undefined) Object.freeze(response.warnings);
    const entry: Entry = { decorations: [...decorations], reads, response: Object.freeze(response), result: decision.result, characters };
    this.#entries.set(key, entry);
    this.#characters += characters;
    for (const [oldest, evicted] of this.#entries) {
      if (this.#entries.size <= this.#limits.entries && this.#characters <= this.#limits.characters) break;
      this.#forget(oldest, evicted);
    }
  }

  #forget(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#characters -= entry.characters;
  }
}
