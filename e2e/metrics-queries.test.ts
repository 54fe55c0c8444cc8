// Every metric the chart's Grafana dashboard and alert rules query is one a running serve
// exports: serve leads, admits a decorated pod and reconciles its PodDecoration against the real
// control plane, and each name must have samples at /metrics (a histogram's as _bucket etc.).
import { describe, expect } from "vitest";
import { manifestObjects, renderChart } from "./helm/helm.ts";
import { renderedAlertGroups } from "./promtool/render-alerts.ts";
import { clients, eventually, test } from "./support/cluster.ts";
import { apply, decorationYaml } from "./support/collaset-world.ts";
import { startOperator, troubleLines } from "./support/operator.ts";
import { metricNames } from "./support/promql-metric-names.ts";

interface Dashboard {
  panels: { targets?: { expr: string }[] }[];
  templating: { list: { query?: { query: string } }[] };
}

async function dashboardQueries(): Promise<string[]> {
  const objects = manifestObjects(await renderChart({ namespace: "ops", values: { metrics: { grafanaDashboard: { enabled: true } } } }));
  const configMap = objects.find((object) => object.kind === "ConfigMap" && object.metadata.labels?.grafana_dashboard === "1");
  if (configMap === undefined) throw new Error("the chart rendered no dashboard ConfigMap");
  const dashboard = JSON.parse((configMap.data as Record<string, string>)["pod-decorator.json"]!) as Dashboard;
  const variables = dashboard.templating.list.flatMap((variable) => [...(variable.query?.query ?? "").matchAll(/label_values\(\s*([^,)]+)/g)].map((match) => match[1]!));
  return [...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)), ...variables];
}

async function alertQueries(): Promise<string[]> {
  const groups = (await renderedAlertGroups()) as { rules: { expr: string }[] }[];
  return groups.flatMap((group) => group.rules.map((rule) => rule.expr));
}

/** The names that have at least one sample line in an exposition. */
function sampledNames(exposition: string): Set<string> {
  return new Set(exposition.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => /^[a-zA-Z_:][\w:]*/.exec(line)?.[0] ?? ""));
}

describe("the dashboard's and alerts' queries", () => {
  test("name only metrics a running serve exports once it has led and admitted a pod", async ({ namespace, onTestFailed }) => {
    const [dashboard, alerts] = await Promise.all([dashboardQueries(), alertQueries()]);
    const dashboardNames = [...new Set(dashboard.flatMap(metricNames))].sort();
    const alertNames = [...new Set(alerts.flatMap(metricNames))].sort();
    // The scanner found the queries' metrics at all: each alert and panel reads at least one.
    expect(alerts.every((expression) => metricNames(expression).length > 0)).toBe(true);
    expect(dashboard.every((expression) => metricNames(expression).length > 0)).toBe(true);

    const operator = await startOperator({ args: ["--leader-elect", `--leader-election-id=${namespace}`] });
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    try {
      await eventually(() => Promise.resolve(operator.logs().includes('"msg":"controllers starting"') ? true : undefined), 30_000, "serve to lead");
      await apply(decorationYaml(namespace, ["log-shipper=e2e.local/sidecar:1"]));
      const core = clients().core;
      // Admitted through the webhook once its cache holds the decoration.
      const decorated = await eventually(async () => {
        const name = `web-${Date.now()}`;
        const pod = await core.createNamespacedPod({ namespace, body: { metadata: { name, labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } } });
        return pod.spec?.containers.some((container) => container.name === "log-shipper") === true ? pod : undefined;
      }, 30_000, "a pod decorated by the webhook");
      expect(decorated.metadata?.labels?.app).toBe("web");

      const wanted = [...new Set([...dashboardNames, ...alertNames])].sort();
      let missing = wanted;
      // Rollout and condition series appear once the controller has written the decoration's status.
      await eventually(async () => {
        const response = await fetch(`http://127.0.0.1:${operator.metricsPort}/metrics`);
        const exported = sampledNames(await response.text());
        missing = wanted.filter((name) => !exported.has(name));
        return missing.length === 0 ? true : undefined;
      }, 60_000, "every queried metric to have samples").catch(() => undefined);
      expect(missing).toEqual([]);
      console.log(`metrics queried: ${dashboardNames.length} by the dashboard, ${alertNames.length} by the alerts, ${wanted.length} in all, each exported`);
    } finally {
      expect(await operator.stop()).toBe(0);
    }
  });
});
