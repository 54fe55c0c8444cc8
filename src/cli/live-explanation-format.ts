// `explain`'s human output for a live cluster, laid out like `kubectl describe`: aligned
// "Field:  value" lines, nested sections indented by two spaces.
import { DECORATION_STATES, type DecorationReport, type DecorationVerdict, type PodReport, type Reason } from "./live-explanation.ts";

type Row = [label: string, value: string];

function rows(entries: readonly Row[], indent: string): string[] {
  const width = Math.max(0, ...entries.map(([label]) => label.length + 1));
  return entries.map(([label, value]) => `${indent}${`${label}:`.padEnd(width)}  ${value}`);
}

function reasonLines(reasons: readonly Reason[], indent: string): string[] {
  if (reasons.length === 0) return [];
  return [`${indent}Why:`, ...reasons.map((reason) => `${indent}  ${reason.reason}: ${reason.detail}`)];
}

function verdictLines(verdict: DecorationVerdict): string[] {
  return [
    `  ${verdict.name}:`,
    ...rows([
      ["Matches", verdict.matches ? "yes" : "no"],
      ["State", verdict.state],
      ["Pod revision", verdict.podRevision ?? "<none>"],
      ["Should have", verdict.targetRevision ?? "<none>"],
      ["Updated revision", verdict.updatedRevision ?? "<none>"],
    ], "    "),
    ...reasonLines(verdict.reasons, "    "),
  ];
}

export function formatPodReport(report: PodReport): string {
  const { pod } = report;
  const lines = rows([
    ["Pod", `${pod.namespace}/${pod.name}`],
    ["Created", pod.creationTimestamp ?? "<unknown>"],
    ["Owner", pod.owner ?? "<none>"],
    ["Updated by", pod.updatedBy === "collaset-controller" ? "the CollaSet controller (rollouts reach the pod)" : "the PodDecoration controller (in place when only images and metadata change; otherwise when the pod is recreated, or evicted with recreatePolicy Evict)"],
    ["Webhook", `${report.webhook.inScope === undefined ? "unknown" : report.webhook.inScope ? "in scope" : "OUT OF SCOPE"}: ${report.webhook.detail}`],
    ["Recorded", report.recorded === null ? "<no revisions annotation>" : report.recorded.length === 0 ? "[]" : report.recorded.map((entry) => `${entry.name}=${entry.revision}`).join(", ")],
  ], "");
  lines.push("Decorations:");
  if (report.decorations.length === 0) lines.push("  <none in the namespace>");
  for (const verdict of report.decorations) lines.push(...verdictLines(verdict));
  for (const warning of report.warnings) lines.push(`Warning: ${warning}`);
  return `${lines.join("\n")}\n`;
}

export function formatDecorationReport(report: DecorationReport): string {
  const { decoration } = report;
  const fleet: Row[] = decoration.clusterScoped === true
    ? [
      ["Namespace selector", JSON.stringify(decoration.namespaceSelector ?? {})],
      ["Namespaces", (decoration.namespaces ?? []).length === 0 ? "<none selected>" : (decoration.namespaces ?? []).join(", ")],
    ]
    : [];
  const lines = rows([
    decoration.clusterScoped === true ? ["ClusterPodDecoration", decoration.name] : ["PodDecoration", `${decoration.namespace}/${decoration.name}`],
    ...fleet,
    ["Updated revision", decoration.updatedRevision ?? "<none>"],
    ["Current revision", decoration.currentRevision ?? "<none>"],
    ["Partition", decoration.partition === undefined ? "<none>" : String(decoration.partition)],
    ["Canary selector", decoration.canarySelector === undefined ? "<none>" : JSON.stringify(decoration.canarySelector)],
    ...(decoration.clusterScoped === true ? [["Namespace canary", decoration.namespaceCanary === undefined ? "<none>" : JSON.stringify(decoration.namespaceCanary)] satisfies Row] : []),
    ["Render error", decoration.renderError ?? "<none>"],
  ], "");
  lines.push("Pods:");
  const states = DECORATION_STATES.filter((state) => (report.pods[state] ?? []).length > 0);
  if (states.length === 0) lines.push("  <none match or record it>");
  for (const state of states) {
    const pods = report.pods[state] ?? [];
    lines.push(`  ${state} (${pods.length}):`);
    for (const pod of pods) {
      const revisions = `has ${pod.podRevision ?? "<none>"}, should have ${pod.targetRevision ?? "<none>"}`;
      lines.push(`    ${pod.pod}  ${revisions}`);
      for (const reason of pod.reasons) lines.push(`      ${reason.reason}: ${reason.detail}`);
    }
  }
  for (const warning of report.warnings) lines.push(`Warning: ${warning}`);
  return `${lines.join("\n")}\n`;
}
