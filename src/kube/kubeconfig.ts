// Where the process finds its cluster, in controller-runtime's order: the --kubeconfig flag,
// then $KUBECONFIG, then the in-cluster service account, then ~/.kube/config.
import { existsSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";

const serviceAccountToken = "/var/run/secrets/kubernetes.io/serviceaccount/token";

export type KubeConfigSource = "flag" | "env" | "in-cluster" | "default";

export interface LoadedKubeConfig {
  config: KubeConfig;
  source: KubeConfigSource;
}

export interface KubeConfigOptions {
  /** The --kubeconfig flag, when given. */
  kubeconfig?: string | undefined;
  /** Injected for tests; defaults to: $KUBERNETES_SERVICE_HOST is set and the token file exists. */
  inCluster?: () => boolean;
}

export function loadKubeConfig(options: KubeConfigOptions = {}): LoadedKubeConfig {
  const inCluster = options.inCluster ?? (() => process.env.KUBERNETES_SERVICE_HOST !== undefined && existsSync(serviceAccountToken));
  const config = new KubeConfig();
  if (options.kubeconfig !== undefined && options.kubeconfig !== "") {
    config.loadFromFile(options.kubeconfig);
    return { config, source: "flag" };
  }
  const fromEnv = process.env.KUBECONFIG;
  if (fromEnv !== undefined && fromEnv !== "") {
    // loadFromDefault merges every file of a $KUBECONFIG path list the way kubectl does.
    config.loadFromDefault();
    return { config, source: "env" };
  }
  if (inCluster()) {
    // Reads $KUBERNETES_SERVICE_HOST/PORT and the mounted service-account token and CA.
    config.loadFromCluster();
    return { config, source: "in-cluster" };
  }
  config.loadFromDefault();
  return { config, source: "default" };
}

export interface KubectlConfigOptions {
  /** The --kubeconfig flag, when given. */
  kubeconfig?: string | undefined;
  /** The --context flag, when given. */
  context?: string | undefined;
}

/**
 * Where kubectl finds its cluster: the --kubeconfig flag, then the files of $KUBECONFIG merged,
 * then ~/.kube/config, then the in-cluster service account; --context picks a context of it.
 */
export function loadKubectlConfig(options: KubectlConfigOptions = {}): KubeConfig {
  const config = new KubeConfig();
  if (options.kubeconfig !== undefined && options.kubeconfig !== "") config.loadFromFile(options.kubeconfig);
  else config.loadFromDefault();
  if (options.context !== undefined && options.context !== "") {
    if (config.getContextObject(options.context) === null) throw new Error(`context ${JSON.stringify(options.context)} does not exist in the kubeconfig`);
    config.setCurrentContext(options.context);
  }
  return config;
}

/** The namespace kubectl would use: the current context's, else `default`. */
export function contextNamespace(config: KubeConfig): string {
  const context = config.getContextObject(config.getCurrentContext());
  return context?.namespace !== undefined && context.namespace !== "" ? context.namespace : "default";
}
