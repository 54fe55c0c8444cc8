// How a decoration stands among its namespace's others (DESIGN §10): within the namespace's
// limit or over it (then inert: namespace-limit.ts), and whether decorations already there
// out-rank it — the platform's decoration written after the app team's: admission checks who
// writes the out-ranking one, so a decoration created second can only be told. The reconciler
// turns it into conditions and, when the out-ranking ones change, an Event.
//
// Judged once per namespace per change of what it judges (a spec, a decoration created or
// going), not once per reconcile: every decoration of the namespace is reconciled when one
// changes, and each reconcile judging every pair would cost the cube of the namespace's count.
import type { PodDecoration } from "../../api/poddecoration.ts";
import { labelWrites } from "../../decoration/label-writes.ts";
import { overLimitMessage, withinNamespaceLimit } from "../../decoration/namespace-limit.ts";
import { outRankingsWithin } from "../../decoration/out-ranking.ts";
import type { ConditionWithoutTime } from "../conditions.ts";

export interface NamespaceStanding {
  /** Set when the decoration is over its namespace's limit: why it is not applied. */
  overLimit: string | undefined;
  /** `WithinNamespaceLimit` and `OutRanked`. */
  conditions: ConditionWithoutTime[];
}

/** Each decoration out-ranking it, named, with how; most names listed before the rest are counted. */
const NAMED_AT_MOST = 10;

interface Judged {
  signature: string;
  standings: Map<string, NamespaceStanding>;
}

export class NamespaceStandings {
  readonly #maxDecorationsPerNamespace: number;
  readonly #byNamespace = new Map<string, Judged>();

  constructor(maxDecorationsPerNamespace: number) {
    this.#maxDecorationsPerNamespace = maxDecorationsPerNamespace;
  }

  /** The standing of `decoration` among `namespace` (its namespace's decorations, itself included). */
  of(decoration: PodDecoration, namespace: readonly PodDecoration[]): NamespaceStanding {
    const namespaceName = decoration.metadata.namespace ?? "";
    const signature = signatureOf(namespace);
    let judged = this.#byNamespace.get(namespaceName);
    if (judged?.signature !== signature) {
      judged = { signature, standings: judgeNamespace(namespace, this.#maxDecorationsPerNamespace) };
      this.#byNamespace.set(namespaceName, judged);
    }
    return judged.standings.get(decoration.metadata.name ?? "") ?? judgeNamespace([...namespace, decoration], this.#maxDecorationsPerNamespace).get(decoration.metadata.name ?? "")!;
  }

  /** Forgets a namespace that has no decorations any more. */
  forget(namespace: string): void {
    this.#byNamespace.delete(namespace);
  }
}

/** What the standings depend on: each decoration's identity, spec generation, age and whether it goes. */
function signatureOf(namespace: readonly PodDecoration[]): string {
  return namespace
    .map((decoration) => `${decoration.metadata.name ?? ""}/${decoration.metadata.uid ?? ""}/${decoration.metadata.generation ?? ""}/${decoration.metadata.creationTimestamp ?? ""}/${decoration.metadata.deletionTimestamp == null ? "" : "x"}`)
    .sort()
    .join("\n");
}

/** Every decoration's standing in one namespace: the pairs judged once. */
export function judgeNamespace(namespace: readonly PodDecoration[], maxDecorationsPerNamespace: number): Map<string, NamespaceStanding> {
  const namespaceName = namespace[0]?.metadata.namespace ?? "";
  const limit = withinNamespaceLimit(namespace, maxDecorationsPerNamespace);
  const over = new Set(limit.over);
  const outRankers = new Map<string, { other: PodDecoration; reasons: readonly string[] }[]>();
  for (const [decoration, by] of outRankingsWithin(namespace, labelWrites(namespace))) {
    outRankers.set(decoration.metadata.name ?? "", by.map((entry) => ({ other: entry.by, reasons: entry.reasons })));
  }
  const standings = new Map<string, NamespaceStanding>();
  for (const decoration of namespace) {
    const overLimit = over.has(decoration) ? overLimitMessage(namespaceName, limit.counted, maxDecorationsPerNamespace) : undefined;
    const within: ConditionWithoutTime = overLimit === undefined
      ? { type: "WithinNamespaceLimit", status: "True", reason: "WithinLimit", message: `namespace ${namespaceName} has ${limit.counted} of at most ${maxDecorationsPerNamespace} PodDecorations` }
      : { type: "WithinNamespaceLimit", status: "False", reason: "OverNamespaceLimit", message: `${overLimit}; this one is among them` };
    const by = outRankers.get(decoration.metadata.name ?? "") ?? [];
    const outRanked: ConditionWithoutTime = by.length === 0
      ? { type: "OutRanked", status: "False", reason: "NotOutRanked", message: "no other decoration of the namespace out-ranks it on the pods both can select" }
      : { type: "OutRanked", status: "True", reason: "OutRankedByOthers", message: outRankedMessage(by) };
    standings.set(decoration.metadata.name ?? "", { overLimit, conditions: [within, outRanked] });
  }
  return standings;
}

function outRankedMessage(outRankers: readonly { other: PodDecoration; reasons: readonly string[] }[]): string {
  const sorted = [...outRankers].sort((a, b) => ((a.other.metadata.name ?? "") < (b.other.metadata.name ?? "") ? -1 : 1));
  const named = sorted.slice(0, NAMED_AT_MOST).map(({ other, reasons }) => `${other.metadata.name ?? ""} (${reasons.join("; ")})`);
  const more = outRankers.length > NAMED_AT_MOST ? ` and ${outRankers.length - NAMED_AT_MOST} more` : "";
  return `out-ranked on the pods both can select by ${named.join(", ")}${more}: what they render there wins over this one's; they were written by someone allowed to, or before it`;
}
