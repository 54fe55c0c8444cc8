// The golden render cases through the HTTP handler: the API server's view. For every case that
// renders, the JSON Patch the pod webhook returns, applied to the pod, must give expected.yaml,
// with the render's warnings in the response; a pod that already records its revisions is left
// alone when the controller creates it (DESIGN §5), and so is the decorated pod sent again by it.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import jsonpatch from "fast-json-patch";
import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Pod } from "../../src/api/pod.ts";
import { type DecorationManifests, decorationsForNamespace, loadDecorations, loadPod } from "../../src/cli/manifests.ts";
import { REVISIONS_ANNOTATION } from "../../src/decoration/recording.ts";
import { DEFAULT_NAMESPACE } from "../../src/decoration/selection.ts";
import type { AdmissionReviewResponse } from "../../src/webhook/admission-review.ts";
import { createWebhookMetrics } from "../../src/webhook/metrics.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustUsernames } from "../../src/webhook/requester-trust.ts";
import { createWebhookServer } from "../../src/webhook/server.ts";

const CONTROLLER = "system:serviceaccount:pod-decorator-system:pod-decorator";

const ROOT = fileURLToPath(new URL("../fixtures/render/", import.meta.url));
const cases = readdirSync(ROOT, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, entry.name, "expected.yaml")))
  .map((entry) => entry.name)
  .sort();

async function webhook(manifests: DecorationManifests) {
  return createWebhookServer({
    logger: pino({ level: "silent" }),
    metrics: createWebhookMetrics(new Registry()),
    readiness: () => ({ ready: true }),
    handlers: {
      "mutate-pods": podMutation({
        source: {
          decorations: (namespace) => decorationsForNamespace(manifests, namespace).decorations.filter((pd) => (pd.metadata.namespace ?? DEFAULT_NAMESPACE) === namespace),
          revisionData: () => undefined,
        },
        onDecorationError: "reject",
        trustRequester: trustUsernames([CONTROLLER]),
      }),
    },
  });
}

async function admit(app: Awaited<ReturnType<typeof webhook>>, pod: Pod, username: string): Promise<{ pod: Pod; response: AdmissionReviewResponse["response"] }> {
  const reply = await app.inject({
    method: "POST",
    url: "/mutate-pods",
    payload: {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: { uid: "golden", kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE", namespace: pod.metadata?.namespace ?? DEFAULT_NAMESPACE, object: pod, userInfo: { username } },
    },
  });
  expect(reply.statusCode).toBe(200);
  const { response } = reply.json<AdmissionReviewResponse>();
  expect(response.uid).toBe("golden");
  expect(response.allowed, JSON.stringify(response.status)).toBe(true);
  const patch = response.patch === undefined ? [] : (JSON.parse(Buffer.from(response.patch, "base64").toString()) as jsonpatch.Operation[]);
  return { pod: jsonpatch.applyPatch(structuredClone(pod), patch, true, false).newDocument, response };
}

describe("golden render cases through the pod webhook", () => {
  it("has cases", () => {
    expect(cases.length).toBeGreaterThan(20);
  });

  it.each(cases)("%s", async (name) => {
    const dir = join(ROOT, name);
    const pod = loadPod(readFileSync(join(dir, "pod.yaml"), "utf8"), "pod.yaml");
    const decorations = loadDecorations(readFileSync(join(dir, "decorations.yaml"), "utf8"), "decorations.yaml");
    const app = await webhook(decorations);
    // Decorated as any workload's pod is; one that records revisions as the controller's would be.
    const recorded = pod.metadata?.annotations?.[REVISIONS_ANNOTATION] !== undefined;
    const first = await admit(app, pod, recorded ? CONTROLLER : "system:serviceaccount:kube-system:replicaset-controller");

    if (recorded) {
      expect(first.response.patch).toBeUndefined();
      expect(first.pod).toEqual(pod);
    } else {
      expect(first.pod).toEqual(parse(readFileSync(join(dir, "expected.yaml"), "utf8")));
      const warnings = existsSync(join(dir, "warnings.txt")) ? readFileSync(join(dir, "warnings.txt"), "utf8").split("\n").filter((line) => line !== "") : [];
      expect((first.response.warnings ?? []).map((warning) => `Warning: ${warning}`)).toEqual(warnings);
    }

    // The decorated pod again, from the controller: its bookkeeping settles it.
    const second = await admit(app, first.pod, CONTROLLER);
    expect(second.response.patch).toBeUndefined();
    expect(second.pod).toEqual(first.pod);
    await app.close();
  });
});
