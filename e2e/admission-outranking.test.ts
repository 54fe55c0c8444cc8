// Issue 30 item 2, on the real control plane: an app team allowed to create pods and write its
// own PodDecorations, but not to update the platform's mandatory `selector: {}` decoration,
// cannot switch it off (a heavier decoration in its exclusive group) or take over its sidecar (a
// later decoration with a container of the same name); a decoration of its own that touches
// nothing of the platform's is admitted. Granted update on that one decoration, it may.
import { afterAll, beforeAll, describe, expect } from "vitest";
import { clients, eventually, kubectl, test, type CommandResult } from "./support/cluster.ts";
import { serviceAccountIdentity, type Identity } from "./support/identities.ts";
import { startOperator, type Operator } from "./support/operator.ts";
import { waitForAdmission } from "./support/webhook-routes.ts";

const PLATFORM = "platform-mesh";
const WEB = { app: "web" };

let operator: Operator;
beforeAll(async () => {
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
});

function decoration(namespace: string, name: string, spec: object): string {
  return JSON.stringify({ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name, namespace }, spec: { selector: {}, ...spec } });
}

function createAs(identity: Identity, manifest: string): Promise<CommandResult> {
  return kubectl(["create", `--kubeconfig=${identity.kubeconfigPath}`, "-f", "-"], manifest);
}

async function exists(namespace: string, name: string): Promise<boolean> {
  const { custom } = clients();
  return custom.getNamespacedCustomObject({ group: "apps.kusionstack.io", version: "v1alpha1", plural: "poddecorations", namespace, name }).then(
    () => true,
    (error: unknown) => {
      if ((error as { code?: number }).code === 404) return false;
      throw error;
    },
  );
}

describe("an app team writing PodDecorations beside the platform's", () => {
  test("cannot out-rank the platform's decoration without update on it, may write what touches nothing of it, and may out-rank it once granted", async ({ namespace }) => {
    const platform = decoration(namespace, PLATFORM, { injectStrategy: { group: "mesh", weight: 5 }, template: { containers: [{ name: "mesh-proxy", image: "e2e.local/mesh-proxy:1" }] } });
    const created = await kubectl(["create", "-f", "-"], platform);
    expect(created.code, created.stderr).toBe(0);
    // The webhook's cache knows the platform's decoration once pods get its sidecar.
    await waitForAdmission(namespace, WEB, "mesh-proxy", "decorated");

    const appTeam = await serviceAccountIdentity(namespace, "app-team", [
      { apiGroups: [""], resources: ["pods"], verbs: ["create"] },
      { apiGroups: ["apps.kusionstack.io"], resources: ["poddecorations"], verbs: ["create", "get", "list"] },
      { apiGroups: ["apps.kusionstack.io"], resources: ["poddecorations"], verbs: ["update", "patch"], resourceNames: ["app-metrics"] },
    ]);
    const refusal = `— out-ranking a PodDecoration requires update on it, and ${appTeam.username} may not update ${namespace}/${PLATFORM}`;

    // (a) A heavier decoration in the platform's group with an empty template: it would drop the sidecar.
    const heavier = decoration(namespace, "heavier-mesh", { injectStrategy: { group: "mesh", weight: 10 }, template: {} });
    const excluding = await createAs(appTeam, heavier);
    expect(excluding.code).not.toBe(0);
    expect(excluding.stderr).toContain(`PodDecoration/heavier-mesh: Forbidden: would exclude ${namespace}/${PLATFORM} (same group "mesh", heavier weight 10 > 5) ${refusal}`);

    // (b) A decoration rendered after the platform's (a later group) with a container of the sidecar's name.
    const takeover = decoration(namespace, "my-proxy", { injectStrategy: { group: "overrides" }, template: { containers: [{ name: "mesh-proxy", image: "e2e.local/not-the-mesh:1" }] } });
    const replacing = await createAs(appTeam, takeover);
    expect(replacing.code).not.toBe(0);
    expect(replacing.stderr).toContain(`PodDecoration/my-proxy: Forbidden: would replace container "mesh-proxy" that ${namespace}/${PLATFORM} injects ${refusal}`);

    // (c) Its own sidecar, touching nothing of the platform's.
    const metrics = decoration(namespace, "app-metrics", { template: { containers: [{ name: "app-metrics", image: "e2e.local/metrics:1" }] } });
    const admitted = await createAs(appTeam, metrics);
    expect(admitted.code, admitted.stderr).toBe(0);

    // Editing its own decoration into the platform's group, heavier, is the same out-ranking.
    const edited = await kubectl(["patch", `--kubeconfig=${appTeam.kubeconfigPath}`, "-n", namespace, "poddecorations.apps.kusionstack.io", "app-metrics", "--type=merge", "-p", JSON.stringify({ spec: { injectStrategy: { group: "mesh", weight: 10 } } })]);
    expect(edited.code).not.toBe(0);
    expect(edited.stderr).toContain(`PodDecoration/app-metrics: Forbidden: would exclude ${namespace}/${PLATFORM} (same group "mesh", heavier weight 10 > 5) ${refusal}`);

    expect(await exists(namespace, "heavier-mesh")).toBe(false);
    expect(await exists(namespace, "my-proxy")).toBe(false);
    await waitForAdmission(namespace, WEB, "app-metrics", "decorated");
    const pod = await clients().core.createNamespacedPod({ namespace, dryRun: "All", body: { metadata: { generateName: "web-", labels: WEB }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } } });
    expect(pod.spec?.containers.map((container) => `${container.name}=${container.image}`)).toEqual(["app-metrics=e2e.local/metrics:1", "mesh-proxy=e2e.local/mesh-proxy:1", "app=e2e.local/app:1"]);

    // Granted update on the platform's decoration by name, the app team may out-rank it.
    const rbacRule = { apiGroups: ["apps.kusionstack.io"], resources: ["poddecorations"], verbs: ["update"], resourceNames: [PLATFORM] };
    const granted = await kubectl(["apply", "-f", "-"], JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: "update-platform-mesh", namespace }, rules: [rbacRule] },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "update-platform-mesh", namespace },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "update-platform-mesh" },
          subjects: [{ kind: "ServiceAccount", name: "app-team", namespace }],
        },
      ],
    }));
    expect(granted.code, granted.stderr).toBe(0);
    // The API server's authorizer sees the new binding shortly after it is stored.
    await eventually(async () => {
      const result = await createAs(appTeam, heavier);
      if (result.code !== 0 && !result.stderr.includes(refusal)) throw new Error(result.stderr);
      return result.code === 0 ? true : undefined;
    }, 30_000, "the heavier decoration to be admitted once the app team may update the platform's");
    // And it does what it was refused for: pods no longer get the platform's sidecar.
    await waitForAdmission(namespace, WEB, "mesh-proxy", "undecorated");
  });
});
