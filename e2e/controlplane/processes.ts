// Processes the e2e fixtures start (control plane, node): each in its own process group with
// its output in a log file, waited for until ready, stopped by pid only when the pid is still
// the process we started.
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export function launch(command: string, args: string[], logFile: string, env: NodeJS.ProcessEnv = process.env): number {
  const out = openSync(logFile, "a");
  // Own process group, so a stop takes any children too and a dying parent does not.
  const child = spawn(command, args, { detached: true, stdio: ["ignore", out, out], env });
  closeSync(out);
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${command} ${args[0] ?? ""}`);
  return child.pid;
}

export async function waitFor(name: string, ready: () => Promise<boolean>, pid: number | undefined, logFile: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (pid === undefined || !alive(pid)) throw new Error(`${name} exited during start-up:\n${tail(logFile)}`);
    if (await ready()) return;
    await sleep(100);
  }
  throw new Error(`${name} was not ready within 90s:\n${tail(logFile)}`);
}

export function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-30).join("\n");
  } catch {
    return "(no log)";
  }
}

export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () =>
      new Promise<ReturnType<typeof createServer>>((done, fail) => {
        const server = createServer();
        server.once("error", fail);
        server.listen(0, "127.0.0.1", () => done(server));
      }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
  return ports;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie still answers signal 0; it is not running.
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** Guards against pid reuse: only signal a process whose command line names what we started. */
export function isOurs(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
  } catch {
    return false;
  }
}

export function signal(pid: number, name: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, name);
    } catch {
      // already gone
    }
  }
}

export async function terminate(pid: number): Promise<void> {
  signal(pid, "SIGTERM");
  const deadline = Date.now() + 10_000;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  if (alive(pid)) signal(pid, "SIGKILL");
  while (alive(pid)) await sleep(20);
}

export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
