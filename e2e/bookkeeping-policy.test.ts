// Issues 30 and 37: the chart's ValidatingAdmissionPolicy on the real API server. A pod author (a
// ServiceAccount allowed to patch its pods) cannot rewrite a live pod's decoration bookkeeping,
// the PodOpsLifecycle labels of pod-decorator's operations and those its lifecycle controller
// grants, through pods or pods/status, nor set a sidecar a decoration injected back to another
// image; any other label, and its own containers, are theirs; the controller's ServiceAccount
// (the one the chart renders the policy for) may change them all.
import { afterAll, beforeAll, describe, expect } from "vitest";
import { manifestObjects, renderChart, type KubeManifest } from "./helm/helm.ts";
import { eventually, kubectl, test } from "./support/cluster.ts";
import { serviceAccountIdentity, type Identity } from "./support/identities.ts";

const REVISIONS = "poddecoration.kusionstack.io/revisions";
const INJECTED = "poddecoration.kusionstack.io/injected-containers";
const POD_RULES = [{ apiGroups: [""], resources: ["pods", "pods/status"], verbs: ["create", "get", "patch", "update"] }];

let policy: KubeManifest[];

/** The chart's policy and binding, for a release whose controller is `controller` in `namespace`. */
async function chartPolicy(namespace: string, controller: string): Promise<KubeManifest[]> {
  const objects = manifestObjects(await renderChart({ namespace, release: "bookkeeping-e2e", values: { serviceAccount: { name: controller } } }));
  return objects.filter((object) => object.kind === "ValidatingAdmissionPolicy" || object.kind === "ValidatingAdmissionPolicyBinding");
}

async function applyObjects(objects: readonly KubeManifest[]): Promise<void> {
  const applied = await kubectl(["apply", "--server-side", "--field-manager=pod-decorator-e2e", "-f", "-"], objects.map((object) => JSON.stringify(object)).join("\n"));
  expect(applied.code, applied.stderr).toBe(0);
}

afterAll(async () => {
  if (policy !== undefined) for (const object of policy) await kubectl(["delete", object.kind.toLowerCase(), object.metadata.name, "--ignore-not-found"]);
});

describe("the chart's bookkeeping policy", () => {
  let controller: Identity;
  let author: Identity;
  let namespace: string;
  beforeAll(async () => {
    namespace = `bookkeeping-${Date.now().toString(36)}`;
    expect((await kubectl(["create", "namespace", namespace])).code).toBe(0);
    controller = await serviceAccountIdentity(namespace, "pod-decorator", POD_RULES);
    author = await serviceAccountIdentity(namespace, "app-team", POD_RULES);
    policy = await chartPolicy(namespace, "pod-decorator");
    expect(policy.map((object) => object.kind).sort()).toEqual(["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]);
    await applyObjects(policy);
  });
  afterAll(async () => {
    await kubectl(["delete", "namespace", namespace, "--wait=false"]);
  });

  /** A JSON merge patch of pod web-0's metadata by `who`, through pods or pods/status: the refusal's text, or "" when allowed. */
  const patch = async (who: Identity, metadata: object, subresource?: "status") => {
    const result = await kubectl([
      "patch", "pod", "web-0", `--kubeconfig=${who.kubeconfigPath}`, "-n", namespace, "--type=merge", "-p", JSON.stringify({ metadata }),
      ...(subresource === undefined ? [] : ["--subresource", subresource]),
    ]);
    return result.code === 0 ? "" : result.stderr;
  };

  test("refuses a pod author's rewrite of the revisions annotation, the pd-* labels and our lifecycle labels, and lets the controller make it", async () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "web-0",
        labels: { app: "web", "poddecoration.kusionstack.io/pd-logging": "logging-r1" },
        annotations: { [REVISIONS]: '[{"name":"logging","revision":"logging-r1"}]', [INJECTED]: "log-shipper" },
      },
      spec: { containers: [{ name: "log-shipper", image: "e2e.local/sidecar:2" }, { name: "app", image: "e2e.local/app:1" }] },
    };
    const created = await kubectl(["create", `--kubeconfig=${controller.kubeconfigPath}`, "-n", namespace, "-f", "-"], JSON.stringify(pod));
    expect(created.code, created.stderr).toBe(0);

    // The API server loads a new policy after a moment: wait until it refuses a change of a
    // probe label of ours (a new value each time, so an early success proves nothing).
    let attempt = 0;
    await eventually(async () => ((await patch(author, { labels: { "poddecoration.kusionstack.io/pd-probe": String(++attempt) } })) === "" ? undefined : true), 30_000, "the policy in force")
      .catch(async (error: unknown) => {
        const status = await kubectl(["get", "validatingadmissionpolicy", policy[0]!.metadata.name, "-o", "jsonpath={.status}"]);
        throw new Error(`${String(error)}; the policy's status: ${status.stdout}`);
      });
    const pinned = { labels: { "poddecoration.kusionstack.io/pd-logging": "logging-r2" }, annotations: { [REVISIONS]: '[{"name":"logging","revision":"logging-r2"}]' } };
    const refusal = await patch(author, pinned);
    expect(refusal).toContain("pod-decorator");
    // Nothing of the pin was stored: the refusal came before the write.
    const stored = await kubectl(["get", "pod", "web-0", "-n", namespace, "-o", "jsonpath={.metadata.labels.poddecoration\\.kusionstack\\.io/pd-logging}"]);
    expect(stored.stdout).toBe("logging-r1");

    for (const [what, metadata] of [
      ["the annotation alone", { annotations: { [REVISIONS]: "[]" } }],
      ["a pd-* label removed", { labels: { "poddecoration.kusionstack.io/pd-logging": null } }],
      ["a pd-* label added", { labels: { "poddecoration.kusionstack.io/pd-other": "other-r1" } }],
      ["our lifecycle marked done", { labels: { "operated.podopslifecycle.kusionstack.io/collaset": "1" } }],
      ["a decoration rollout's lifecycle started", { labels: { "operating.podopslifecycle.kusionstack.io/poddecoration": "1" } }],
      ["an operation permitted", { labels: { "operation-permission.podopslifecycle.kusionstack.io/update": "1" } }],
      ["the pod marked service-available", { labels: { "podopslifecycle.kusionstack.io/service-available": "1" } }],
      ["the injected containers' record rewritten", { annotations: { [INJECTED]: "" } }],
    ] as [string, object][]) {
      expect(await patch(author, metadata), what).not.toBe("");
      expect(await patch(author, metadata, "status"), `${what}, through pods/status`).not.toBe("");
    }
    // A sidecar a decoration injected keeps its image (kubectl set image, as issue 37 tried it).
    const setImage = (who: Identity, container: string, image: string) =>
      kubectl(["set", "image", `--kubeconfig=${who.kubeconfigPath}`, "-n", namespace, "pod/web-0", `${container}=${image}`]);
    const reverted = await setImage(author, "log-shipper", "e2e.local/sidecar:1");
    expect(reverted.code).not.toBe(0);
    expect(reverted.stderr).toContain("containers log-shipper: injected by pod-decorator decorations");
    // Everything else on the pod is the author's: its own container's image, its labels and annotations.
    const own = await setImage(author, "app", "e2e.local/app:2");
    expect(own.code, own.stderr).toBe(0);
    expect(await patch(author, { labels: { tier: "gold" }, annotations: { "team.example.com/owner": "a" } })).toBe("");
    expect(await patch(author, { labels: { "operated.podopslifecycle.kusionstack.io/someone-elses-operation": "1" } })).toBe("");
    // The controller's ServiceAccount moves the pod on.
    expect(await patch(controller, pinned)).toBe("");
    expect(await patch(controller, { labels: { "operated.podopslifecycle.kusionstack.io/collaset": "1" } }, "status")).toBe("");
    expect(await patch(controller, { labels: { "podopslifecycle.kusionstack.io/service-available": "1" } }, "status")).toBe("");
    const rolledOut = await setImage(controller, "log-shipper", "e2e.local/sidecar:3");
    expect(rolledOut.code, rolledOut.stderr).toBe(0);
  });
});
