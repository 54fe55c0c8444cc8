// How a decoration stands among its namespace's others (DESIGN §10): within the namespace's
// limit or over it (then inert: namespace-limit.ts), and whether decorations already there
// out-rank it — the platform's decoration written after the app team's: admission checks who
// writes the out-ranking one, so a decoration created second can only be told. Pure: the
// reconciler turns it into conditions and, when the out-ranking ones change, an Event.
import type { PodDecoration } from "../../api/poddecoration.ts";
import { outRankedDecorations } from "../../decoration/out-ranking.ts";
import { labelWrites } from "../../decoration/label-writes.ts";
import { overLimitMessage, withinNamespaceLimit } from "../../decoration/namespace-limit.ts";
import type { ConditionWithoutTime } from "../conditions.ts";

export interface NamespaceStanding {
  /** Set when the decoration is over its namespace's limit: why it is not applied. */
  overLimit: string | undefined;
  /** `WithinNamespaceLimit` and `OutRanked`. */
  conditions: ConditionWithoutTime[];
}

/** Each decoration out-ranking it, named, with how; most names listed before the rest are counted. */
const NAMED_AT_MOST = 10;

export function namespaceStanding(decoration: PodDecoration, namespace: readonly PodDecoration[], maxDecorationsPerNamespace: number): NamespaceStanding {
  const name = decoration.metadata.name ?? "";
  const namespaceName = decoration.metadata.namespace ?? "";
  const limit = withinNamespaceLimit(namespace, maxDecorationsPerNamespace);
  const overLimit = limit.over.some((other) => (other.metadata.name ?? "") === name) ? overLimitMessage(namespaceName, limit.counted, maxDecorationsPerNamespace) : undefined;
  const within: ConditionWithoutTime = overLimit === undefined
    ? { type: "WithinNamespaceLimit", status: "True", reason: "WithinLimit", message: `namespace ${namespaceName} has ${limit.counted} of at most ${maxDecorationsPerNamespace} PodDecorations` }
    : { type: "WithinNamespaceLimit", status: "False", reason: "OverNamespaceLimit", message: `${overLimit}; this one is among them` };
  const writes = labelWrites(namespace);
  const outRankers = namespace.flatMap((other) => {
    if ((other.metadata.name ?? "") === name || other.metadata.deletionTimestamp != null) return [];
    const reasons = outRankedDecorations(other, [decoration], writes)[0]?.reasons ?? [];
    return reasons.length === 0 ? [] : [{ other, reasons }];
  });
  const outRanked: ConditionWithoutTime = outRankers.length === 0
    ? { type: "OutRanked", status: "False", reason: "NotOutRanked", message: "no other decoration of the namespace out-ranks it on the pods both can select" }
    : { type: "OutRanked", status: "True", reason: "OutRankedByOthers", message: outRankedMessage(outRankers) };
  return { overLimit, conditions: [within, outRanked] };
}

function outRankedMessage(outRankers: readonly { other: PodDecoration; reasons: readonly string[] }[]): string {
  const named = outRankers.slice(0, NAMED_AT_MOST).map(({ other, reasons }) => `${other.metadata.name ?? ""} (${reasons.join("; ")})`);
  const more = outRankers.length > NAMED_AT_MOST ? ` and ${outRankers.length - NAMED_AT_MOST} more` : "";
  return `out-ranked on the pods both can select by ${named.join(", ")}${more}: what they render there wins over this one's; they were written by someone allowed to, or before it`;
}
