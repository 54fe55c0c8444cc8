// One webhook server for the load benchmark, in its own process so that it has a core to
// itself: `decorate` is the real pod webhook over the typical 50 decorations; `bare` is the
// same stack answering the same AdmissionReview with `allowed: true` and no patch. Two more
// take the pod webhook's work apart (webhook.ts --breakdown), each a part of it on its own:
// `render` selects and renders with the engine (the §10 checks included) and answers with a
// fixed one-operation patch; `render-patch` also writes the JSON Patch of what was rendered.
// Neither reads null fields, checks renderability or keeps answers, as the pod webhook does.
// Prints {"port": N, "healthPort": N, "ca": PEM} on stdout once listening; stops on SIGTERM.
import { pino } from "pino";
import { Registry } from "prom-client";
import type { Pod } from "../../src/api/pod.ts";
import { decorateReadPod } from "../../src/decoration/decorate.ts";
import { newPodRevisions } from "../../src/decoration/updated-revisions.ts";
import { allow, allowWithPatch } from "../../src/webhook/admission-review.ts";
import { createJsonPatch } from "../../src/webhook/json-patch.ts";
import { createWebhookMetrics } from "../../src/webhook/metrics.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustNobody } from "../../src/webhook/requester-trust.ts";
import { startHealthServer } from "../../src/webhook/health-server.ts";
import { createWebhookServer, type AdmissionHandler } from "../../src/webhook/server.ts";
import { selfSignedCertificates } from "../../src/webhook/serving-certificates.ts";
import { typicalDecorations } from "./typical-workload.ts";

const MODES = ["decorate", "bare", "render", "render-patch"] as const;
const mode = MODES.find((known) => known === process.argv[2]);
if (mode === undefined) {
  console.error(`usage: webhook-server.ts ${MODES.join("|")}`);
  process.exit(2);
}

const decorations = Object.freeze(typicalDecorations().map((pd) => Object.freeze(pd)));
const source = { decorations: () => decorations, revisionData: () => undefined };
const handlers: Record<typeof mode, () => AdmissionHandler> = {
  decorate: () => podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody }),
  bare: () => (request) => ({ response: allow(request.uid), result: "allowed" }),
  render: () => renderOnly(false),
  "render-patch": () => renderOnly(true),
};
const handler = handlers[mode]();

/** The engine's part of the pod webhook alone, with the patch of what it rendered or a fixed one. */
function renderOnly(withPatch: boolean): AdmissionHandler {
  const revisionFor = newPodRevisions(source);
  const fixedPatch = [{ op: "add", path: "/metadata/labels/rendered", value: "true" }];
  return (request) => {
    const pod = request.object as Pod;
    const result = decorateReadPod({ ...pod, metadata: { ...pod.metadata, namespace: request.namespace } }, decorations, revisionFor);
    const patch = withPatch ? createJsonPatch(pod, result.pod) : result.applied.length > 0 ? fixedPatch : [];
    return { response: allowWithPatch(request.uid, patch), result: "injected" };
  };
}

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
