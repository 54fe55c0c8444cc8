// The metric names a PromQL expression reads, for checking a dashboard's and the alert rules'
// queries against what serve exports. A small scanner, not a parser: it drops what cannot be a
// metric name (strings, label matchers, ranges, grouping labels, function and operator names).
const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan", "atan2"]);

export function metricNames(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^{}]*\}/g, " ")
    .replace(/\[[^[\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set<string>();
  // Not after a digit, a dot or `$` (a number's exponent, a duration's unit, a Grafana variable); not before `(` (a function).
  for (const match of bare.matchAll(/(?<![\w.$])[a-zA-Z_:][\w:]*(?!\w|\s*\()/g)) {
    if (!KEYWORDS.has(match[0].toLowerCase())) names.add(match[0]);
  }
  return [...names].sort();
}
