// Revision history decisions (DESIGN §4), for any owner: which stored revision the current
// data is, whether it must be created or rolled back to, and which revisions may be pruned.
// Pure: the controllers do the writes.
import { canonicalJson } from "./canonical-json.ts";
import { hashRevisionData } from "./hash.ts";
import { revisionName } from "./name.ts";

export interface StoredRevision {
  name: string;
  revision: number;
  data: unknown;
}

export type RevisionPlan =
  /** The newest stored revision already holds the data. */
  | { kind: "reuse"; name: string }
  /** An older revision holds the data: bump its number to make it the newest, keep its name. */
  | { kind: "rollback"; name: string; revision: number }
  /** No revision holds the data: store it under this name and number. */
  | { kind: "create"; name: string; hash: string; revision: number }
  /** The name the data hashes to is taken by other data: bump collisionCount and plan again. */
  | { kind: "collision"; name: string };

/** `ownerName`: what the revisions' names start with (the owner's name, with any prefix of its kind). */
export function planRevision(ownerName: string, data: unknown, collisionCount: number, history: readonly StoredRevision[]): RevisionPlan {
  const text = canonicalJson(data);
  const newest = history.reduce((highest, item) => Math.max(highest, item.revision), 0);
  // Equal data is found by content, not by name: it may have been stored under an older collisionCount.
  const same = history.filter((item) => canonicalJson(item.data) === text).sort((a, b) => b.revision - a.revision)[0];
  if (same !== undefined) return same.revision === newest ? { kind: "reuse", name: same.name } : { kind: "rollback", name: same.name, revision: newest + 1 };
  const hash = hashRevisionData(data, collisionCount);
  const name = revisionName(ownerName, hash);
  if (history.some((item) => item.name === name)) return { kind: "collision", name };
  return { kind: "create", name, hash, revision: newest + 1 };
}

/**
 * Revisions to delete so that at most `limit` remain, oldest first, never one that is
 * protected (current, updated, or recorded by a live pod). Protected revisions count towards
 * the limit, so the history can exceed it only by the protected ones.
 */
export function revisionsToPrune(history: readonly StoredRevision[], limit: number, protectedNames: ReadonlySet<string>): string[] {
  const excess = history.length - Math.max(1, limit);
  if (excess <= 0) return [];
  return [...history]
    .filter((item) => !protectedNames.has(item.name))
    .sort((a, b) => a.revision - b.revision || (a.name < b.name ? -1 : 1))
    .slice(0, excess)
    .map((item) => item.name);
}
