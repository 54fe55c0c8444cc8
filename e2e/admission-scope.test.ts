// Issue 29: the pod webhook's scope holds no way out for a pod author, and the rollout believes
// exactly what the webhook does (DESIGN §10, "Scope is one definition"). On the real control
// plane, and on the real node (the `node` project runs admission-*.test.ts too):
// - a pod whose managedFields nest deeper than any object (they are the API server's, and a
//   client may send its own) is decorated, and its forged bookkeeping replaced;
// - a pod admitted undecorated because its namespace had opted out is not evicted while the
//   webhook is still not called for that namespace (its replacement would come back the same),
//   and is evicted as soon as the namespace opts back in (its replacement will be decorated);
// - a pod carrying pod-decorator's own labels in a tenant's namespace is decorated;
// - a pod a selecting decoration cannot be rendered into (only a hand-made review sends one)
//   is that decoration's failure, as --on-decoration-error says, never a silent skip.
import { request } from "node:https";
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { testImage } from "./node/test-images.ts";
import { apply, decorationYaml, REVISIONS } from "./support/collaset-world.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import { decorationStatus, whyNotMoving, workloadStatus } from "./support/deployment-world.ts";
import { serviceAccountIdentity } from "./support/identities.ts";
import { startKubelet, type Kubelet } from "./support/kubelet.ts";
import { startOperator, type Operator } from "./support/operator.ts";
import { waitForAdmission } from "./support/webhook-routes.ts";

const v1 = [`log-shipper=${testImage("sidecar")}`];
const WEB = { app: "web" };
const INJECTION = "poddecoration.kusionstack.io/injection";

let kubelet: Kubelet;
let operator: Operator;
beforeAll(async () => {
  kubelet = await startKubelet();
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
  await kubelet.stop();
});

function containerNames(pod: V1Pod): string[] {
  return (pod.spec?.containers ?? []).map((container) => container.name);
}

describe("a pod's managedFields", () => {
  test("however deep, neither keep a decoration out nor let forged bookkeeping stay", async ({ namespace }) => {
    await apply(decorationYaml(namespace, v1));
    await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
    // Deeper than the webhook's nesting limit (100 levels): a pod author's managedFields entry.
    let fields: Record<string, unknown> = { ".": {} };
    for (let level = 0; level < 150; level++) fields = { [`f:level${level}`]: fields };
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "deep-fields",
        labels: { ...WEB, "poddecoration.kusionstack.io/pd-logging": "logging-forged" },
        annotations: { [REVISIONS]: '[{"name":"logging","revision":"logging-forged"}]' },
        managedFields: [{ manager: "pod-author", operation: "Update", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: fields }],
      },
      spec: { automountServiceAccountToken: false, terminationGracePeriodSeconds: 1, containers: [{ name: "app", image: testImage("app") }] },
    };
    // As the app team: serve's own identity is the run's cluster-admin, whose bookkeeping counts.
    const author = await serviceAccountIdentity(namespace, "app-team", [{ apiGroups: [""], resources: ["pods"], verbs: ["create", "get"] }]);
    const created = await kubectl(["create", `--kubeconfig=${author.kubeconfigPath}`, "-n", namespace, "-o", "json", "--show-managed-fields", "-f", "-"], JSON.stringify(pod));
    expect(created.code, created.stderr).toBe(0);
    const stored = JSON.parse(created.stdout) as V1Pod;
    // The API server kept the author's entry: the webhook saw it.
    expect(stored.metadata?.managedFields?.some((entry) => entry.manager === "pod-author")).toBe(true);
    expect(containerNames(stored), created.stderr).toEqual(["log-shipper", "app"]);
    expect(stored.metadata?.labels?.["poddecoration.kusionstack.io/pd-logging"]).not.toBe("logging-forged");
    expect(JSON.parse(stored.metadata?.annotations?.[REVISIONS] ?? "[]")).toEqual([{ name: "logging", revision: stored.metadata?.labels?.["poddecoration.kusionstack.io/pd-logging"] }]);
  });
});

describe("a pod admitted undecorated in a namespace that had opted out", () => {
  test("is not evicted while the webhook is not called for its namespace, and is once it is", async ({ namespace }) => {
    const { core } = clients();
    const label = async (change: string) => {
      const result = await kubectl(["label", "namespace", namespace, change, "--overwrite"]);
      expect(result.code, result.stderr).toBe(0);
    };
    await label(`${INJECTION}=disabled`);
    await core.createNamespacedPod({
      namespace,
      body: { metadata: { name: "web-0", labels: WEB }, spec: { automountServiceAccountToken: false, terminationGracePeriodSeconds: 1, containers: [{ name: "app", image: testImage("app") }] } },
    });
    await eventually(async () => ((await core.readNamespacedPodStatus({ namespace, name: "web-0" })).status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") ? true : undefined), 60_000, "web-0 ready");
    const uid = (await core.readNamespacedPod({ namespace, name: "web-0" })).metadata?.uid;
    // Adding a sidecar needs a new pod: the decoration asks for eviction.
    await apply(decorationYaml(namespace, v1, { recreatePolicy: "Evict" }));

    const blocked = await decorationStatus(namespace, (decoration) => {
      const why = whyNotMoving(workloadStatus(decoration, "Pod", "web-0"));
      return why.includes("web-0") ? why : undefined;
    }, "the bare pod reported blocked");
    expect(blocked).toMatch(/the webhook is not called for pods in namespace .* so it is not evicted: its replacement would not be decorated either/);
    expect((await core.readNamespacedPod({ namespace, name: "web-0" })).metadata?.uid).toBe(uid);

    // The namespace opts back in: the webhook will decorate a replacement, so the rollout evicts.
    await label(`${INJECTION}-`);
    await eventually(async () => {
      const pod = await core.readNamespacedPod({ namespace, name: "web-0" }).catch(() => undefined);
      return pod === undefined || pod.metadata?.uid !== uid || pod.metadata?.deletionTimestamp !== undefined ? true : undefined;
    }, 60_000, "web-0 evicted once its namespace opted back in");
  });
});

describe("a pod carrying pod-decorator's own labels in a tenant namespace", () => {
  test("is decorated like any other: no label is a way out", async ({ namespace }) => {
    await apply(decorationYaml(namespace, v1));
    await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
    const pod = { metadata: { generateName: "sneaky-", labels: { ...WEB, "app.kubernetes.io/name": "pod-decorator", "app.kubernetes.io/instance": "pod-decorator" } }, spec: { containers: [{ name: "app", image: testImage("app") }] } };
    const created = await clients().core.createNamespacedPod({ namespace, body: pod, dryRun: "All" });
    expect(containerNames(created)).toEqual(["log-shipper", "app"]);
  });
});

/** A hand-made AdmissionReview of a pod the engine cannot render into (env is not a list), sent straight to a serve's webhook port. */
function unrenderableReview(port: number, namespace: string): Promise<{ allowed: boolean; message?: string; warnings?: string[] }> {
  const review = JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "4f6c6d1e-0000-4000-8000-0000000000aa",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      operation: "CREATE",
      namespace,
      userInfo: { username: "jane" },
      object: { metadata: { name: "odd", labels: WEB }, spec: { containers: [{ name: "app", image: "app:1", env: {} }] } },
    },
  });
  return new Promise((resolve, reject) => {
    const call = request({ host: "127.0.0.1", port, path: "/mutate-pods", method: "POST", rejectUnauthorized: false, headers: { "content-type": "application/json" }, agent: false }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => {
        const answer = (JSON.parse(body) as { response: { allowed: boolean; status?: { message?: string }; warnings?: string[] } }).response;
        resolve({ allowed: answer.allowed, ...(answer.status?.message === undefined ? {} : { message: answer.status.message }), ...(answer.warnings === undefined ? {} : { warnings: answer.warnings }) });
      });
    });
    call.on("error", reject);
    call.end(review);
  });
}

describe("a pod a selecting decoration cannot be rendered into", () => {
  // Last in the file: the second serve takes the webhook configurations over while it runs.
  test("is that decoration's failure: refused under reject, admitted undecorated with the reason under admit", async ({ namespace }) => {
    await apply(decorationYaml(namespace, v1));
    await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
    const refused = await unrenderableReview(operator.port, namespace);
    expect(refused.allowed).toBe(false);
    expect(refused.message).toMatch(new RegExp(`^pod-decorator: PodDecoration ${namespace}/logging: selects the pod but cannot be rendered into it: spec\\.containers\\[0\\]: env is not a list`));
    const admitting = await startOperator({ args: ["--on-decoration-error=admit"] });
    try {
      // Its cache may not hold the decoration yet: until it does, the pod is merely not decorated.
      const admitted = await eventually(async () => {
        const answer = await unrenderableReview(admitting.port, namespace);
        return answer.warnings?.some((warning) => warning.includes("selects the pod")) === true ? answer : undefined;
      }, 30_000, "the admitting serve to judge the pod against the decoration");
      expect(admitted.allowed).toBe(true);
      expect(admitted.warnings?.[0]).toMatch(/selects the pod but cannot be rendered into it: .*; the pod was admitted undecorated$/);
    } finally {
      expect(await admitting.stop()).toBe(0);
    }
  });
});
