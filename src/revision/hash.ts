// Content hashes written in Kubernetes' "safe" alphabet (no vowels, no look-alike digits), as
// client-go's rand.SafeEncodeString does, so they can appear in names and labels and never
// spell words.
import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json.ts";

export const SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
export const HASH_LENGTH = 10;

/**
 * The hash of revision data (any plain JSON). `collisionCount` (status.collisionCount) changes
 * the hash, which is how a controller escapes a name taken by a revision with other data.
 */
export function hashRevisionData(data: unknown, collisionCount = 0): string {
  const text = collisionCount === 0 ? canonicalJson(data) : `${canonicalJson(data)}\n${collisionCount}`;
  return safeHash(text);
}

/** A short hash of a string in the safe alphabet. */
export function safeHash(text: string, length = HASH_LENGTH): string {
  const digest = createHash("sha256").update(text).digest();
  let result = "";
  // 32 bytes cover any length a name needs; the modulo bias is irrelevant for naming.
  for (let index = 0; index < length; index++) result += SAFE_ALPHABET[(digest[index % digest.length] ?? 0) % SAFE_ALPHABET.length];
  return result;
}
