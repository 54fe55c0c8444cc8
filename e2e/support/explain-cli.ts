// `pod-decorator explain` as a user runs it against the test cluster, in-process (as main.ts runs
// it from the shell, with its IO injected): no Node start per call.
import { expect, inject } from "vitest";
import type { DecorationVerdict, PodReport } from "../../src/cli/live-explanation.ts";
import { main as cli, processIO } from "../../src/cli/main.ts";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `pod-decorator explain ARGS --kubeconfig=<the run's>`. */
export async function explain(args: readonly string[]): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const io = { ...processIO, stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text) };
  const code = await cli(["explain", ...args, `--kubeconfig=${inject("kubeconfig")}`], io);
  return { code, stdout, stderr };
}

/** `explain pod NAME -n NAMESPACE -o json`, which must succeed with nothing on stderr. */
export async function explainPodJson(namespace: string, pod: string): Promise<PodReport> {
  const result = await explain(["pod", pod, "-n", namespace, "-o", "json"]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as PodReport;
}

/** The report's verdict on decoration `name`, which must be there. */
export function verdict(report: PodReport, name: string): DecorationVerdict {
  const found = report.decorations.find((candidate) => candidate.name === name);
  expect(found, `a verdict for ${name}`).toBeDefined();
  return found!;
}
