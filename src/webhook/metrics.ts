// Webhook metrics in controller-runtime's names (what existing dashboards expect),
// plus the outcome of each admission decision and what keeps the API server trusting the webhook.
import { X509Certificate } from "node:crypto";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { TRUST_REPAIR_REASONS, type TrustRepairReason } from "./webhook-trust.ts";

/** An admission decision, or why there was none: `throttled` (429 at the in-flight limits), `timeout` (the deadline passed). */
export type WebhookResult = "injected" | "skipped" | "allowed" | "rejected" | "error" | "throttled" | "timeout";

export interface WebhookMetrics {
  observe(webhook: string, code: number, result: WebhookResult, seconds: number): void;
  /** An answer given from the pod webhook's memory of recent answers (a replica of a pod it has rendered). */
  remembered(webhook: string): void;
  /** A repair of the webhook's trust (webhook-trust.ts), by the reason its Event gives. */
  trustRepaired(reason: TrustRepairReason): void;
  /** Where the serving certificate is read at every scrape, for its expiry. */
  servingCertificate(currentPem: () => string): void;
}

export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  const requests = new Counter({
    name: "controller_runtime_webhook_requests_total",
    help: "Total number of admission requests by HTTP status code.",
    labelNames: ["webhook", "code"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "controller_runtime_webhook_latency_seconds",
    help: "Histogram of the latency of processing admission requests.",
    labelNames: ["webhook"],
    // Up to 30 s, the API server's longest webhook timeout, so a p99 near any timeout is measurable.
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const results = new Counter({
    name: "pod_decorator_webhook_results_total",
    help: "Admission decisions by webhook and result (injected, skipped, allowed, rejected, error), or why none was made (throttled, timeout).",
    labelNames: ["webhook", "result"],
    registers: [registry],
  });
  const remembered = new Counter({
    name: "pod_decorator_webhook_remembered_answers_total",
    help: "Admission answers given from the pod webhook's memory of recent answers, without rendering: replicas of a pod it has rendered.",
    labelNames: ["webhook"],
    registers: [registry],
  });
  const repairs = new Counter({
    name: "pod_decorator_webhook_trust_repairs_total",
    help: "Repairs of what makes the API server trust the webhook (a caBundle set back, the CA Secret or a configuration restored), by reason.",
    labelNames: ["reason"],
    registers: [registry],
  });
  // Zero from the start, so increase() sees a first repair or remembered answer.
  for (const reason of TRUST_REPAIR_REASONS) repairs.inc({ reason }, 0);
  remembered.inc({ webhook: "mutate-pods" }, 0);
  return {
    trustRepaired(reason) {
      repairs.inc({ reason });
    },
    servingCertificate(currentPem) {
      // Registered only once there is a certificate: a label-less gauge would report 0 (long expired) before.
      // Read at scrape time, so a renewed or reloaded certificate is reported without a hook.
      new Gauge({
        name: "pod_decorator_webhook_certificate_expiry_timestamp_seconds",
        help: "When the webhook's current serving certificate expires (notAfter), in seconds since the epoch.",
        registers: [registry],
        collect() {
          this.set(new X509Certificate(currentPem()).validToDate.getTime() / 1000);
        },
      });
    },
    observe(webhook, code, result, seconds) {
      requests.inc({ webhook, code: String(code) });
      latency.observe({ webhook }, seconds);
      results.inc({ webhook, result });
    },
    remembered(webhook) {
      remembered.inc({ webhook });
    },
  };
}
