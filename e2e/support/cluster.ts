// What every e2e test needs: clients for the run's control plane, kubectl, a fresh
// namespace per test, and polling for things the cluster does asynchronously.
import { execFile } from "node:child_process";
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
} from "@kubernetes/client-node";
import { inject, test as base } from "vitest";
import { uniqueName } from "./polling.ts";
import { apiClient } from "../../src/kube/api-client.ts";

export { eventually, uniqueName } from "./polling.ts";

export function kubeConfig(): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(inject("kubeconfig"));
  return config;
}

export interface Clients {
  config: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  apiextensions: ApiextensionsV1Api;
  admission: AdmissionregistrationV1Api;
  custom: CustomObjectsApi;
  objects: KubernetesObjectApi;
}

export function clients(): Clients {
  const config = kubeConfig();
  return {
    config,
    core: apiClient(config, CoreV1Api),
    apps: apiClient(config, AppsV1Api),
    apiextensions: apiClient(config, ApiextensionsV1Api),
    admission: apiClient(config, AdmissionregistrationV1Api),
    custom: apiClient(config, CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(config),
  };
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the run's version-matched kubectl (bound to its kubeconfig); never throws on a non-zero exit. */
export function kubectl(args: readonly string[], input?: string): Promise<CommandResult> {
  return new Promise((done) => {
    const child = execFile(inject("kubectl"), args, { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      done({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}

/** A test with its own namespace, deleted (with everything in it) when the test ends. */
export const test = base.extend<{ namespace: string }>({
  namespace: async ({ task }, use) => {
    const name = uniqueName(task.name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40) || "test");
    const { core } = clients();
    await core.createNamespace({ body: { metadata: { name, labels: { "e2e.pod-decorator.io/test": "true" } } } });
    await use(name);
    await core.deleteNamespace({ name }).catch(() => undefined);
  },
});
