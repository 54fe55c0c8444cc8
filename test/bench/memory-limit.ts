// A memory limit for a process the bench starts, as the chart's container gets one: a memory
// cgroup of its own (v1 or v2, whichever this machine mounts and lets root write), limited to the
// chart's `resources.limits.memory`. Node reads the limit when it starts and sizes its heap to it,
// so a process measured without one lets its heap grow far beyond what it would in the cluster
// (a flood measured 478 MiB unconfined and 247 MiB under 512 MiB). Where no cgroup can be made,
// the reason is given instead, and whoever reports the figure says so.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface MemoryLimit {
  bytes: number;
  /** Which cgroup version enforces it. */
  cgroup: "v1" | "v2";
  /** `command args…` started inside the cgroup, before the program runs (so it sees the limit). */
  wrap(command: string, args: readonly string[]): [string, string[]];
  /** Times the kernel killed a process of the cgroup for memory. */
  oomKills(): number;
  /** Removes the cgroup once its processes have exited. */
  remove(): void;
}

export function memoryLimit(bytes: number, name: string): MemoryLimit | { unavailable: string } {
  const v1 = "/sys/fs/cgroup/memory";
  const v2 = "/sys/fs/cgroup";
  try {
    if (existsSync(join(v1, "memory.limit_in_bytes"))) {
      const path = join(v1, name);
      mkdirSync(path, { recursive: true });
      writeFileSync(join(path, "memory.limit_in_bytes"), String(bytes));
      return limit(path, bytes, "v1", () => counter(join(path, "memory.oom_control"), "oom_kill"));
    }
    if (readFileSync(join(v2, "cgroup.controllers"), "utf8").split(/\s+/).includes("memory")) {
      const path = join(v2, name);
      mkdirSync(path, { recursive: true });
      if (!existsSync(join(path, "memory.max"))) {
        rmdirSync(path);
        return { unavailable: "the cgroup v2 root does not delegate the memory controller" };
      }
      writeFileSync(join(path, "memory.max"), String(bytes));
      return limit(path, bytes, "v2", () => counter(join(path, "memory.events"), "oom_kill"));
    }
    return { unavailable: "no memory cgroup is mounted" };
  } catch (error) {
    return { unavailable: `no memory cgroup could be made: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function limit(path: string, bytes: number, cgroup: "v1" | "v2", oomKills: () => number): MemoryLimit {
  return {
    bytes,
    cgroup,
    // The shell joins the cgroup, then becomes the command: nothing of it runs outside.
    wrap: (command, args) => ["sh", ["-c", `echo $$ > ${join(path, "cgroup.procs")} && exec "$@"`, "sh", command, ...args]],
    oomKills,
    remove: () => rmdirSync(path),
  };
}

/** The value of `key` in a flat "key value" file (memory.oom_control, memory.events); 0 when absent. */
function counter(file: string, key: string): number {
  const line = readFileSync(file, "utf8").split("\n").find((entry) => entry.startsWith(`${key} `));
  return line === undefined ? 0 : Number(line.split(" ")[1]);
}
