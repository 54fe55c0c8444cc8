// `pod-decorator serve`: the composition root. Every replica serves the admission webhooks
// from its informer caches; controllers run on the leader only. SIGTERM or SIGINT stops
// accepting requests, drains, and exits 0.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { hostname } from "node:os";
import { readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import type { KubeConfig } from "@kubernetes/client-node";
import { pino, type Logger } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";
import { collaSetController } from "../controller/collaset/controller.ts";
import type { CachedCollaSet } from "../controller/collaset/reconciler.ts";
import { podDecorationController } from "../controller/poddecoration/controller.ts";
import { workloadRolloutController } from "../controller/workload-rollout/controller.ts";
import { transitionRuleController } from "../controller/transition-rules/controller.ts";
import { transitionGate, type CachedTransitionRule } from "../controller/transition-rules/gate.ts";
import { operationJobController } from "../controller/operation-jobs/controller.ts";
import { operationDelayFor } from "../controller/operation-jobs/delays.ts";
import type { CachedOperationJob } from "../controller/operation-jobs/reconciler.ts";
import { RolloutReports } from "../controller/workload-rollout/reports.ts";
import { storedTemplates, type CachedDecoration } from "../controller/poddecoration/reconciler.ts";
import { registerRolloutMetrics } from "../controller/poddecoration/rollout-metrics.ts";
import { CappedBackoff } from "../controller/runtime/backoff.ts";
import { realClock } from "../controller/runtime/clock.ts";
import { EventRecorder } from "../controller/runtime/event-recorder.ts";
import type { Informer } from "../controller/runtime/informer.ts";
import { LeaderElector } from "../controller/runtime/leader-election.ts";
import { kubeLeaseLock } from "../controller/runtime/lease-lock.ts";
import { RuntimeMetrics, type LeaderMetrics } from "../controller/runtime/metrics.ts";
import { SharedInformers } from "../controller/runtime/shared-informers.ts";
import { podCacheProjection } from "../controller/pod-cache.ts";
import { subjectAccessReviewer, whoAmI } from "../kube/access-review.ts";
import { isNotFound } from "../kube/errors.ts";
import { createKubeClient, type KubeClient } from "../kube/client.ts";
import { withoutTrailingSlashes } from "../kube/base-url.ts";
import { loadKubeConfig } from "../kube/kubeconfig.ts";
import { namespacedKey, type ControllerRevision, type Namespace, type PersistentVolumeClaim, type Pod } from "../kube/objects.ts";
import { admissionScope } from "../decoration/admission-scope.ts";
import { resources } from "../kube/resources.ts";
import type { CachedResourceContext } from "../controller/collaset/resource-context.ts";
import { COLLASET_NAME_LABEL } from "../revision/collaset-revision-data.ts";
import { CLUSTER_POD_DECORATION_NAME_LABEL, POD_DECORATION_NAME_LABEL } from "../revision/controller-revision.ts";
import { ClusterDecorations, type CachedClusterDecoration, type FleetWiring } from "../controller/cluster-decorations.ts";
import { clusterPodDecorationController } from "../controller/poddecoration/cluster-controller.ts";
import { selectorMatches } from "../decoration/selector.ts";
import { admissionHandlers } from "../webhook/admission-handlers.ts";
import { watchServerVersion } from "../kube/server-version.ts";
import { cachedDecorationSource } from "../webhook/decoration-source.ts";
import { createMetricsServer } from "../webhook/metrics-server.ts";
import { createWebhookMetrics } from "../webhook/metrics.ts";
import { trustUsernames } from "../webhook/requester-trust.ts";
import { startHealthServer } from "../webhook/health-server.ts";
import { createWebhookServer, type Readiness } from "../webhook/server.ts";
import { createWebhookCertificateAuthority, fileCertificates, selfSignedCertificates, type SelfSignedCertificates, type ServingCertificates } from "../webhook/serving-certificates.ts";
import { sharedCertificateAuthority } from "../webhook/shared-ca.ts";
import { applyWebhookConfigurations, createWebhookConfiguration, webhookConfigurationName, type WebhookConfigurationOptions } from "../webhook/webhook-configuration.ts";
import { keepWebhookTrust, type TrustRepairReason, type WebhookTrustOptions } from "../webhook/webhook-trust.ts";
import type { WebhookConfigurationKind } from "../kube/admission.ts";
import type { Command } from "./command.ts";
import { parseServeOptions, type ServeOptions } from "./serve-options.ts";

export const serve: Command = async (args) => {
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

/** Something this process started, and how to stop it. */
interface Started {
  what: string;
  stop: () => unknown;
}

/**
 * Serves until `stopRequested`. Everything started stops on one signal: when the process is
 * told to stop, and when it fails (a port taken, the CA unreadable). A serve that cannot run must
 * not linger half-started, its webhook port open and its informers watching: it stops what it
 * started, in reverse order, and fails, so that the process exits and its pod is restarted.
 */
async function run(options: ServeOptions, logger: Logger, stopRequested: AbortSignal): Promise<void> {
  const lifetime = new AbortController();
  if (stopRequested.aborted) lifetime.abort();
  else stopRequested.addEventListener("abort", () => lifetime.abort(), { once: true });
  const started: Started[] = [];
  try {
    await serveUntilStopped(options, logger, lifetime.signal, started);
  } catch (error) {
    lifetime.abort();
    for (const { what, stop } of started.reverse()) {
      try {
        await stop();
      } catch (stopError) {
        logger.warn({ err: stopError }, `stopping the ${what} after a failure failed`);
      }
    }
    throw error;
  }
}

async function serveUntilStopped(options: ServeOptions, logger: Logger, signal: AbortSignal, started: Started[]): Promise<void> {
  const { config, source } = loadKubeConfig({ kubeconfig: options.kubeconfig });
  logger.info({ kubeconfig: source, server: config.getCurrentCluster()?.server }, "starting");
  const client = createKubeClient<CachedDecoration, CachedCollaSet>(config);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const informers = new SharedInformers({ transport: client.rest, logger });
  const decorations = informers.forResource<CachedDecoration>(resources.podDecorations);
  // Only decoration revisions: CollaSet template revisions are the CollaSet controller's.
  const revisions = informers.forResource<ControllerRevision>(resources.controllerRevisions, { labelSelector: POD_DECORATION_NAME_LABEL });
  // ClusterPodDecorations (DESIGN §12), their revisions (in this namespace), and the namespaces
  // they select by label: only a namespace's name and labels are kept.
  const clusterDecorations = informers.forResource<CachedClusterDecoration>(resources.clusterPodDecorations);
  const clusterRevisions = informers.forResource<ControllerRevision>(resources.controllerRevisions, { namespace: options.namespace, labelSelector: CLUSTER_POD_DECORATION_NAME_LABEL });
  const namespaces = informers.forResource<Namespace>(resources.namespaces, {}, { transform: (namespace) => ({ metadata: { name: namespace.metadata?.name, labels: namespace.metadata?.labels, resourceVersion: namespace.metadata?.resourceVersion } }) });
  const scope = admissionScope(options.scope);
  const clusterIndex = new ClusterDecorations({ decorations: clusterDecorations.cache, namespaces: namespaces.cache, scope });
  clusterDecorations.addEventHandler({ onAdd: () => clusterIndex.changed(), onUpdate: () => clusterIndex.changed(), onDelete: () => clusterIndex.changed() });
  const clusterCaches = { decorations: clusterIndex, revisions: clusterRevisions.cache, revisionNamespace: options.namespace };

  const certificates = await servingCertificates(options, client, logger, signal);
  started.push({ what: "serving certificates", stop: () => certificates.stop() });
  const caFilePem = "certFile" in options.tls && options.tls.caFile !== undefined ? await readFile(options.tls.caFile, "utf8") : undefined;
  const clientCaPem = options.clientCaFile === undefined ? undefined : await readFile(options.clientCaFile, "utf8");
  const controllerUsernames = await controllerIdentity(options, config, logger, signal);
  const serverVersion = await watchServerVersion(config, logger, signal);
  let synced = false;
  const readiness = (): Readiness => (synced ? { ready: true } : { ready: false, reason: "informer caches have not synced" });
  const webhookMetrics = createWebhookMetrics(registry);
  webhookMetrics.servingCertificate(() => certificates.current().certPem);
  registerRolloutMetrics(registry, [
    { decorations: decorations.cache, synced: () => decorations.hasSynced() },
    { decorations: clusterDecorations.cache, synced: () => clusterDecorations.hasSynced() },
  ]);
  const app = await createWebhookServer({
    logger,
    metrics: webhookMetrics,
    certificates,
    ...(clientCaPem === undefined ? {} : { clientCaPem }),
    limits: { maxConnectionsPerSource: options.maxConnectionsPerSource },
    readiness: () => readiness(),
    handlers: admissionHandlers({
      source: cachedDecorationSource(decorations.cache, revisions.cache, options.decorationBounds, clusterCaches),
      onDecorationError: options.onDecorationError,
      trustRequester: trustUsernames(controllerUsernames),
      onInternalError: (error) => logger.error({ err: error, webhook: "mutate-pods" }, "decorating a pod failed; it was admitted undecorated"),
      onRemembered: () => webhookMetrics.remembered("mutate-pods"),
    }, {
      bounds: options.decorationBounds,
      reviewAccess: subjectAccessReviewer(config),
      // A namespace's own and the cluster ones selecting it: out-ranking a cluster one needs update on it.
      decorations: (namespace) => [...decorations.cache.list(namespace), ...clusterIndex.forNamespace(namespace)],
      namespaceLabels: async (namespace) => {
        try {
          return (await client.core.namespaces.get(namespace)).metadata?.labels ?? {};
        } catch (error) {
          if (isNotFound(error)) return undefined;
          throw error;
        }
      },
    }, {
      bounds: options.decorationBounds,
      reviewAccess: subjectAccessReviewer(config),
      clusterDecorations: () => clusterDecorations.cache.list(),
      namespacesInScope: () => namespaces.cache.list().flatMap((namespace) => {
        const name = namespace.metadata?.name ?? "";
        const labels = clusterIndex.namespaceLabels(name) ?? {};
        return selectorMatches(scope.namespaceSelector, labels) ? [{ name, labels }] : [];
      }),
      namespaceDecorations: (namespace) => [...decorations.cache.list(namespace), ...clusterIndex.forNamespace(namespace)],
    }, () => serverVersion.current()),
  });

  started.push({ what: "webhook server", stop: () => app.close() });
  informers.start(signal);
  started.push({ what: "informers", stop: () => informers.stopped() });
  await app.listen({ host: options.webhookHost, port: options.webhookPort });
  const health = options.healthPort === 0 ? undefined : await startHealthServer({ host: options.webhookHost, port: options.healthPort, readiness });
  if (health !== undefined) started.push({ what: "health server", stop: () => health.stop() });
  const metricsServer = options.metricsPort === 0 ? undefined : createMetricsServer(registry);
  if (metricsServer !== undefined) {
    started.push({ what: "metrics server", stop: () => metricsServer.close() });
    metricsServer.listen(options.metricsPort, options.webhookHost);
    await once(metricsServer, "listening");
  }
  logger.info({
    webhookPort: (app.server.address() as AddressInfo).port,
    metricsPort: metricsServer === undefined ? undefined : (metricsServer.address() as AddressInfo).port,
    healthPort: health?.port,
  }, "listening");

  const identity = `${hostname()}_${randomUUID()}`;
  let trust: ReturnType<typeof keepWebhookTrust> | undefined;
  if (await informers.waitForSync(signal)) {
    synced = true;
    logger.info("caches synced; ready");
    // Controllers write objects our webhooks admit, so give the first publication a head start;
    // the API server may blip or the chart's configurations may not exist yet: both are retried.
    const published = (async () => {
      if (options.webhookConfigUrl !== undefined) {
        await untilDone(signal, logger, "publishing the webhook configurations", () => applyWebhookConfigurations(client.admission.webhookConfigurations, urlConfiguration(options, certificates, caFilePem)));
        logger.info({ url: options.webhookConfigUrl }, "webhook configurations point at this process");
      }
      const trustOptions = { ...webhookTrustOptions(options, client, certificates, caFilePem, identity, logger), onRepair: (reason: TrustRepairReason) => webhookMetrics.trustRepaired(reason) };
      trust = keepWebhookTrust(trustOptions, 10_000, signal);
      started.push({ what: "webhook trust", stop: () => trust?.done });
      certificates.onChange(() => trust?.wake());
      await trust.firstPass;
    })();
    await Promise.race([published, realClock.sleep(10_000, signal)]);
  }

  // Registered once: leadership may be lost and won again in one process.
  const metrics = new RuntimeMetrics(registry);
  const fleet: FleetWiring = { decorations: clusterIndex, informers: { clusterDecorations, revisions: clusterRevisions, namespaces } };
  const controllers = (leadership: AbortSignal) => runControllers({ client, decorations, revisions, fleet, metrics, logger, identity, options, kubernetesVersion: () => serverVersion.current()?.gitVersion }, leadership);
  const leader = metrics.leader(options.leaderElectionId);
  // Without leader election this process leads alone, for as long as it runs.
  if (!options.leaderElect) leader.leading(true);
  const controllersDone = options.leaderElect
    ? campaign(options, client, identity, logger, signal, leader, controllers)
    : controllers(signal);
  started.push({ what: "controllers", stop: () => controllersDone });

  if (!signal.aborted) await once(signal, "abort");
  // Stop taking requests first (the API server retries elsewhere), then the controllers
  // (draining their queues, releasing the lease), then the informers.
  await closeWithin(app, 5_000, logger);
  await controllersDone;
  metricsServer?.close();
  await health?.stop();
  await trust?.done;
  certificates.stop();
  await informers.stopped();
  logger.info("stopped");
}

interface ControllerDependencies {
  client: KubeClient<CachedDecoration, CachedCollaSet>;
  decorations: Informer<CachedDecoration>;
  revisions: Informer<ControllerRevision>;
  /** ClusterPodDecorations, their revisions and the namespaces they select: the webhook's caches. */
  fleet: FleetWiring;
  metrics: RuntimeMetrics;
  logger: Logger;
  identity: string;
  kubernetesVersion: () => string | undefined;
  options: Pick<ServeOptions, "podOpsLifecycle" | "lifecycleDrainDelayMs" | "lifecycleStuckAfterMs" | "scope" | "decorationBounds" | "namespace">;
}

/** Everything that runs only on the leader; returns when leadership (or the process) ends. */
async function runControllers(dependencies: ControllerDependencies, leadership: AbortSignal): Promise<void> {
  const { client, logger } = dependencies;
  // Pods are cached only where controllers run: followers serve the webhook without them.
  const informers = new SharedInformers({ transport: client.rest, logger });
  // Pods are the bulk of the controller's memory: the cache keeps only what controllers read.
  const pods = informers.forResource<Pod>(resources.pods, {}, { transform: podCacheProjection });
  const collaSets = informers.forResource<CachedCollaSet>(resources.collaSets);
  const collaSetRevisions = informers.forResource<ControllerRevision>(resources.controllerRevisions, { labelSelector: COLLASET_NAME_LABEL });
  const claims = informers.forResource<PersistentVolumeClaim>(resources.persistentVolumeClaims);
  const resourceContexts = informers.forResource<CachedResourceContext>(resources.resourceContexts);
  const transitionRules = informers.forResource<CachedTransitionRule>(resources.podTransitionRules);
  const operationJobs = informers.forResource<CachedOperationJob>(resources.operationJobs);
  // The webhook's namespace cache: only what namespaceSelectors read, a namespace's name and labels.
  const { namespaces } = dependencies.fleet.informers;
  informers.start(leadership);
  // The decoration caches outlive leaderships (the webhook serves from them) and stay "synced"
  // through an outage while their watches back off for up to 30 s: a leader acting on them then
  // would render replacements from decorations as they were, and move those pods again later.
  const current = await Promise.all([dependencies.decorations.relist(leadership), dependencies.revisions.relist(leadership), dependencies.fleet.informers.clusterDecorations.relist(leadership), dependencies.fleet.informers.revisions.relist(leadership)]);
  if (current.includes(false)) {
    await informers.stopped();
    return;
  }
  const events = new EventRecorder({ sink: client.core.events, component: "pod-decorator", instance: dependencies.identity, logger });
  const rolloutReports = new RolloutReports();
  // Pods record both kinds: status judges what they run against the revisions of both.
  const recordedTemplates = storedTemplates(dependencies.revisions.cache, { revisions: dependencies.fleet.informers.revisions.cache, namespace: dependencies.options.namespace });
  const podDecorations = podDecorationController({
    informers: { decorations: dependencies.decorations, revisions: dependencies.revisions, pods, collaSets },
    client,
    rolloutReports,
    kubernetesVersion: dependencies.kubernetesVersion,
    events,
    clock: realClock,
    logger,
    metrics: dependencies.metrics,
    bounds: dependencies.options.decorationBounds,
    cluster: dependencies.fleet.decorations,
    recordedTemplates,
  });
  const clusterPodDecorations = clusterPodDecorationController({
    informers: { clusterDecorations: dependencies.fleet.informers.clusterDecorations, revisions: dependencies.fleet.informers.revisions, pods, namespaces, decorations: dependencies.decorations, collaSets },
    cluster: dependencies.fleet.decorations,
    client,
    releaseNamespace: dependencies.options.namespace,
    rolloutReports,
    recordedTemplates,
    bounds: dependencies.options.decorationBounds,
    events,
    clock: realClock,
    logger,
    metrics: dependencies.metrics,
  });
  const decorationSource = cachedDecorationSource(dependencies.decorations.cache, dependencies.revisions.cache, dependencies.options.decorationBounds, {
    decorations: dependencies.fleet.decorations,
    revisions: dependencies.fleet.informers.revisions.cache,
    revisionNamespace: dependencies.options.namespace,
  });
  // Every lifecycle operation goes through the PodTransitionRules that select its pod.
  const transitions = transitionGate(transitionRules.cache);
  const lifecycle = dependencies.options.podOpsLifecycle
    ? { lifecycle: { drainDelayMs: dependencies.options.lifecycleDrainDelayMs, stuckAfterMs: dependencies.options.lifecycleStuckAfterMs, transitions, operationDelayFor: operationDelayFor(operationJobs.cache) } }
    : {};
  const decorationReportsChanged = (namespace: string, names: ReadonlySet<string>) => {
    for (const name of names) podDecorations.enqueue(namespacedKey(namespace, name));
  };
  // What both controllers that move decorated pods share: the decorations' revisions, the lifecycle, the reports.
  const movingPods = {
    decorationSource,
    client,
    reportsChanged: decorationReportsChanged,
    cluster: dependencies.fleet,
    events,
    ...lifecycle,
    clock: realClock,
    logger,
    metrics: dependencies.metrics,
  };
  const collaSetsController = collaSetController({
    ...movingPods,
    informers: { collaSets, revisions: collaSetRevisions, pods, decorations: dependencies.decorations, decorationRevisions: dependencies.revisions, claims, resourceContexts },
    rolloutReports,
  });
  const workloadRollouts = workloadRolloutController({
    ...movingPods,
    informers: { pods, decorations: dependencies.decorations, decorationRevisions: dependencies.revisions, namespaces },
    webhookScope: admissionScope(dependencies.options.scope),
    reports: rolloutReports,
  });
  const transitionRuleReconciles = transitionRuleController({
    informers: { transitionRules, pods, collaSets },
    client,
    events,
    clock: realClock,
    logger,
    metrics: dependencies.metrics,
  });
  const operationJobReconciles = operationJobController({
    informers: { jobs: operationJobs, pods, collaSets },
    client,
    events,
    clock: realClock,
    logger,
    metrics: dependencies.metrics,
  });
  // The lifecycle reads the PodTransitionRules through a cache no workload controller waits for: no pod may pass a stage on an empty one.
  if (!(await informers.waitForSync(leadership))) {
    await informers.stopped();
    return;
  }
  logger.info("controllers starting");
  await Promise.all([
    podDecorations.start(leadership),
    clusterPodDecorations.start(leadership),
    collaSetsController.start(leadership),
    workloadRollouts.start(leadership),
    transitionRuleReconciles.start(leadership),
    operationJobReconciles.start(leadership),
  ]);
  await informers.stopped();
  logger.info("controllers stopped");
}

/** Campaigns for the Lease until the process stops; leads with the controllers while it holds it. */
async function campaign(options: ServeOptions, client: KubeClient<CachedDecoration>, identity: string, logger: Logger, signal: AbortSignal, leader: LeaderMetrics, lead: (leadership: AbortSignal) => Promise<void>): Promise<void> {
  while (!signal.aborted) {
    let leading: Promise<void> = Promise.resolve();
    const elector = new LeaderElector({
      lock: kubeLeaseLock(client.coordination.leases, options.namespace, options.leaderElectionId),
      identity,
      logger,
      onStartedLeading: (leadership) => {
        leader.leading(true);
        leading = lead(leadership);
      },
      onStoppedLeading: () => {
        leader.leading(false);
        logger.info({ identity }, "stopped leading");
      },
      onNewLeader: (holder) => {
        leader.observed(holder);
        logger.info({ leader: holder }, "new leader observed");
      },
    });
    await elector.run(signal);
    await leading;
  }
}

/**
 * Lets in-flight admission requests finish, but not a keep-alive connection the API server
 * holds open (its idle timeout is 90 s): after the grace period every connection is closed.
 */
async function closeWithin(app: Awaited<ReturnType<typeof createWebhookServer>>, graceMs: number, logger: Logger): Promise<void> {
  const closed = app.close();
  const timer = new AbortController();
  const inTime = await Promise.race([closed.then(() => true), realClock.sleep(graceMs, timer.signal).then(() => false)]);
  timer.abort();
  if (!inTime) {
    logger.warn({ graceMs }, "closing the connections still open after the grace period");
    app.server.closeAllConnections();
    await closed;
  }
}

/** Retries `attempt` with capped backoff until it succeeds (its value) or signal aborts (undefined). */
async function untilDone<T>(signal: AbortSignal, logger: Logger, what: string, attempt: () => Promise<T>): Promise<T | undefined> {
  const backoff = new CappedBackoff({ initialMs: 500, maxMs: 30_000 });
  while (!signal.aborted) {
    try {
      return await attempt();
    } catch (error) {
      const waitMs = backoff.next();
      logger.warn({ err: error, retryInMs: waitMs }, `${what} failed`);
      await realClock.sleep(waitMs, signal);
    }
  }
}

/**
 * Whose revisions annotation on a new pod counts: this process's own identity (its CollaSet
 * controller creates pods already rendered), unless given.
 */
async function controllerIdentity(options: ServeOptions, config: KubeConfig, logger: Logger, signal: AbortSignal): Promise<string[]> {
  if (options.controllerUsernames.length > 0) return options.controllerUsernames;
  const username = await untilDone(signal, logger, "asking the API server for this process's identity (SelfSubjectReview)", () => whoAmI(config));
  if (username === undefined) throw new Error("stopped before this process's identity was known");
  logger.info({ username }, "pod bookkeeping counts when the pod is created by this identity");
  return [username];
}

async function servingCertificates(options: ServeOptions, client: KubeClient, logger: Logger, signal: AbortSignal): Promise<ServingCertificates> {
  const onError = (error: unknown) => logger.error({ err: error }, "serving certificate could not be renewed; keeping the current one");
  const { tls } = options;
  if ("certFile" in tls) return fileCertificates({ certFile: tls.certFile, keyFile: tls.keyFile, onError });
  // Configurations this process writes for its own URL trust its own CA; the shared ones
  // (a chart's, served by several replicas) trust the CA they all share.
  if (options.webhookConfigUrl !== undefined) return selfSignedCertificates({ hosts: tls.hosts, onError });
  const ca = await untilDone(signal, logger, `loading the webhook CA from Secret ${options.namespace}/${tls.caSecret}`, () =>
    sharedCertificateAuthority(client.core.secrets, options.namespace, tls.caSecret, () => createWebhookCertificateAuthority()));
  if (ca === undefined) throw new Error("stopped before the webhook CA was loaded");
  return selfSignedCertificates({ hosts: tls.hosts, ca, onError });
}

/** Outside a cluster: the configurations this process writes for its own URL. */
function urlConfiguration(options: ServeOptions, certificates: ServingCertificates, caFilePem: string | undefined): WebhookConfigurationOptions {
  return {
    target: { url: options.webhookConfigUrl ?? "" },
    caBundlePem: certificates.caBundle() ?? caFilePem ?? "",
    scope: options.scope,
    failurePolicy: options.failurePolicy,
  };
}

/** What keeps the API server trusting this process; see webhook-trust.ts. */
function webhookTrustOptions(
  options: ServeOptions,
  client: KubeClient,
  certificates: ServingCertificates,
  caFilePem: string | undefined,
  identity: string,
  logger: Logger,
): WebhookTrustOptions {
  const configurations = client.admission.webhookConfigurations;
  const { tls } = options;
  return {
    configurations,
    configurationName: options.webhookConfigUrl === undefined ? options.webhookConfigName : webhookConfigurationName,
    caBundle: () => certificates.caBundle() ?? caFilePem,
    ...(options.webhookConfigUrl === undefined
      ? {}
      : {
        recreate: (kind: WebhookConfigurationKind) => createWebhookConfiguration(configurations, kind, urlConfiguration(options, certificates, caFilePem)),
        owns: (clientConfig: { url?: string }) => clientConfig.url?.startsWith(withoutTrailingSlashes(options.webhookConfigUrl!)) === true,
      }),
    // A shared CA lives in a Secret only in a cluster; outside one the process holds its own.
    ...("selfSigned" in tls && options.webhookConfigUrl === undefined && "authority" in certificates
      ? { caSecret: { secrets: client.core.secrets, namespace: options.namespace, name: tls.caSecret, certificates: certificates as SelfSignedCertificates } }
      : {}),
    events: new EventRecorder({ sink: client.core.events, component: "pod-decorator", instance: identity, logger }),
    logger,
  };
}
