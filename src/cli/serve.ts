// `pod-decorator serve`: the composition root. Every replica serves the admission webhooks
// from its informer caches; controllers run on the leader only. SIGTERM or SIGINT stops
// accepting requests, drains, and exits 0.
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { AdmissionregistrationV1Api } from "@kubernetes/client-node";
import { pino, type Logger } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";
import type { PodDecoration } from "../api/poddecoration.ts";
import { CappedBackoff } from "../controller/runtime/backoff.ts";
import { realClock } from "../controller/runtime/clock.ts";
import { SharedInformers } from "../controller/runtime/shared-informers.ts";
import { createKubeClient } from "../kube/client.ts";
import { loadKubeConfig } from "../kube/kubeconfig.ts";
import type { ControllerRevision, KubeObject } from "../kube/objects.ts";
import { resources } from "../kube/resources.ts";
import { POD_DECORATION_NAME_LABEL } from "../revision/controller-revision.ts";
import { cachedDecorationSource } from "../webhook/decoration-source.ts";
import { createMetricsServer } from "../webhook/metrics-server.ts";
import { createWebhookMetrics } from "../webhook/metrics.ts";
import { podMutation } from "../webhook/pod-mutation.ts";
import { defaultCollaSets, defaultPodDecorations, validateCollaSets, validatePodDecorations } from "../webhook/resource-admission.ts";
import { createWebhookServer } from "../webhook/server.ts";
import { fileCertificates, selfSignedCertificates, type ServingCertificates } from "../webhook/serving-certificates.ts";
import { applyWebhookConfigurations, patchCaBundles } from "../webhook/webhook-configuration.ts";
import type { Command } from "./command.ts";
import { parseServeOptions, serveUsage, type ServeOptions } from "./serve-options.ts";

export const serve: Command = async (args, io) => {
  if (args.includes("--help") || args.includes("-h")) {
    io.stdout(`${serveUsage}\n`);
    return 0;
  }
  const options = parseServeOptions(args, process.env);
  const logger = pino({ level: options.logLevel, base: { process: "pod-decorator" } });
  const stop = new AbortController();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      logger.info({ signal }, "shutting down");
      stop.abort();
    });
  }
  await run(options, logger, stop.signal);
  return 0;
};

async function run(options: ServeOptions, logger: Logger, signal: AbortSignal): Promise<void> {
  const { config, source } = loadKubeConfig({ kubeconfig: options.kubeconfig });
  logger.info({ kubeconfig: source, server: config.getCurrentCluster()?.server }, "starting");
  const client = createKubeClient(config);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const informers = new SharedInformers({ transport: client.rest, logger });
  const decorations = informers.forResource<PodDecoration & KubeObject>(resources.podDecorations);
  // Only decoration revisions: CollaSet template revisions are the CollaSet controller's.
  const revisions = informers.forResource<ControllerRevision>(resources.controllerRevisions, { labelSelector: POD_DECORATION_NAME_LABEL });

  const certificates = await servingCertificates(options, logger);
  let synced = false;
  const app = await createWebhookServer({
    logger,
    metrics: createWebhookMetrics(registry),
    certificates,
    readiness: () => (synced ? { ready: true } : { ready: false, reason: "informer caches have not synced" }),
    handlers: {
      "mutate-pods": podMutation({ source: cachedDecorationSource(decorations.cache, revisions.cache), onDecorationError: options.onDecorationError }),
      "mutate-poddecorations": defaultPodDecorations,
      "validate-poddecorations": validatePodDecorations,
      "mutate-collasets": defaultCollaSets,
      "validate-collasets": validateCollaSets,
    },
  });

  informers.start(signal);
  await app.listen({ host: options.webhookHost, port: options.webhookPort });
  const metricsServer = options.metricsPort === 0 ? undefined : createMetricsServer(registry);
  if (metricsServer !== undefined) {
    metricsServer.listen(options.metricsPort, options.webhookHost);
    await once(metricsServer, "listening");
  }
  logger.info({
    webhookPort: (app.server.address() as AddressInfo).port,
    metricsPort: metricsServer === undefined ? undefined : (metricsServer.address() as AddressInfo).port,
  }, "listening");

  if (await informers.waitForSync(signal)) {
    synced = true;
    logger.info("caches synced; ready");
    const admission = config.makeApiClient(AdmissionregistrationV1Api);
    // The configurations may not exist yet (chart installing) or the API server may blip: retry.
    void untilDone(signal, logger, "publishing the webhook configurations", () => publishWebhookConfigurations(options, certificates, admission, logger));
    certificates.onChange(() => void untilDone(signal, logger, "publishing the renewed CA bundle", () => publishWebhookConfigurations(options, certificates, admission, logger)));
  }

  if (!signal.aborted) await once(signal, "abort");
  // Stop taking requests first (the API server retries elsewhere), then the informers.
  await app.close();
  metricsServer?.close();
  certificates.stop();
  await informers.stopped();
  logger.info("stopped");
}

async function untilDone(signal: AbortSignal, logger: Logger, what: string, attempt: () => Promise<void>): Promise<void> {
  const backoff = new CappedBackoff({ initialMs: 500, maxMs: 30_000 });
  while (!signal.aborted) {
    try {
      await attempt();
      return;
    } catch (error) {
      const waitMs = backoff.next();
      logger.warn({ err: error, retryInMs: waitMs }, `${what} failed`);
      await realClock.sleep(waitMs, signal);
    }
  }
}

async function servingCertificates(options: ServeOptions, logger: Logger): Promise<ServingCertificates> {
  const onError = (error: unknown) => logger.error({ err: error }, "serving certificate could not be renewed; keeping the current one");
  if ("certFile" in options.tls) return fileCertificates({ certFile: options.tls.certFile, keyFile: options.tls.keyFile, onError });
  return selfSignedCertificates({ hosts: options.tls.hosts, onError });
}

async function publishWebhookConfigurations(options: ServeOptions, certificates: ServingCertificates, api: AdmissionregistrationV1Api, logger: Logger): Promise<void> {
  const caBundlePem = certificates.caBundle() ?? ("certFile" in options.tls && options.tls.caFile !== undefined ? await readFile(options.tls.caFile, "utf8") : undefined);
  if (options.webhookConfigUrl !== undefined) {
    await applyWebhookConfigurations(api, {
      target: { url: options.webhookConfigUrl },
      caBundlePem: caBundlePem ?? "",
      ownNamespace: options.namespace,
      failurePolicy: options.failurePolicy,
    });
    logger.info({ url: options.webhookConfigUrl }, "webhook configurations point at this process");
  } else if (caBundlePem !== undefined) {
    await patchCaBundles(api, caBundlePem, options.webhookConfigName);
    logger.info({ name: options.webhookConfigName }, "webhook configurations trust this process's CA");
  }
}
