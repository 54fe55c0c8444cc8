import { describe, expect, it } from "vitest";
import { evaluate, isMet, markdownTable, reportTable, type Metric, type SectionState } from "./report.ts";
import { metrics } from "./targets.ts";

const latency: Metric = { path: "webhook.p99Ms", measures: "p99", target: { kind: "below", value: 5, text: "< 5 ms" }, format: (value) => `${value} ms` };
const ratio: Metric = { path: "webhook.throughputRatio", measures: "ratio", target: { kind: "atLeast", value: 0.7, text: "≥ 70%" }, format: (value, section) => `${value} of ${String(section.bare)}` };
const rps: Metric = { path: "webhook.rps", measures: "rps", format: (value) => `${value} req/s` };
const rollout: Metric = { path: "rollout.ratio", measures: "rollout", target: { kind: "atMost", value: 3, text: "within 3×" }, format: (value) => `${value}×` };
const ran = new Map<string, SectionState>([["webhook", { state: "ran" }]]);

describe("isMet", () => {
  it("treats below as strict, atMost and atLeast as inclusive", () => {
    expect([isMet({ kind: "below", value: 5, text: "" }, 4.99), isMet({ kind: "below", value: 5, text: "" }, 5)]).toEqual([true, false]);
    expect([isMet({ kind: "atMost", value: 3, text: "" }, 3), isMet({ kind: "atMost", value: 3, text: "" }, 3.01)]).toEqual([true, false]);
    expect([isMet({ kind: "atLeast", value: 0.7, text: "" }, 0.7), isMet({ kind: "atLeast", value: 0.7, text: "" }, 0.69)]).toEqual([true, false]);
  });
});

describe("evaluate", () => {
  it("says met or not met for measured values and formats them with their section", () => {
    const rows = evaluate([latency, ratio, rps], { webhook: { p99Ms: 7, throughputRatio: 0.8, rps: 1200, bare: 1500 } }, ran);
    expect(rows.map((row) => [row.measured, row.target, row.verdict])).toEqual([
      ["7 ms", "< 5 ms", "**not met**"],
      ["0.8 of 1500", "≥ 70%", "met"],
      ["1200 req/s", "—", "— (no target)"],
    ]);
  });

  it("adds the metric's caveat about this run to the verdict", () => {
    const guarded: Metric = { ...latency, caveat: (section) => (section.starved === true ? "unreliable: server starved" : undefined) };
    expect(evaluate([guarded], { webhook: { p99Ms: 3, starved: true } }, ran)[0]?.verdict).toBe("met (unreliable: server starved)");
    expect(evaluate([guarded], { webhook: { p99Ms: 3, starved: false } }, ran)[0]?.verdict).toBe("met");
  });

  it("names why a metric has no number: section not built, failed, not selected, or silent", () => {
    const states = new Map<string, SectionState>([["webhook", { state: "failed", reason: "webhook.ts exited with 1" }]]);
    expect(evaluate([rollout, latency], {}, states).map((row) => [row.measured, row.verdict])).toEqual([
      ["not measured (section not built)", "—"],
      ["not measured (section failed: webhook.ts exited with 1)", "—"],
    ]);
    expect(evaluate([latency], {}, new Map([["webhook", { state: "not selected" }]]))[0]?.measured).toBe("not measured (section not selected in this run)");
    expect(evaluate([latency], { webhook: { p99Ms: null } }, ran)[0]?.measured).toBe("not measured (missing from the section's output)");
  });

  it("flags webhook figures from a server that did not have its core, or a rate that was not reached", () => {
    const figures = (serverCpuPercent: number, rps: number) => ({ rps, p50Ms: 2, p99Ms: 4, exactP99Ms: 3.5, serverCpuPercent, serverCpuMicrosPerRequest: 300 });
    const section = (share: number, achieved: number, load = 0.5) => ({
      throughputRatio: 0.8, cpuThroughputRatio: 0.75, rps: 4000, p99Ms: 4, p99Ratio: 1.1, fixedRate: 1000, loadAverage1m: load, cpus: 2,
      decorate: { saturation: figures(99, 4000), fixedRate: figures(40, achieved) }, bare: { saturation: figures(share, 5000), fixedRate: figures(20, 1000) },
    });
    const webhookMetrics = metrics.filter((metric) => metric.path === "webhook.throughputRatio" || metric.path === "webhook.p99Ratio");
    const verdicts = (webhook: Record<string, unknown>) => evaluate(webhookMetrics, { webhook }, ran).map((row) => row.verdict);
    expect(verdicts(section(98, 1000))).toEqual(["met", "met"]);
    expect(verdicts(section(34, 1000))[0]).toBe("met (unreliable: a server got only 34% of its core at saturation, the rest went to other processes)");
    expect(verdicts(section(98, 937))[1]).toBe("met (unreliable: only 937 of 1000 req/s achieved)");
    expect(verdicts(section(98, 1000, 4.9))[1]).toBe("met (machine busy: load average 4.9 on 2 CPUs, latency includes waiting for a core)");
  });

  it("judges the fleet's section against the all-namespaced one of the same run: at most 5 % slower, each fleet server on its core", () => {
    const figures = (serverCpuPercent: number) => ({ rps: 4000, p50Ms: 2, p99Ms: 4, exactP99Ms: 3.5, serverCpuPercent, serverCpuMicrosPerRequest: 60 });
    const webhook = (slowdownPercent: number, fleetShare = 99) => ({
      throughputRatio: 0.7, cpuThroughputRatio: 0.7, p99Ratio: 1.2, decorate: { saturation: figures(99) }, decorateDistinct: { saturation: figures(99) }, bare: { saturation: figures(99) },
      decorateCluster: { saturation: figures(fleetShare) }, decorateClusterDistinct: { saturation: figures(99) },
      cluster: { throughputRatio: 0.69, cpuThroughputRatio: 0.7, p99Ratio: 1.25, slowdownPercent, cpuSlowdownPercent: 0.5, p99SlowdownPercent: 4.2 },
    });
    const slowdown = metrics.filter((metric) => metric.path === "webhook.cluster.slowdownPercent");
    expect(evaluate(slowdown, { webhook: webhook(1.4) }, ran).map((row) => [row.measured, row.verdict])).toEqual([
      ["1.4% (69.0% vs 70.0% of the bare server's req/s; by server CPU per request 0.5%; p99 ratio 1.25× vs 1.2×, 4.2% higher)", "met"],
    ]);
    expect(evaluate(slowdown, { webhook: webhook(5.1) }, ran)[0]?.verdict).toBe("**not met**");
    expect(evaluate(slowdown, { webhook: webhook(-3) }, ran)[0]?.verdict).toBe("met");
    expect(evaluate(slowdown, { webhook: webhook(1.4, 40) }, ran)[0]?.verdict).toBe("met (unreliable: a server got only 40% of its core at saturation, the rest went to other processes)");
  });

  it("reads a metric whose key walks into nested figures", () => {
    const nested: Metric = { ...ratio, path: "webhook.distinctPods.throughputRatio", format: (value) => `${value}` };
    expect(evaluate([nested], { webhook: { distinctPods: { throughputRatio: 0.42 } } }, ran)[0]?.verdict).toBe("**not met**");
    expect(evaluate([nested], { webhook: { distinctPods: 0.42 } }, ran)[0]?.measured).toBe("not measured (missing from the section's output)");
  });

  it("covers exactly the seven DESIGN §9 keys of issue 8, the flood of DESIGN §10 (issue 13) and its idle clients (issue 29), the p99 ratios (replicas and distinct pods) and 100k-pod scale and kept API connections of issue 15, and the Deployment rollout of issue 17, the largest status write of issue 30, the webhook's peak RSS of issue 32, the fleet's webhook section and 100k-pod ClusterPodDecoration of issue 38", () => {
    expect(metrics.map((metric) => metric.path)).toEqual([
      "engine.renderMicros", "webhook.throughputRatio", "webhook.distinctPods.throughputRatio", "webhook.p99Ms", "webhook.p99Ratio", "webhook.distinctPods.p99Ratio", "webhook.peakRssMiB", "webhook.rps",
      "webhook.cluster.throughputRatio", "webhook.cluster.distinctPods.throughputRatio", "webhook.cluster.p99Ratio", "webhook.cluster.distinctPods.p99Ratio",
      "webhook.cluster.slowdownPercent", "webhook.cluster.distinctPods.slowdownPercent", "webhook.cluster.peakRssMiB",
      "flood.healthzP99Ms", "flood.peakRssMiB", "flood.crashes", "flood.idleClients.realReview429s", "flood.idleClients.webhookPortHealthzP99Ms",
      "controller.statusPassMs", "controller.cacheMiB", "scale.cacheMiB", "scale.widestDecorationMs", "scale.fullPassMs", "scale.maxStatusWriteKiB",
      "scale.fleet.statusMs", "scale.fleet.statusWriteKiB", "scale.fleet.podEventMappingUs", "kubeClient.wallRatio", "rollout.ratio", "rollout.deploymentRatio",
    ]);
  });
});

describe("markdownTable", () => {
  it("writes a header, a separator and one line per row, escaping pipes", () => {
    expect(markdownTable(["a", "b"], [["1", "x|y"]])).toBe("| a | b |\n| --- | --- |\n| 1 | x\\|y |");
  });

  it("lays out the report with one row per metric", () => {
    const table = reportTable(evaluate([latency], { webhook: { p99Ms: 3 } }, ran));
    expect(table.split("\n")).toEqual([
      "| metric | what it measures | measured | DESIGN §9 target | verdict |",
      "| --- | --- | --- | --- | --- |",
      "| `webhook.p99Ms` | p99 | 3 ms | < 5 ms | met |",
    ]);
  });
});
