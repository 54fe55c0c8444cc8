// One webhook server for the load benchmark, in its own process so that it has a core to
// itself: `decorate` is the real pod webhook over the typical 50 decorations; `bare` is the
// same stack answering the same AdmissionReview with `allowed: true` and no patch.
// Prints {"port": N, "healthPort": N, "ca": PEM} on stdout once listening; stops on SIGTERM.
import { pino } from "pino";
import { Registry } from "prom-client";
import { allow } from "../../src/webhook/admission-review.ts";
import { createWebhookMetrics } from "../../src/webhook/metrics.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustNobody } from "../../src/webhook/requester-trust.ts";
import { startHealthServer } from "../../src/webhook/health-server.ts";
import { createWebhookServer, type AdmissionHandler } from "../../src/webhook/server.ts";
import { selfSignedCertificates } from "../../src/webhook/serving-certificates.ts";
import { typicalDecorations } from "./typical-workload.ts";

const mode = process.argv[2];
if (mode !== "decorate" && mode !== "bare") {
  console.error("usage: webhook-server.ts decorate|bare");
  process.exit(2);
}

const decorations = Object.freeze(typicalDecorations().map((pd) => Object.freeze(pd)));
const handler: AdmissionHandler = mode === "decorate"
  ? podMutation({ source: { decorations: () => decorations, revisionData: () => undefined }, onDecorationError: "reject", trustRequester: trustNobody })
  : (request) => ({ response: allow(request.uid), result: "allowed" });

const certificates = await selfSignedCertificates({ hosts: ["127.0.0.1"] });
const app = await createWebhookServer({
  logger: pino({ level: "warn" }),
  metrics: createWebhookMetrics(new Registry()),
  readiness: () => ({ ready: true }),
  handlers: { "mutate-pods": handler },
  certificates,
});
await app.listen({ host: "127.0.0.1", port: 0 });
const health = await startHealthServer({ host: "127.0.0.1", port: 0, readiness: () => ({ ready: true }) });
const address = app.server.address();
console.log(JSON.stringify({ port: typeof address === "object" && address !== null ? address.port : 0, healthPort: health.port, ca: certificates.caBundle() }));
process.once("SIGTERM", () => void Promise.all([app.close(), health.stop()]).then(() => process.exit(0)));
