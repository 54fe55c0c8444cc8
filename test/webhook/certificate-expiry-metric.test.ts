// The serving certificate's expiry as a metric: read at each scrape, so a renewal shows at once.
import { X509Certificate } from "node:crypto";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createWebhookMetrics } from "../../src/webhook/metrics.ts";
import { selfSignedCertificates } from "../../src/webhook/serving-certificates.ts";

async function expiry(registry: Registry): Promise<number | undefined> {
  return (await registry.getSingleMetric("pod_decorator_webhook_certificate_expiry_timestamp_seconds")?.get())?.values[0]?.value;
}

describe("the serving certificate's expiry metric", () => {
  it("reports notAfter of the certificate served now, and follows a renewal", async () => {
    let now = new Date("2030-01-01T00:00:00Z");
    const certificates = await selfSignedCertificates({ hosts: ["pod-decorator.ops.svc"], certValidityDays: 30, now: () => now });
    const registry = new Registry();
    const metrics = createWebhookMetrics(registry);
    expect(await expiry(registry)).toBeUndefined();
    metrics.servingCertificate(() => certificates.current().certPem);
    const first = await expiry(registry);
    expect(first).toBe(new X509Certificate(certificates.current().certPem).validToDate.getTime() / 1000);
    expect(first! - now.getTime() / 1000).toBeGreaterThan(29 * 86400);
    now = new Date("2030-01-21T00:00:00Z");
    await certificates.renew();
    expect((await expiry(registry))! - first!).toBe(20 * 86400);
    certificates.stop();
  });
});
