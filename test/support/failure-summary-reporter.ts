/**
 * A vitest reporter that ends the run with one line per project — its name, the Kubernetes
 * version its cluster ran (the e2e global setups set POD_DECORATOR_KUBERNETES_VERSION) and its
 * counts — and one line per failed test (file, name, the first line of its first error). CI keeps
 * only the tail of a run's output; this puts every failure in it. With POD_DECORATOR_TEST_SUMMARY
 * set to a file, the project lines are appended there too, so `make test` can repeat them last.
 */
import { appendFileSync } from "node:fs";
import type { Reporter, TestModule } from "vitest/node";

interface Counts {
  files: number;
  passed: number;
  failed: number;
  skipped: number;
  fileErrors: number;
}

export default class FailureSummaryReporter implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[]): void {
    const lines: string[] = [];
    const projects = new Map<string, Counts>();
    for (const testModule of testModules) {
      const name = testModule.project.name || "tests";
      const counts = projects.get(name) ?? { files: 0, passed: 0, failed: 0, skipped: 0, fileErrors: 0 };
      projects.set(name, counts);
      counts.files += 1;
      const moduleErrors = testModule.errors();
      if (moduleErrors.length > 0) {
        counts.fileErrors += 1;
        lines.push(`${testModule.relativeModuleId}: ${firstLine(moduleErrors[0]?.message)}`);
      }
      for (const testCase of testModule.children.allTests()) {
        const result = testCase.result();
        if (result.state === "passed") counts.passed += 1;
        else if (result.state === "failed") counts.failed += 1;
        else counts.skipped += 1;
        if (result.state !== "failed") continue;
        lines.push(`${testModule.relativeModuleId} > ${testCase.fullName}: ${firstLine(result.errors?.[0]?.message)}`);
      }
    }
    const version = process.env.POD_DECORATOR_KUBERNETES_VERSION;
    const summaries = [...projects].map(([name, counts]) => projectSummary(name, version, counts));
    if (lines.length > 0) process.stdout.write(`\nFAILED (${String(lines.length)}):\n${lines.map((line) => `  ${line}`).join("\n")}\n`);
    process.stdout.write(`\n${summaries.join("\n")}\n`);
    const file = process.env.POD_DECORATOR_TEST_SUMMARY;
    if (file !== undefined && file !== "") appendFileSync(file, summaries.map((line) => `${line}\n`).join(""));
  }
}

/** e.g. `e2e (Kubernetes v1.30.14): 35 files, 110 tests passed` (failures, skips and broken files when there are any). */
export function projectSummary(name: string, version: string | undefined, counts: Counts): string {
  const cluster = name === "unit" || version === undefined || version === "" ? "" : ` (Kubernetes ${version})`;
  const extra = [
    counts.failed > 0 ? `${String(counts.failed)} failed` : "",
    counts.skipped > 0 ? `${String(counts.skipped)} skipped` : "",
    counts.fileErrors > 0 ? `${String(counts.fileErrors)} files did not load` : "",
  ].filter(Boolean);
  return `${name}${cluster}: ${String(counts.files)} files, ${String(counts.passed)} tests passed${extra.length > 0 ? `, ${extra.join(", ")}` : ""}`;
}

function firstLine(message: string | undefined): string {
  return (message ?? "(no message)").split("\n", 1)[0]!.slice(0, 300);
}
