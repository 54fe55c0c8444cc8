#!/usr/bin/env node
// The `pod-decorator` command: subcommand dispatch, and the one place that turns errors into
// exit codes (2 for bad input, with plain messages; 1 for anything unexpected).
import { readFile, writeFile } from "node:fs/promises";
import { text } from "node:stream/consumers";
import type { Command, CommandIO } from "./command.ts";
import { crds, CRDS_USAGE } from "./crds.ts";
import { explain, EXPLAIN_USAGE } from "./explain.ts";
import { render, RENDER_USAGE } from "./render.ts";
import { serveUsage } from "./serve-options.ts";
import { USAGE_ERROR_EXIT_CODE, UsageError } from "./usage-error.ts";

const COMMANDS: Readonly<Record<string, { run: Command; summary: string; usage: string }>> = {
  // Loaded on use: the client library and server stack would slow every offline command.
  serve: { run: async (args, io) => (await import("./serve.ts")).serve(args, io), summary: "run the admission webhooks and the controllers", usage: serveUsage },
  render: { run: render, summary: "render PodDecorations into a pod offline", usage: RENDER_USAGE },
  explain: { run: explain, summary: "show which PodDecorations apply to a pod and why the others do not (offline, or a pod or decoration in a cluster)", usage: EXPLAIN_USAGE },
  crds: { run: crds, summary: "print (or write) the CustomResourceDefinitions", usage: CRDS_USAGE },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, { summary }]) => `  ${name.padEnd(width)}  ${summary}`);
  return ["usage: pod-decorator <command> [options]", "", "commands:", ...lines, ""].join("\n");
}

export const processIO: CommandIO = {
  stdout: (output) => void process.stdout.write(output),
  stderr: (output) => void process.stderr.write(output),
  readFile: (path) => (path === "-" ? text(process.stdin) : readFile(path, "utf8")),
  writeFile: (path, content) => writeFile(path, content),
};

/** Runs the command line `args` (without node and script); resolves to the exit code. */
export async function main(args: readonly string[], io: CommandIO): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined) {
    io.stderr(usage());
    return USAGE_ERROR_EXIT_CODE;
  }
  if (name === "help" || name === "--help" || name === "-h") {
    io.stdout(usage());
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    io.stderr(`pod-decorator: unknown command ${JSON.stringify(name)}\n${usage()}`);
    return USAGE_ERROR_EXIT_CODE;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`${error.lines.join("\n")}\n`);
      return USAGE_ERROR_EXIT_CODE;
    }
    io.stderr(`pod-decorator ${name}: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2), processIO);
