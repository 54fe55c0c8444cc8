// The API server's Kubernetes version (`/version`), read at start and again every few minutes:
// clusters are upgraded underneath a running pod-decorator, and what a decoration may use
// depends on the version its pods are created on (src/api/kubernetes-versions.ts).
import { VersionApi, type KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { parseKubernetesVersion, unavailableTemplateFeatures, type KubernetesVersion } from "../api/kubernetes-versions.ts";
import { statusMessage } from "./errors.ts";
import { apiClient } from "./api-client.ts";

export interface ServerVersion {
  /** The version as last read; undefined until the first read succeeds. */
  current(): KubernetesVersion | undefined;
}

export interface WatchOptions {
  /** How often the version is read again once known. */
  intervalMs?: number;
  /** How soon a read is tried again while the version is not known yet. */
  retryMs?: number;
  /** How long start-up waits for the first read; serve goes on without it after that. */
  firstReadMs?: number;
}

/**
 * Reads the version now (a failure is logged, not thrown; start-up waits at most `firstReadMs`
 * for it), again every `retryMs` until it is known, then every `intervalMs`, until `signal`.
 */
export async function watchServerVersion(config: KubeConfig, logger: Logger, signal: AbortSignal, options: WatchOptions = {}): Promise<ServerVersion> {
  const { intervalMs = 5 * 60_000, retryMs = 10_000, firstReadMs = 10_000 } = options;
  const api = apiClient(config, VersionApi);
  let current: KubernetesVersion | undefined;
  const read = async () => {
    try {
      const info = await api.getCode();
      const version = parseKubernetesVersion(info.gitVersion);
      if (version === undefined) {
        logger.warn({ gitVersion: info.gitVersion }, "the API server's version is not one this process can read; decorations are not checked against it");
        return;
      }
      if (version.gitVersion === current?.gitVersion) return;
      const unavailable = unavailableTemplateFeatures(version);
      logger.info({ kubernetesVersion: version.gitVersion, previous: current?.gitVersion, refusedInDecorations: unavailable }, unavailable.length === 0
        ? `Kubernetes ${version.gitVersion}: every template field pod-decorator knows is available`
        : `Kubernetes ${version.gitVersion}: PodDecorations that use ${unavailable.join("; ")} are refused, since this version drops those fields from pods or refuses them`);
      current = version;
    } catch (error) {
      logger.warn({ err: statusMessage(error) }, "reading the API server's version failed; decorations are checked against the version last read");
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (signal.aborted) return;
    timer = setTimeout(() => void read().then(schedule), current === undefined ? retryMs : intervalMs);
    timer.unref();
  };
  signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
  const first = read().then(schedule);
  let waited: NodeJS.Timeout | undefined;
  await Promise.race([first, new Promise<void>((resolve) => (waited = setTimeout(resolve, firstReadMs)))]);
  clearTimeout(waited);
  if (current === undefined) logger.warn("the API server's version is not known yet: decorations are not checked against it until it is (the controller's dry run still reports what pods would lose)");
  return { current: () => current };
}
