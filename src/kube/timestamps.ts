// Kubernetes' two wire formats for time: metav1.Time (RFC 3339, whole seconds) and
// metav1.MicroTime (six fractional digits, required by Lease renewTime and Event eventTime).

export function formatTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function formatMicroTime(epochMs: number): string {
  // A JS Date has millisecond precision; the last three digits are always zero.
  return new Date(epochMs).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** Milliseconds since the epoch, or undefined when the text is not an RFC 3339 time. */
export function parseTime(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
