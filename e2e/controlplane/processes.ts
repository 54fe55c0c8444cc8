// Processes the e2e fixtures start (control plane, node): each in its own process group with
// its output in a log file, waited for until ready, stopped by pid only when the pid is still
// the process we started.
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createServer, type AddressInfo, type Server } from "node:net";
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

/**
 * Ports for servers the fixtures and tests start, free when chosen, for the caller to pass on.
 * They come from below the kernel's ephemeral range (ip_local_port_range), where no outgoing
 * connection takes its local port: a port picked by binding port 0 comes from that range, and a
 * client connection of any process on the machine could take it before the server binds it
 * (seen: serve's metrics port, taken between choosing and binding). Held all at once while
 * choosing, so one call never returns a port twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const [low, high] = ephemeralPorts();
  const servers: Server[] = [];
  try {
    for (let attempt = 0; servers.length < count; attempt++) {
      if (attempt >= 200) throw new Error(`no ${count} free ports found below the ephemeral range (${low}-${high})`);
      const port = FIRST_CHOSEN_PORT + Math.floor(Math.random() * (Math.min(low, NODE_PORTS_START) - FIRST_CHOSEN_PORT));
      const server = await bound(port);
      if (server !== undefined) servers.push(server);
    }
    return servers.map((server) => (server.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
  }
}

export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/** Ports below this are left to well-known services. */
const FIRST_CHOSEN_PORT = 10_000;
/** Kubernetes' default NodePort range starts here: left to Services. */
const NODE_PORTS_START = 30_000;

function ephemeralPorts(): [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (low !== undefined && high !== undefined && low > FIRST_CHOSEN_PORT + 1_000) return [low, high];
  } catch {
    // Not Linux: the usual range.
  }
  return [32_768, 60_999];
}

/** A server listening on 127.0.0.1:port, or undefined when the port is taken. */
function bound(port: number): Promise<Server | undefined> {
  return new Promise((done) => {
    const server = createServer();
    server.once("error", () => done(undefined));
    server.listen(port, "127.0.0.1", () => done(server));
  });
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
