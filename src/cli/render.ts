// `pod-decorator render --pod FILE --decorations FILE [-o yaml|json] [--explain]`: renders the
// decorations into the pod offline. Standard output carries the pod only, so it can be piped
// into `kubectl apply -f -`; warnings and the explanation go to standard error.
import { stringify } from "yaml";
import type { Command } from "./command.ts";
import { explain, formatExplanation } from "./explanation.ts";
import { decorationRun } from "./render-options.ts";

export const RENDER_USAGE = "usage: pod-decorator render --pod FILE --decorations FILE [-o yaml|json] [--explain]";

export const render: Command = async (args, io) => {
  const run = await decorationRun(args, io, { usage: RENDER_USAGE, outputs: ["yaml", "json"], withExplainFlag: true });
  io.stdout(run.output === "json" ? `${JSON.stringify(run.result.pod, null, 2)}\n` : stringify(run.result.pod, { lineWidth: 0 }));
  if (run.explain) io.stderr(formatExplanation(explain(run.pod, run.decorations, run.result)));
  else for (const warning of run.result.warnings) io.stderr(`Warning: ${warning}\n`);
  return 0;
};
