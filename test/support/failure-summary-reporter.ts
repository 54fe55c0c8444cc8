/**
 * A vitest reporter that ends the run with one line per failed test (file, name, the first line
 * of its first error). CI keeps only the tail of a run's output; this puts every failure in it.
 */
import type { Reporter, TestModule } from "vitest/node";

export default class FailureSummaryReporter implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[]): void {
    const lines: string[] = [];
    for (const testModule of testModules) {
      const moduleErrors = testModule.errors();
      if (moduleErrors.length > 0) lines.push(`${testModule.relativeModuleId}: ${firstLine(moduleErrors[0]?.message)}`);
      for (const testCase of testModule.children.allTests()) {
        const result = testCase.result();
        if (result.state !== "failed") continue;
        lines.push(`${testModule.relativeModuleId} > ${testCase.fullName}: ${firstLine(result.errors?.[0]?.message)}`);
      }
    }
    if (lines.length === 0) return;
    process.stdout.write(`\nFAILED (${String(lines.length)}):\n${lines.map((line) => `  ${line}`).join("\n")}\n`);
  }
}

function firstLine(message: string | undefined): string {
  return (message ?? "(no message)").split("\n", 1)[0]!.slice(0, 300);
}
