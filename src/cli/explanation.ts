// The account of a render that `explain` prints and `render --explain` writes to stderr:
// which decorations apply in which order at which revision, and why each other one does not.
import type { Pod } from "../api/pod.ts";
import { decorationGroup, decorationWeight, type PodDecoration } from "../api/poddecoration.ts";
import type { DecorateResult } from "../decoration/decorate.ts";
import { DEFAULT_NAMESPACE, type ExclusionReason } from "../decoration/selection.ts";

export interface Explanation {
  pod: { namespace: string; name: string };
  applied: { name: string; revision: string; group: string; weight: number }[];
  excluded: { name: string; namespace: string; reason: ExclusionReason; detail: string }[];
  warnings: string[];
}

export function explain(pod: Pod, decorations: readonly PodDecoration[], result: DecorateResult): Explanation {
  const byName = new Map(decorations.map((decoration) => [decoration.metadata.name ?? "", decoration]));
  return {
    pod: { namespace: pod.metadata?.namespace ?? DEFAULT_NAMESPACE, name: pod.metadata?.name ?? pod.metadata?.generateName ?? "<unnamed>" },
    applied: result.applied.map(({ name, revision }) => {
      const decoration = byName.get(name);
      return { name, revision, group: decoration === undefined ? "" : decorationGroup(decoration), weight: decoration === undefined ? 0 : decorationWeight(decoration) };
    }),
    excluded: result.excluded.map(({ decoration, reason, detail }) => ({
      name: decoration.metadata.name ?? "",
      namespace: decoration.metadata.namespace ?? DEFAULT_NAMESPACE,
      reason,
      detail,
    })),
    warnings: result.warnings,
  };
}

export function formatExplanation(explanation: Explanation): string {
  const lines = [`Pod ${explanation.pod.namespace}/${explanation.pod.name}`];
  if (explanation.applied.length === 0) {
    lines.push("  applied: none");
  } else {
    lines.push("  applied, in rendering order:");
    explanation.applied.forEach((item, index) => {
      const group = item.group === "" ? "no group" : `group ${item.group}`;
      lines.push(`    ${index + 1}. ${item.name}  revision ${item.revision}  (${group}, weight ${item.weight})`);
    });
  }
  if (explanation.excluded.length === 0) {
    lines.push("  excluded: none");
  } else {
    lines.push("  excluded:");
    for (const item of explanation.excluded) lines.push(`    ${item.name}  ${item.reason}: ${item.detail}`);
  }
  for (const warning of explanation.warnings) lines.push(`  warning: ${warning}`);
  return `${lines.join("\n")}\n`;
}
