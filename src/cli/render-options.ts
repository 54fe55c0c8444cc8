// The options `render` and `explain` share, and the decoration run both are built on.
import { parseArgs } from "node:util";
import type { Pod } from "../api/pod.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import { DEFAULT_NAMESPACE } from "../decoration/selection.ts";
import { type DecorateResult, decoratePod, liveRevision } from "../decoration/decorate.ts";
import type { CommandIO } from "./command.ts";
import { DecorationError } from "../decoration/decoration-error.ts";
import { decorationsForNamespace, loadDecorations, loadPod, type NamespaceDecorations } from "./manifests.ts";
import { UsageError } from "./usage-error.ts";

export interface DecorationRun {
  pod: Pod;
  /** What the engine was given (decorationsForNamespace). */
  decorations: PodDecoration[];
  unselecting: NamespaceDecorations["unselecting"];
  result: DecorateResult;
  output: "yaml" | "json" | "text";
  explain: boolean;
}

export interface RunOptions {
  usage: string;
  outputs: readonly ("yaml" | "json" | "text")[];
  withExplainFlag: boolean;
}

export async function decorationRun(args: readonly string[], io: CommandIO, options: RunOptions): Promise<DecorationRun> {
  const values = parse(args, options);
  const pod = loadPod(await read(io, values.pod, "--pod"), values.pod);
  const manifests = loadDecorations(await read(io, values.decorations, "--decorations"), values.decorations);
  const { decorations, unselecting } = decorationsForNamespace(manifests, pod.metadata?.namespace ?? DEFAULT_NAMESPACE);
  // Offline there are no stored revisions: every decoration renders its current spec.
  let result: DecorateResult;
  try {
    result = decoratePod(pod, decorations, liveRevision);
  } catch (error) {
    // This pod and these decorations do not go together: bad input, said plainly (exit 2).
    if (error instanceof DecorationError) throw new UsageError(error.message);
    throw error;
  }
  return { pod, decorations, unselecting, result, output: values.output, explain: values.explain };
}


function parse(args: readonly string[], options: RunOptions): { pod: string; decorations: string; output: "yaml" | "json" | "text"; explain: boolean } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: {
        pod: { type: "string" },
        decorations: { type: "string" },
        output: { type: "string", short: "o", default: options.outputs[0] },
        ...(options.withExplainFlag ? { explain: { type: "boolean", default: false } } : {}),
      },
      allowPositionals: false,
      strict: true,
    });
  } catch (error) {
    throw new UsageError([error instanceof Error ? error.message : String(error), options.usage]);
  }
  const { pod, decorations, output, explain } = parsed.values as { pod?: string; decorations?: string; output?: string; explain?: boolean };
  if (pod === undefined) throw new UsageError(["--pod FILE is required", options.usage]);
  if (decorations === undefined) throw new UsageError(["--decorations FILE is required", options.usage]);
  const format = options.outputs.find((candidate) => candidate === output);
  if (format === undefined) throw new UsageError([`-o ${output ?? ""}: supported values: ${options.outputs.join(", ")}`, options.usage]);
  return { pod, decorations, output: format, explain: explain === true };
}

async function read(io: CommandIO, path: string, flag: string): Promise<string> {
  try {
    return await io.readFile(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageError(`${flag} ${path}: ${code === "ENOENT" ? "no such file" : error instanceof Error ? error.message : String(error)}`);
  }
}
