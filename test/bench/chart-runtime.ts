// How the chart runs the server, read from its values.yaml (the one definition): the container's
// memory limit and its NODE_OPTIONS. The webhook benches start their servers with exactly these,
// so that what they measure is what a replica does in its container.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { parseQuantity } from "../../src/api/quantity.ts";
import { memoryLimit, type MemoryLimit } from "./memory-limit.ts";

const VALUES = new URL("../../charts/pod-decorator/values.yaml", import.meta.url);

interface ChartValues {
  resources?: { limits?: { memory?: unknown } };
  nodeOptions?: unknown;
}

const values = (): ChartValues => parse(readFileSync(VALUES, "utf8")) as ChartValues;

/** The chart's container memory limit, in bytes. */
export function chartMemoryLimitBytes(): number {
  const quantity = parseQuantity(values().resources?.limits?.memory);
  if (quantity === undefined) throw new Error("charts/pod-decorator/values.yaml sets no resources.limits.memory");
  return Number(quantity.numerator / quantity.denominator);
}

/** The container's NODE_OPTIONS (values.yaml nodeOptions); "" when the chart sets none. */
export function chartNodeOptions(): string {
  const options = values().nodeOptions;
  if (options !== undefined && options !== null && typeof options !== "string") throw new Error("charts/pod-decorator/values.yaml: nodeOptions is not a string");
  return options ?? "";
}

/** The settings a server process ran with, for the report. */
export interface ChartRuntime {
  nodeOptions: string;
  /** The memory limit it ran under (the chart's), or why it ran without one. */
  memoryLimit: { mib: number; cgroup: "v1" | "v2" } | { unavailable: string };
}

export interface ChartProcess {
  child: ChildProcess & { pid: number };
  runtime: ChartRuntime;
  /** Times the kernel killed it for memory. */
  oomKills(): number;
  /** Removes its memory cgroup once it has exited. */
  remove(): void;
}

/**
 * `command args…` (which runs node) started as the chart's container runs it: NODE_OPTIONS from
 * the chart, and inside a memory cgroup of its own limited to the chart's memory limit.
 */
export function spawnAsChartRuns(command: string, args: readonly string[], name: string): ChartProcess {
  const limited = memoryLimit(chartMemoryLimitBytes(), `${name}-${process.pid}-${String(serial++)}`);
  const limit: MemoryLimit | undefined = "unavailable" in limited ? undefined : limited;
  const [file, argv] = limit === undefined ? [command, [...args]] : limit.wrap(command, args);
  const nodeOptions = chartNodeOptions();
  const child = spawn(file, argv, { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, NODE_OPTIONS: nodeOptions } });
  if (child.pid === undefined) throw new Error(`${command} did not start`);
  return {
    child: child as ChildProcess & { pid: number },
    runtime: { nodeOptions, memoryLimit: "unavailable" in limited ? limited : { mib: Math.round(limited.bytes / 1048576), cgroup: limited.cgroup } },
    oomKills: () => limit?.oomKills() ?? 0,
    remove: () => limit?.remove(),
  };
}

let serial = 0;

/** A process's resident memory now (VmRSS) or its peak so far (VmHWM), in MiB. */
export function residentMiB(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Math.round(Number(match?.[1] ?? 0) / 1024);
}

/** A process's peak resident memory so far (VmHWM), in MiB. */
export function peakRssMiB(pid: number): number {
  return residentMiB(pid, "VmHWM");
}
