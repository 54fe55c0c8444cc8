// Compares a run's results with its targets and prints them as a Markdown table. Pure.

export interface Target {
  /** The value must be under (below), at most, or at least `value`. */
  kind: "below" | "atMost" | "atLeast";
  value: number;
  /** As DESIGN §9 words it. */
  text: string;
}

export interface Metric {
  /** `section.key` in bench-results.json, e.g. "engine.renderMicros". */
  path: string;
  /** What exactly the number is: workload, unit, cores, rate. */
  measures: string;
  target?: Target;
  /** The measured cell; `section` is the metric's whole section, for context such as a baseline. */
  format(value: number, section: Record<string, unknown>): string;
  /** Why this run's number may not mean what it says (e.g. a starved server), added to the verdict. */
  caveat?(section: Record<string, unknown>): string | undefined;
}

/** What happened to each section key in this run. */
export type SectionState = { state: "ran" } | { state: "failed"; reason: string } | { state: "not built" } | { state: "not selected" };

/** Why a metric of a section in this state has no number. */
export function notMeasuredReason(state: SectionState): string {
  switch (state.state) {
    case "failed":
      return `section failed: ${state.reason}`;
    case "not built":
      return "section not built";
    case "not selected":
      return "section not selected in this run";
    case "ran":
      return "missing from the section's output";
  }
}

export type Results = Record<string, Record<string, unknown> | undefined>;

export interface Row {
  metric: string;
  measures: string;
  measured: string;
  target: string;
  verdict: string;
}

export function splitPath(path: string): { section: string; key: string } {
  const dot = path.indexOf(".");
  if (dot <= 0 || dot === path.length - 1) throw new Error(`metric path ${JSON.stringify(path)} is not section.key`);
  return { section: path.slice(0, dot), key: path.slice(dot + 1) };
}

/** The metric's number in results, if it was measured; a key with dots walks into nested figures. */
export function valueAt(results: Results, path: string): number | undefined {
  const { section, key } = splitPath(path);
  const value = key.split(".").reduce<unknown>((figures, name) => (typeof figures === "object" && figures !== null ? (figures as Record<string, unknown>)[name] : undefined), results[section]);
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

export function isMet(target: Target, value: number): boolean {
  if (target.kind === "below") return value < target.value;
  return target.kind === "atMost" ? value <= target.value : value >= target.value;
}

export function evaluate(metrics: readonly Metric[], results: Results, states: ReadonlyMap<string, SectionState>): Row[] {
  return metrics.map((metric) => {
    const { section } = splitPath(metric.path);
    const value = valueAt(results, metric.path);
    const target = metric.target?.text ?? "—";
    const row = { metric: `\`${metric.path}\``, measures: metric.measures, target };
    if (value === undefined) {
      return { ...row, measured: `not measured (${notMeasuredReason(states.get(section) ?? { state: "not built" })})`, verdict: "—" };
    }
    const verdict = metric.target === undefined ? "— (no target)" : isMet(metric.target, value) ? "met" : "**not met**";
    const caveat = metric.caveat?.(results[section] ?? {});
    return { ...row, measured: metric.format(value, results[section] ?? {}), verdict: caveat === undefined ? verdict : `${verdict} (${caveat})` };
  });
}

/** A Markdown table; pipes inside cells are escaped. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export function reportTable(rows: readonly Row[]): string {
  return markdownTable(["metric", "what it measures", "measured", "DESIGN §9 target", "verdict"], rows.map((row) => [row.metric, row.measures, row.measured, row.target, row.verdict]));
}
