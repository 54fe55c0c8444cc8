// One webhook server for the load benchmark, in its own process so that it has a core to
// itself: `decorate` is the real pod webhook over the typical 50 decorations; `decorate-cluster`
// the same with the fleet's world beside them (typical-workload.ts: in a namespace of its own,
// the five renders done by ClusterPodDecorations selecting it by label, beside 50 PodDecorations
// and 15 other ClusterPodDecorations), so that one process answers pods of both namespaces;
// both read them as serve does, from informer caches through cachedDecorationSource (with the
// ClusterDecorations index over the namespace cache). `bare` is the
// same stack answering the same AdmissionReview with `allowed: true` and no patch. Two more
// take the pod webhook's work apart (webhook.ts --breakdown), each a part of it on its own:
// `render` selects and renders with the engine (the §10 checks included) and answers with a
// fixed one-operation patch; `render-patch` also writes the JSON Patch of what was rendered.
// Neither reads null fields, checks renderability or keeps answers, as the pod webhook does.
// Prints {"port": N, "healthPort": N, "ca": PEM} on stdout once listening; stops on SIGTERM.
import { pino } from "pino";
import { Registry } from "prom-client";
import type { ClusterPodDecoration } from "../../src/api/cluster-poddecoration.ts";
import type { Pod } from "../../src/api/pod.ts";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { ClusterDecorations, type CachedClusterDecoration } from "../../src/controller/cluster-decorations.ts";
import { Cache } from "../../src/controller/runtime/cache.ts";
import { deepFreeze } from "../../src/controller/runtime/deep-freeze.ts";
import { admissionScope } from "../../src/decoration/admission-scope.ts";
import type { DecorationSource } from "../../src/decoration/updated-revisions.ts";
import type { ControllerRevision, KubeObject, Namespace } from "../../src/kube/objects.ts";
import { cachedDecorationSource } from "../../src/webhook/decoration-source.ts";
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
import { fleetWorld, NAMESPACE, namespaceObject, typicalDecorations } from "./typical-workload.ts";

const MODES = ["decorate", "decorate-cluster", "bare", "render", "render-patch"] as const;
const mode = MODES.find((known) => known === process.argv[2]);
if (mode === undefined) {
  console.error(`usage: webhook-server.ts ${MODES.join("|")}`);
  process.exit(2);
}

/** The release namespace, where ClusterPodDecorations' revisions live (none stored here: the live spec is rendered). */
const RELEASE_NAMESPACE = "pod-decorator-system";

/**
 * What serve's pod webhook reads: the namespace's PodDecorations and the ClusterPodDecorations
 * selecting it, from informer caches (frozen objects), within the chart's default scope; no
 * revision stored yet, so each decoration's live spec is rendered (once per object: memoised).
 */
function cachedSource(world: { decorations: readonly PodDecoration[]; clusterDecorations: readonly ClusterPodDecoration[]; namespaces: readonly Namespace[] }): DecorationSource {
  const decorations = new Cache<PodDecoration & KubeObject>();
  for (const pd of world.decorations) decorations.upsert(deepFreeze(structuredClone(pd) as PodDecoration & KubeObject));
  const clusterDecorations = new Cache<CachedClusterDecoration>();
  for (const cpd of world.clusterDecorations) clusterDecorations.upsert(deepFreeze(structuredClone(cpd) as CachedClusterDecoration));
  const namespaces = new Cache<Namespace>();
  for (const namespace of world.namespaces) namespaces.upsert(deepFreeze(structuredClone(namespace)));
  const revisions = new Cache<ControllerRevision & KubeObject>();
  const index = new ClusterDecorations({ decorations: clusterDecorations, namespaces, scope: admissionScope({ ownNamespace: RELEASE_NAMESPACE }) });
  return cachedDecorationSource(decorations, revisions, undefined, { decorations: index, revisions, revisionNamespace: RELEASE_NAMESPACE });
}

const decorations = Object.freeze(typicalDecorations().map((pd) => Object.freeze(pd)));
const source = { decorations: () => decorations, revisionData: () => undefined };
const podWebhook = (from: DecorationSource) => podMutation({ source: from, onDecorationError: "reject", trustRequester: trustNobody });
const handlers: Record<typeof mode, () => AdmissionHandler> = {
  decorate: () => podWebhook(cachedSource({ decorations, clusterDecorations: [], namespaces: [namespaceObject(NAMESPACE)] })),
  "decorate-cluster": () => {
    const world = fleetWorld();
    return podWebhook(cachedSource({ decorations: [...decorations, ...world.decorations], clusterDecorations: world.clusterDecorations, namespaces: [namespaceObject(NAMESPACE), world.namespace] }));
  },
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
