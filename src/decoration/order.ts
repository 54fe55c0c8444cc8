// The order decorations are rendered in (DESIGN §3): group ascending with ungrouped first,
// weight ascending, creation time ascending, name ascending. Later ones render on top.

export interface DecorationOrderKey {
  name: string;
  group: string;
  weight: number;
  /** RFC 3339; a missing timestamp (a manifest not yet created) sorts first. */
  creationTimestamp?: string | undefined;
}

export function compareDecorationOrder(a: DecorationOrderKey, b: DecorationOrderKey): number {
  return compareStrings(a.group, b.group) || a.weight - b.weight || compareTimestamps(a.creationTimestamp, b.creationTimestamp) || compareStrings(a.name, b.name);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareTimestamps(a: string | undefined, b: string | undefined): number {
  const left = timestampMillis(a);
  const right = timestampMillis(b);
  return left === right ? 0 : left < right ? -1 : 1;
}

function timestampMillis(timestamp: string | undefined): number {
  if (timestamp === undefined) return Number.NEGATIVE_INFINITY;
  const millis = Date.parse(timestamp);
  return Number.isNaN(millis) ? Number.NEGATIVE_INFINITY : millis;
}
