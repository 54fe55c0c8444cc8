// Names and label values derived from object names. Object names may be 253 characters with
// dots; revision names, label values and label-key name parts allow 63. Long names are cut
// and suffixed with a hash of the whole name, so distinct names stay distinct.
import { isLabelValue } from "../api/names.ts";
import { HASH_LENGTH, safeHash } from "./hash.ts";

export const MAX_NAME_LENGTH = 63;

/** `<owner name, truncated>-<hash>`: a valid object name and label value of at most 63 characters. */
export function revisionName(ownerName: string, hash: string): string {
  const prefix = trimToAlphanumericEnd(ownerName.slice(0, Math.max(0, MAX_NAME_LENGTH - hash.length - 1)));
  return prefix === "" ? hash : `${prefix}-${hash}`;
}

/**
 * `value` when it is a valid label value of at most `maxLength` characters; otherwise a
 * truncated prefix and a hash of the full value, still a valid label value.
 */
export function boundedLabelValue(value: string, maxLength = MAX_NAME_LENGTH): string {
  if (value.length <= maxLength && isLabelValue(value)) return value;
  const hash = safeHash(value, HASH_LENGTH);
  const prefix = trimToAlphanumericEnd(value.slice(0, Math.max(0, maxLength - HASH_LENGTH - 1)).replace(/[^A-Za-z0-9._-]/g, "-"));
  const candidate = prefix === "" ? hash : `${prefix}-${hash}`;
  return /^[A-Za-z0-9]/.test(candidate) ? candidate : hash;
}

function trimToAlphanumericEnd(value: string): string {
  // A scan from the end: an unanchored `/[^A-Za-z0-9]+$/` retries every start of a long run.
  let end = value.length;
  while (end > 0 && !isAsciiAlphanumeric(value.charCodeAt(end - 1))) end--;
  return value.slice(0, end);
}

function isAsciiAlphanumeric(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}
