import { describe, expect, it } from "vitest";
import { metricNames } from "../../e2e/support/promql-metric-names.ts";

describe("metricNames", () => {
  it("finds the series an alert reads, not its functions, grouping labels, matchers or numbers", () => {
    const expression = `sum without (instance, pod, result) (rate(pod_decorator_webhook_results_total{job="pod-decorator",result=~"error|timeout"}[5m]))
      / sum without (instance, pod, result) (rate(pod_decorator_webhook_results_total{job="pod-decorator"}[5m])) > 5e-2`;
    expect(metricNames(expression)).toEqual(["pod_decorator_webhook_results_total"]);
  });

  it("reads both sides of a binary operator and a histogram's bucket series", () => {
    expect(metricNames(`histogram_quantile(0.99, sum by (webhook, le) (rate(controller_runtime_webhook_latency_seconds_bucket{job=~"$job"}[$__rate_interval])))
      and on (webhook) max(workqueue_depth) offset 5m > bool 1`)).toEqual(["controller_runtime_webhook_latency_seconds_bucket", "workqueue_depth"]);
  });

  it("keeps a name that looks like a keyword's prefix and ignores label values that look like names", () => {
    expect(metricNames(`sum(on_call_total{name="workqueue_depth"}) by (name) - time()`)).toEqual(["on_call_total"]);
  });
});
