// A server's base URL as kubeconfigs and flags spell it, with or without trailing slashes,
// made ready for a path to be appended.

/**
 * `url` without its trailing slashes. A scan from the end rather than `/\/+$/`, which a
 * backtracking engine retries from every slash of a long run (quadratic in its length).
 */
export function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f) end--;
  return url.slice(0, end);
}
