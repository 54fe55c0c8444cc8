// `pod-decorator explain`, two ways:
// - offline, `--pod FILE --decorations FILE [-o text|json]`: which decorations apply to the pod,
//   in which order and at which revision, and why each other one does not (namespace,
//   selector, deletion, group, already applied);
// - against a cluster, `pod NAME` or `poddecoration NAME` (explain-cluster.ts): what the pod
//   records, what it should have and why not; a decoration's pods by state.
import type { Command } from "./command.ts";
import { EXPLAIN_OFFLINE_USAGE } from "./explain-usage.ts";
import { explain as explainRun, formatExplanation } from "./explanation.ts";
import { decorationRun } from "./render-options.ts";

export { EXPLAIN_USAGE } from "./explain-usage.ts";

/** A positional argument (the kind) means the cluster; the offline form takes only flags. */
function againstCluster(args: readonly string[]): boolean {
  return !args.some((arg) => arg === "--pod" || arg.startsWith("--pod=") || arg === "--decorations" || arg.startsWith("--decorations="));
}

export const explain: Command = async (args, io) => {
  // Loaded on use: the client library would slow the offline path.
  if (againstCluster(args)) return (await import("./explain-cluster.ts")).explainCluster(args, io);
  const run = await decorationRun(args, io, { usage: EXPLAIN_OFFLINE_USAGE, outputs: ["text", "json"], withExplainFlag: false });
  const explanation = explainRun(run.pod, run.decorations, run.result, run.unselecting);
  io.stdout(run.output === "json" ? `${JSON.stringify(explanation, null, 2)}\n` : formatExplanation(explanation));
  return 0;
};
