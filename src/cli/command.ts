// What a subcommand gets: its arguments and the outside world, injected so commands run
// in-process in tests exactly as from the shell.
export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Reads a file; `-` is standard input. */
  readFile(path: string): Promise<string>;
  writeFile(path: string, text: string): Promise<void>;
}

/** Runs with the arguments after the subcommand name; resolves to the exit code. Throws UsageError for bad input. */
export type Command = (args: readonly string[], io: CommandIO) => Promise<number>;
