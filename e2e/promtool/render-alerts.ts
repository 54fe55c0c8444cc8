// make test-rules: writes the chart's alert rules (its PrometheusRule's groups, rendered as a
// release "pod-decorator" in namespace "ops") as a Prometheus rule file for promtool, so the
// rules are defined once, in the chart, and tested as a user's Prometheus loads them.
import { writeFile } from "node:fs/promises";
import { stringify } from "yaml";
import { manifestObjects, renderChart } from "../helm/helm.ts";

/** The release the rule tests' input series are labelled for (job and namespace). */
export const ALERTS_RELEASE = { release: "pod-decorator", namespace: "ops" };

/** The chart's PrometheusRule spec.groups with the chart's defaults plus the rule switched on. */
export async function renderedAlertGroups(values: object = {}): Promise<unknown[]> {
  const text = await renderChart({ ...ALERTS_RELEASE, values: { metrics: { prometheusRule: { enabled: true } }, ...values } });
  const rules = manifestObjects(text).filter((object) => object.kind === "PrometheusRule");
  if (rules.length !== 1) throw new Error(`expected one PrometheusRule, the chart rendered ${rules.length}`);
  return (rules[0]!.spec as { groups: unknown[] }).groups;
}

if (import.meta.main) {
  const [output] = process.argv.slice(2);
  if (output === undefined) {
    console.error("usage: render-alerts.ts OUTPUT.yaml");
    process.exit(2);
  }
  await writeFile(output, stringify({ groups: await renderedAlertGroups() }));
}
