// `pod-decorator explain --pod FILE --decorations FILE [-o text|json]`: which decorations
// apply to the pod, in which order and at which revision, and why each other one does not
// (namespace, selector, deletion, group, already applied).
import type { Command } from "./command.ts";
import { explain as explainRun, formatExplanation } from "./explanation.ts";
import { decorationRun } from "./render-options.ts";

export const EXPLAIN_USAGE = "usage: pod-decorator explain --pod FILE --decorations FILE [-o text|json]";

export const explain: Command = async (args, io) => {
  const run = await decorationRun(args, io, { usage: EXPLAIN_USAGE, outputs: ["text", "json"], withExplainFlag: false });
  const explanation = explainRun(run.pod, run.decorations, run.result);
  io.stdout(run.output === "json" ? `${JSON.stringify(explanation, null, 2)}\n` : formatExplanation(explanation));
  return 0;
};
