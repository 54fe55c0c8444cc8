// Requesters other than the run's cluster-admin: a ServiceAccount with exactly the rules a test
// gives it, as a client and as a kubeconfig file, so that what the webhooks see in userInfo is
// someone who is not pod-decorator's controller (serve runs as the cluster-admin).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthorizationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import { afterAll } from "vitest";
import { eventually, kubeConfig } from "./cluster.ts";
import { apiClient } from "../../src/kube/api-client.ts";

/** Directories of the kubeconfigs written for the file being run: each holds a token. */
const kubeconfigDirs: string[] = [];
afterAll(async () => {
  await Promise.all(kubeconfigDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

export interface Identity {
  /** As the API server names it: system:serviceaccount:NS:NAME. */
  username: string;
  config: KubeConfig;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  /** For kubectl --kubeconfig. */
  kubeconfigPath: string;
}

/** A ServiceAccount in `namespace` allowed `rules` there (a Role and RoleBinding), with a token. */
export async function serviceAccountIdentity(namespace: string, name: string, rules: V1PolicyRule[]): Promise<Identity> {
  const rbac = apiClient(kubeConfig(), RbacAuthorizationV1Api);
  await apiClient(kubeConfig(), CoreV1Api).createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: { metadata: { name }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name }, subjects: [{ kind: "ServiceAccount", name, namespace }] },
  });
  await untilAuthorized(namespace, name, rules);
  return tokenIdentity(namespace, name);
}

/**
 * A namespace's admin as a cluster gives one: a ServiceAccount bound in `namespace` to the
 * built-in ClusterRole `admin` (everything in the namespace, including its RBAC), and to `rules`
 * there too (what the platform grants beside it, e.g. PodDecorations), with a token.
 */
export async function namespaceAdminIdentity(namespace: string, name: string, rules: V1PolicyRule[] = []): Promise<Identity> {
  const rbac = apiClient(kubeConfig(), RbacAuthorizationV1Api);
  await apiClient(kubeConfig(), CoreV1Api).createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const subjects = [{ kind: "ServiceAccount", name, namespace }];
  await rbac.createNamespacedRoleBinding({ namespace, body: { metadata: { name }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" }, subjects } });
  if (rules.length > 0) {
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name: `${name}-granted` }, rules } });
    await rbac.createNamespacedRoleBinding({ namespace, body: { metadata: { name: `${name}-granted` }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: `${name}-granted` }, subjects } });
  }
  await untilAuthorized(namespace, name, [{ apiGroups: [""], resources: ["pods"], verbs: ["create"] }, ...rules]);
  return tokenIdentity(namespace, name);
}

/**
 * The API server's authorizer learns of new RBAC objects from its own watch, a moment after they
 * are created: a request made at once (or a webhook's SubjectAccessReview for it) may still be
 * refused. Waits until the first verb on the first resource (and name) of each rule is allowed.
 */
async function untilAuthorized(namespace: string, name: string, rules: readonly V1PolicyRule[]): Promise<void> {
  const authorization = apiClient(kubeConfig(), AuthorizationV1Api);
  const user = `system:serviceaccount:${namespace}:${name}`;
  for (const rule of rules) {
    const verb = rule.verbs[0] === "*" ? "create" : rule.verbs[0];
    const resourceAttributes = { namespace, group: rule.apiGroups?.[0] ?? "", resource: rule.resources?.[0] ?? "", verb, ...(rule.resourceNames?.[0] === undefined ? {} : { name: rule.resourceNames[0] }) };
    await eventually(async () => {
      const review = await authorization.createSubjectAccessReview({ body: { spec: { user, groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"], resourceAttributes } } });
      return review.status?.allowed === true ? true : undefined;
    }, 30_000, `${user} to be allowed ${verb} ${resourceAttributes.resource}`);
  }
}

/** The ServiceAccount's token as a client and a kubeconfig file. */
async function tokenIdentity(namespace: string, name: string): Promise<Identity> {
  const admin = kubeConfig();
  const core = apiClient(admin, CoreV1Api);
  const token = await core.createNamespacedServiceAccountToken({ namespace, name, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const cluster = admin.getCurrentCluster();
  if (cluster === null || cluster.caData === undefined) throw new Error("the run's kubeconfig has no cluster with certificate-authority-data");
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "e2e", server: cluster.server, caData: cluster.caData }],
    users: [{ name, token: token.status?.token ?? "" }],
    contexts: [{ name, cluster: "e2e", user: name, namespace }],
    currentContext: name,
  });
  const dir = await mkdtemp(join(tmpdir(), "pod-decorator-identity-"));
  kubeconfigDirs.push(dir);
  const kubeconfigPath = join(dir, "kubeconfig");
  await writeFile(kubeconfigPath, config.exportConfig(), { mode: 0o600 });
  return {
    username: `system:serviceaccount:${namespace}:${name}`,
    config,
    core: apiClient(config, CoreV1Api),
    custom: apiClient(config, CustomObjectsApi),
    kubeconfigPath,
  };
}
