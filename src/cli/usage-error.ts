// Errors in what the user gave the command (arguments, files, manifests): reported as plain
// lines on stderr with exit code 2, never as a stack trace.
export const USAGE_ERROR_EXIT_CODE = 2;

export class UsageError extends Error {
  readonly lines: readonly string[];

  constructor(lines: string | readonly string[]) {
    const all = typeof lines === "string" ? [lines] : [...lines];
    super(all.join("\n"));
    this.name = "UsageError";
    this.lines = all;
  }
}
