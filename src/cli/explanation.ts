// The account of a render that `explain` prints and `render --explain` writes to stderr:
// which decorations apply in which order at which revision, and why each other one does not.
import type { Pod } from "../api/pod.ts";
import { decorationGroup, decorationWeight, type PodDecoration } from "../api/poddecoration.ts";
import type { DecorateResult } from "../decoration/decorate.ts";
import { decorationKey } from "../decoration/decoration-kind.ts";
import { DEFAULT_NAMESPACE, type ExclusionReason } from "../decoration/selection.ts";

/**
 * Why a decoration is not on a pod, or not at the revision it should be: the vocabulary both
 * forms of `explain` use. Offline only the engine's exclusions apply; a live cluster adds what
 * rollouts, admission and the webhook's scope decide (live-explanation.ts).
 */
export type ReasonCode =
  | ExclusionReason
  | "pod-inactive"
  | "canary-selector"
  | "partition"
  | "created-before"
  | "needs-recreation"
  | "update-blocked"
  | "rollout-in-progress"
  | "not-admitted-by-webhook"
  | "outside-webhook-scope"
  | "render-error"
  | "revision-pending";

export interface Reason<Code extends ReasonCode = ReasonCode> {
  reason: Code;
  /** One sentence for people. */
  detail: string;
}

export interface Explanation {
  pod: { namespace: string; name: string };
  applied: { name: string; revision: string; group: string; weight: number }[];
  excluded: ({ name: string; namespace: string } & Reason<ExclusionReason>)[];
  warnings: string[];
}

/** The account of a render; `unselecting` are the cluster decorations whose namespaceSelector does not select the pod's namespace. */
export function explain(pod: Pod, decorations: readonly PodDecoration[], result: DecorateResult, unselecting: readonly { decoration: PodDecoration; detail: string }[] = []): Explanation {
  const byName = new Map(decorations.map((decoration) => [decorationKey(decoration), decoration]));
  return {
    pod: { namespace: pod.metadata?.namespace ?? DEFAULT_NAMESPACE, name: pod.metadata?.name ?? pod.metadata?.generateName ?? "<unnamed>" },
    applied: result.applied.map(({ name, revision }) => {
      const decoration = byName.get(name);
      return { name, revision, group: decoration === undefined ? "" : decorationGroup(decoration), weight: decoration === undefined ? 0 : decorationWeight(decoration) };
    }),
    excluded: [
      ...result.excluded.map(({ decoration, reason, detail }) => ({ name: decorationKey(decoration), namespace: decoration.metadata.namespace ?? DEFAULT_NAMESPACE, reason, detail })),
      ...unselecting.map(({ decoration, detail }) => ({ name: decorationKey(decoration), namespace: decoration.metadata.namespace ?? DEFAULT_NAMESPACE, reason: "namespace" as const, detail })),
    ],
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
