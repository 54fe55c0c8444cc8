// `make bench`: runs every section of sections.ts one after another, each in its own process,
// writes bench-results.json (every DESIGN §9 metric key, null when not measured, plus each
// section's detail and the conditions of the run) and prints the comparison with DESIGN §9
// as a Markdown table. Exits 1 when a section failed; a missed target is a result, not a failure.
//   node test/bench/run.ts [--only KEY]...       (BENCH_SECONDS: seconds per webhook measurement)
import { spawn, spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { evaluate, notMeasuredReason, reportTable, splitPath, valueAt, type Results, type SectionState } from "./report.ts";
import { sections, type BenchSection } from "./sections.ts";
import { metrics } from "./targets.ts";

const resultsPath = fileURLToPath(new URL("../../bench-results.json", import.meta.url));
const hasTaskset = spawnSync("taskset", ["--version"]).status === 0;

interface SectionRun {
  key: string;
  title: string;
  seconds: number;
  /** 1-minute load average when the section started (the machine is shared). */
  loadAverage1m: number;
  pinnedTo: string | null;
  error?: string;
}

function runSection(section: BenchSection): Promise<Record<string, unknown>> {
  const script = fileURLToPath(new URL(`./${section.script}`, import.meta.url));
  const pin = section.cpus !== undefined && hasTaskset;
  const command = pin ? "taskset" : process.execPath;
  const args = [...(pin ? ["-c", section.cpus!, process.execPath] : []), script, ...(section.args ?? [])];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code !== 0) {
        reject(new Error(`${section.script} exited with ${code ?? signal}`));
        return;
      }
      const last = stdout.trim().split("\n").at(-1) ?? "";
      try {
        const parsed = JSON.parse(last) as unknown;
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not a JSON object");
        resolve(parsed as Record<string, unknown>);
      } catch (error) {
        reject(new Error(`${section.script} did not end with a JSON object (${error instanceof Error ? error.message : String(error)})`));
      }
    });
  });
}

const only = process.argv.flatMap((argument, index) => (process.argv[index - 1] === "--only" ? [argument] : []));
const selected = only.length === 0 ? sections : sections.filter((section) => only.includes(section.key));
const results: Results = {};
const states = new Map<string, SectionState>(sections.filter((section) => !selected.includes(section)).map((section) => [section.key, { state: "not selected" }]));
const runs: SectionRun[] = [];
const startedAt = new Date();
const loadAtStart = loadavg();

for (const section of selected) {
  const loadAverage1m = loadavg()[0]!;
  console.error(`bench: ${section.title} (${section.script}; load average ${loadAverage1m.toFixed(2)})`);
  const started = performance.now();
  const run: SectionRun = { key: section.key, title: section.title, seconds: 0, loadAverage1m, pinnedTo: section.cpus !== undefined && hasTaskset ? `taskset -c ${section.cpus}` : null };
  try {
    const output = await runSection(section);
    results[section.key] = { ...results[section.key], ...output };
    if (states.get(section.key)?.state !== "failed") states.set(section.key, { state: "ran" });
  } catch (error) {
    run.error = error instanceof Error ? error.message : String(error);
    states.set(section.key, { state: "failed", reason: run.error });
    console.error(`bench: ${section.title} failed: ${run.error}`);
  }
  run.seconds = Math.round((performance.now() - started) / 100) / 10;
  runs.push(run);
}

// Every metric key is present: null where it was not measured, with the reason beside it.
for (const metric of metrics) {
  const { section, key } = splitPath(metric.path);
  if (valueAt(results, metric.path) !== undefined) continue;
  results[section] = { ...results[section], [key]: null, notMeasured: notMeasuredReason(states.get(section) ?? { state: "not built" }) };
}

const run = {
  startedAt: startedAt.toISOString(),
  finishedAt: new Date().toISOString(),
  node: process.version,
  cpus: availableParallelism(),
  loadAverage: { atStart: loadAtStart, atEnd: loadavg() },
  sections: runs,
};
await writeFile(resultsPath, `${JSON.stringify({ ...results, run }, null, 2)}\n`);

const rows = evaluate(metrics, results, states);
console.log(`## make bench — ${run.finishedAt}\n`);
console.log(`Node ${run.node}, ${run.cpus} CPUs; 1-minute load average ${loadAtStart[0]!.toFixed(2)} at start, ${run.loadAverage.atEnd[0]!.toFixed(2)} at end (per section: ${runs.map((item) => `${item.key} ${item.loadAverage1m.toFixed(2)}`).join(", ")}).\n`);
console.log(reportTable(rows));
console.log(`\nDetail: ${resultsPath}`);
process.exitCode = runs.some((item) => item.error !== undefined) ? 1 : 0;
