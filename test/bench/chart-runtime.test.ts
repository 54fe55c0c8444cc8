import { once } from "node:events";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { chartMemoryLimitBytes, chartNodeOptions, spawnAsChartRuns } from "./chart-runtime.ts";

const values = parse(readFileSync(new URL("../../charts/pod-decorator/values.yaml", import.meta.url), "utf8")) as { nodeOptions: string };

describe("the chart's runtime settings", () => {
  it("are the chart's values: its NODE_OPTIONS and its memory limit", () => {
    expect(chartNodeOptions()).toBe(values.nodeOptions);
    expect(chartNodeOptions()).toMatch(/--max-semi-space-size=\d+/);
    expect(chartMemoryLimitBytes()).toBe(512 * 1024 * 1024);
  });

  it("start a node process with exactly the chart's NODE_OPTIONS", async () => {
    const started = spawnAsChartRuns(process.execPath, ["-e", "process.stdout.write(JSON.stringify({ options: process.env.NODE_OPTIONS }))"], "pod-decorator-chart-runtime-test");
    let output = "";
    started.child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const [code] = (await once(started.child, "exit")) as [number | null];
    started.remove();
    expect(code).toBe(0);
    expect((JSON.parse(output) as { options: string }).options).toBe(values.nodeOptions);
    expect(started.runtime.nodeOptions).toBe(values.nodeOptions);
  });
});
