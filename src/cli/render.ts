// `pod-decorator render --pod FILE --decorations FILE [-o yaml|json] [--explain]`: renders the
// decorations into the pod offline. Standard output carries the pod only, so it can be piped
// into `kubectl apply -f -`; warnings and the explanation go to standard error.
import type { Command } from "./command.ts";
import { explain, formatExplanation } from "./explanation.ts";
import { decorationRun } from "./render-options.ts";
import { toYaml } from "./yaml-output.ts";

export const RENDER_USAGE = "usage: pod-decorator render --pod FILE --decorations FILE [-o yaml|json] [--explain]";

export const render: Command = async (args, io) => {
  const run = await decorationRun(args, io, { usage: RENDER_USAGE, outputs: ["yaml", "json"], withExplainFlag: true });
  io.stdout(run.output === "json" ? `${JSON.stringify(run.result.pod, null, 2)}\n` : toYaml(run.result.pod));
  if (run.explain) io.stderr(formatExplanation(explain(run.pod, run.decorations, run.result, run.unselecting)));
  else for (const warning of run.result.warnings) io.stderr(`Warning: ${warning}\n`);
  return 0;
};
