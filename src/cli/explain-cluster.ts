// `pod-decorator explain pod NAME | poddecoration NAME | clusterpoddecoration NAME` against a
// cluster: reads the pod or decoration, its namespace's decorations and pods (for a cluster
// decoration, those of every namespace it selects), the ClusterPodDecorations selecting the
// namespace, the namespaces' labels, the pod webhook's configuration and render errors (status,
// Events), then prints the live explanation. Finds its cluster as kubectl does (--kubeconfig,
// $KUBECONFIG, ~/.kube/config, in-cluster; --context; -n, else the context's namespace).
import { parseArgs } from "node:util";
import type { Pod } from "../api/pod.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import type { LabelSelector } from "../api/label-selector.ts";
import type { MutatingWebhookConfiguration } from "../kube/admission.ts";
import { createKubeClient, type KubeClient } from "../kube/client.ts";
import { isNotFound, statusMessage } from "../kube/errors.ts";
import { contextNamespace, loadKubectlConfig } from "../kube/kubeconfig.ts";
import type { Command } from "./command.ts";
import { asSeenFrom, type ClusterPodDecoration } from "../api/cluster-poddecoration.ts";
import { namespaceSelectionLabels } from "../decoration/admission-scope.ts";
import { clusterKey, decorationKey } from "../decoration/decoration-kind.ts";
import { selectorMatches } from "../decoration/selector.ts";
import type { Namespace } from "../kube/objects.ts";
import { explainClusterDecoration, explainDecoration, explainPod, type ClusterView, type DecorationReport, type FleetPods, type PodReport, type PodWebhook } from "./live-explanation.ts";
import { formatDecorationReport, formatPodReport } from "./live-explanation-format.ts";
import { EXPLAIN_USAGE as EXPLAIN_CLUSTER_USAGE } from "./explain-usage.ts";
import { UsageError } from "./usage-error.ts";
import type { PodTransitionRule } from "../api/podtransitionrule.ts";
import { explainTransitionRule, formatTransitionRuleReport } from "./transition-rule-explanation.ts";
import type { OperationJob } from "../api/operationjob.ts";
import { explainOperationJob, formatOperationJobReport } from "./operation-job-explanation.ts";
import { toYaml } from "./yaml-output.ts";


const DEFAULT_WEBHOOK_CONFIGURATION = "pod-decorator";
const OUTPUTS = ["text", "json", "yaml"] as const;

type Client = KubeClient;

interface Options {
  kind: "pod" | "poddecoration" | "clusterpoddecoration" | "podtransitionrule" | "operationjob";
  name: string;
  namespace: string | undefined;
  kubeconfig: string | undefined;
  context: string | undefined;
  webhookConfiguration: string;
  output: (typeof OUTPUTS)[number];
}

const KINDS: Readonly<Record<string, Options["kind"]>> = {
  pod: "pod",
  pods: "pod",
  po: "pod",
  poddecoration: "poddecoration",
  poddecorations: "poddecoration",
  pd: "poddecoration",
  clusterpoddecoration: "clusterpoddecoration",
  clusterpoddecorations: "clusterpoddecoration",
  cpd: "clusterpoddecoration",
  podtransitionrule: "podtransitionrule",
  podtransitionrules: "podtransitionrule",
  ptr: "podtransitionrule",
  operationjob: "operationjob",
  operationjobs: "operationjob",
  opj: "operationjob",
};

export function parseClusterArgs(args: readonly string[]): Options {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: {
        namespace: { type: "string", short: "n" },
        kubeconfig: { type: "string" },
        context: { type: "string" },
        "webhook-configuration": { type: "string", default: DEFAULT_WEBHOOK_CONFIGURATION },
        output: { type: "string", short: "o", default: "text" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError([error instanceof Error ? error.message : String(error), EXPLAIN_CLUSTER_USAGE]);
  }
  // `pod NAME` or `pod/NAME`, as kubectl takes them.
  const positionals = parsed.positionals.flatMap((positional, index) => (index === 0 && positional.includes("/") ? positional.split("/", 2) : [positional]));
  if (positionals.length !== 2) throw new UsageError(["expected a kind (pod, poddecoration, clusterpoddecoration, podtransitionrule or operationjob) and a name", EXPLAIN_CLUSTER_USAGE]);
  const [kindArg = "", name = ""] = positionals;
  const kind = Object.hasOwn(KINDS, kindArg.toLowerCase()) ? KINDS[kindArg.toLowerCase()] : undefined;
  if (kind === undefined) throw new UsageError([`unknown kind ${JSON.stringify(kindArg)}: pod, poddecoration (pd), clusterpoddecoration (cpd), podtransitionrule (ptr) or operationjob (opj)`, EXPLAIN_CLUSTER_USAGE]);
  const { values } = parsed;
  const output = OUTPUTS.find((candidate) => candidate === values.output);
  if (output === undefined) throw new UsageError([`-o ${values.output ?? ""}: supported values: ${OUTPUTS.join(", ")}`, EXPLAIN_CLUSTER_USAGE]);
  return {
    kind,
    name,
    namespace: values.namespace,
    kubeconfig: values.kubeconfig,
    context: values.context,
    webhookConfiguration: values["webhook-configuration"] ?? DEFAULT_WEBHOOK_CONFIGURATION,
    output,
  };
}

export const explainCluster: Command = async (args, io) => {
  const options = parseClusterArgs(args);
  let config;
  try {
    config = loadKubectlConfig({ kubeconfig: options.kubeconfig, context: options.context });
  } catch (error) {
    throw new UsageError(`kubeconfig: ${error instanceof Error ? error.message : String(error)}`);
  }
  const namespace = options.namespace ?? contextNamespace(config);
  const cluster = new ClusterReader(createKubeClient(config), options.webhookConfiguration);
  const { client } = cluster;
  if (options.kind === "podtransitionrule") {
    const [transitionRule, pods] = await Promise.all([
      read(() => client.kusion.podTransitionRules.get(namespace, options.name), `podtransitionrule ${namespace}/${options.name}`),
      read(() => client.core.pods.list(namespace), `pods in ${namespace}`),
    ]);
    const report = explainTransitionRule(transitionRule as unknown as PodTransitionRule, pods);
    io.stdout(options.output === "json" ? `${JSON.stringify(report, null, 2)}\n` : options.output === "yaml" ? toYaml(report) : formatTransitionRuleReport(report));
    return 0;
  }
  if (options.kind === "operationjob") {
    const [job, pods] = await Promise.all([
      read(() => client.kusion.operationJobs.get(namespace, options.name), `operationjob ${namespace}/${options.name}`),
      read(() => client.core.pods.list(namespace), `pods in ${namespace}`),
    ]);
    const report = explainOperationJob(job as unknown as OperationJob, pods);
    io.stdout(options.output === "json" ? `${JSON.stringify(report, null, 2)}\n` : options.output === "yaml" ? toYaml(report) : formatOperationJobReport(report));
    return 0;
  }
  let report: PodReport | DecorationReport;
  if (options.kind === "clusterpoddecoration") {
    const cpd = await read(() => client.kusion.clusterPodDecorations.get("", options.name), `clusterpoddecoration ${options.name}`) as unknown as ClusterPodDecoration;
    report = await explainFleet(cluster, cpd);
  } else {
    const subject: object = await read<object>(() => (options.kind === "pod" ? client.core.pods.get(namespace, options.name) : client.kusion.podDecorations.get(namespace, options.name)), `${options.kind} ${namespace}/${options.name}`);
    const view = await cluster.view(namespace);
    report = options.kind === "pod" ? explainPod(subject as Pod, view) : explainDecoration(subject as unknown as PodDecoration, view);
  }
  if (options.output === "json") io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else if (options.output === "yaml") io.stdout(toYaml(report));
  else io.stdout(report.kind === "PodExplanation" ? formatPodReport(report) : formatDecorationReport(report));
  return 0;
};

async function read<T>(get: () => Promise<T>, what: string): Promise<T> {
  try {
    return await get();
  } catch (error) {
    if (isNotFound(error)) throw new UsageError(`${what} not found`);
    throw new UsageError(`reading ${what}: ${statusMessage(error)}${causeOf(error)}`);
  }
}

/** fetch reports an unreachable server as "fetch failed"; the cause says why. */
function causeOf(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause instanceof Error ? ` (${cause.message})` : "";
}

/** A ClusterPodDecoration's pods by state, over every namespace it selects now (those labelled out are named from its status). */
async function explainFleet(cluster: ClusterReader, cpd: ClusterPodDecoration): Promise<DecorationReport> {
  const namespaces = await cluster.namespaces();
  const selected = namespaces.filter((namespace) => selectsNamespace(cpd, namespace)).map((namespace) => namespace.metadata?.name ?? "");
  const views = new Map(await Promise.all(selected.map(async (namespace) => [namespace, await cluster.view(namespace)] as const)));
  const condition = cpd.status?.conditions?.find((candidate) => candidate.type === "TemplateValid" && candidate.status === "False");
  return explainClusterDecoration(cpd, views, {
    renderError: condition === undefined ? undefined : `TemplateValid is False (${condition.reason ?? ""}): ${condition.message ?? ""}`,
    warnings: cpd.status?.namespaces?.some((entry) => (entry.keptPods ?? 0) > 0) === true
      ? [`namespaces it no longer selects keep what their pods have (status.namespaces: ${cpd.status.namespaces.filter((entry) => (entry.keptPods ?? 0) > 0).map((entry) => `${entry.name} ${entry.keptPods}`).join(", ")}); they are not listed here`]
      : [],
  });
}

function selectsNamespace(cpd: Pick<ClusterPodDecoration, "spec">, namespace: Namespace): boolean {
  const name = namespace.metadata?.name ?? "";
  return selectorMatches(cpd.spec.namespaceSelector, namespaceSelectionLabels(name, namespace.metadata?.labels));
}

/** What explain reads, each object once per run: namespaces, ClusterPodDecorations, each namespace's pods and view. */
class ClusterReader {
  readonly client: Client;
  readonly #webhookConfiguration: string;
  readonly #views = new Map<string, Promise<ClusterView>>();
  readonly #pods = new Map<string, Promise<Pod[]>>();
  readonly #fleets = new Map<string, Promise<FleetPods>>();
  #namespaces: Promise<Namespace[]> | undefined;
  #clusterDecorations: Promise<{ decorations: ClusterPodDecoration[]; warning?: string }> | undefined;
  #webhook: Promise<ClusterView["webhook"]> | undefined;

  constructor(client: Client, webhookConfiguration: string) {
    this.client = client;
    this.#webhookConfiguration = webhookConfiguration;
  }

  namespaces(): Promise<Namespace[]> {
    return (this.#namespaces ??= read(() => this.client.core.namespaces.list(), "namespaces"));
  }

  view(namespace: string): Promise<ClusterView> {
    let view = this.#views.get(namespace);
    if (view === undefined) this.#views.set(namespace, (view = this.#read(namespace)));
    return view;
  }

  pods(namespace: string): Promise<Pod[]> {
    let pods = this.#pods.get(namespace);
    if (pods === undefined) this.#pods.set(namespace, (pods = read(async () => (await this.client.core.pods.list(namespace)) as Pod[], `pods in ${namespace}`)));
    return pods;
  }

  // A namespace user may not read cluster-scoped objects: the report then says what it leaves out.
  #clusterDecorationsRead(): Promise<{ decorations: ClusterPodDecoration[]; warning?: string }> {
    return (this.#clusterDecorations ??= this.client.kusion.clusterPodDecorations.list().then(
      (decorations) => ({ decorations: decorations as unknown as ClusterPodDecoration[] }),
      (error: unknown) => ({ decorations: [], warning: `ClusterPodDecorations could not be read (${statusMessage(error)}); those decorating the namespace are left out` }),
    ));
  }

  async #read(namespace: string): Promise<ClusterView> {
    const [namespaceObject, decorations, pods, webhook, cluster] = await Promise.all([
      read(() => this.client.core.namespaces.get(namespace), `namespace ${namespace}`),
      read(() => this.client.kusion.podDecorations.list(namespace), `poddecorations in ${namespace}`),
      this.pods(namespace),
      (this.#webhook ??= podWebhook(this.client, this.#webhookConfiguration)),
      this.#clusterDecorationsRead(),
    ]);
    const warnings: string[] = cluster.warning === undefined ? [] : [cluster.warning];
    const selecting = cluster.decorations.filter((cpd) => selectsNamespace(cpd, namespaceObject));
    const own = decorations as unknown as PodDecoration[];
    const renderErrorsOf = await renderErrors(this.client, namespace, own, warnings);
    for (const cpd of selecting) {
      const condition = cpd.status?.conditions?.find((candidate) => candidate.type === "TemplateValid" && candidate.status === "False");
      if (condition !== undefined) renderErrorsOf.set(clusterKey(cpd.metadata.name ?? ""), `TemplateValid is False (${condition.reason ?? ""}): ${condition.message ?? ""}`);
    }
    const partitioned = selecting.filter((cpd) => cpd.spec.updateStrategy?.rollingUpdate?.partition !== undefined);
    const fleets = new Map<string, FleetPods>();
    await Promise.all(partitioned.map(async (cpd) => {
      try {
        fleets.set(clusterKey(cpd.metadata.name ?? ""), await this.#fleet(cpd));
      } catch (error) {
        // A namespace user may not list namespaces or other namespaces' pods.
        warnings.push(`ClusterPodDecoration ${cpd.metadata.name ?? ""}: the pods of the other namespaces it selects could not be read (${error instanceof Error ? error.message : String(error)}); its partition is counted over this namespace's pods only`);
      }
    }));
    return {
      namespaceLabels: namespaceObject.metadata?.labels ?? {},
      decorations: [...own, ...selecting.map((cpd) => asSeenFrom(cpd, namespace))],
      pods,
      webhook,
      renderErrors: renderErrorsOf,
      warnings,
      fleet: (decoration) => fleets.get(decorationKey(decoration)),
    };
  }

  /** A partitioned cluster decoration's pods: those of every namespace it selects (its partition counts them all), read once per run. */
  #fleet(cpd: ClusterPodDecoration): Promise<FleetPods> {
    const name = cpd.metadata.name ?? "";
    let fleet = this.#fleets.get(name);
    if (fleet === undefined) {
      this.#fleets.set(name, (fleet = (async () => {
        const selected = (await this.namespaces()).filter((candidate) => selectsNamespace(cpd, candidate));
        const labels = new Map(selected.map((candidate) => [candidate.metadata?.name ?? "", namespaceSelectionLabels(candidate.metadata?.name ?? "", candidate.metadata?.labels)]));
        const pods = await Promise.all([...labels.keys()].map((namespace) => this.pods(namespace)));
        return { pods: pods.flat(), namespaceLabels: (namespace: string) => labels.get(namespace) };
      })()));
    }
    return fleet;
  }
}

async function podWebhook(client: Client, name: string): Promise<ClusterView["webhook"]> {
  let configuration: MutatingWebhookConfiguration;
  try {
    configuration = await client.admission.webhookConfigurations.get("MutatingWebhookConfiguration", name);
  } catch (error) {
    if (isNotFound(error)) return { configuration: name, webhook: undefined };
    return { unreadable: `MutatingWebhookConfiguration ${name} could not be read (${statusMessage(error)}); whether the webhook sees the pod is unknown` };
  }
  const webhook = (configuration.webhooks ?? []).find((candidate) =>
    (candidate.rules ?? []).some((rule) =>
      (rule.resources ?? []).some((resource) => resource === "pods" || resource === "*") &&
      (rule.apiGroups ?? []).some((group) => group === "" || group === "*") &&
      (rule.operations ?? []).some((operation) => operation === "CREATE" || operation === "*")));
  const result: PodWebhook = {
    configuration: name,
    webhook: webhook === undefined
      ? undefined
      : {
        name: webhook.name,
        ...(webhook.namespaceSelector === undefined ? {} : { namespaceSelector: webhook.namespaceSelector as LabelSelector }),
        ...(webhook.objectSelector === undefined ? {} : { objectSelector: webhook.objectSelector as LabelSelector }),
        ...(webhook.matchConditions === undefined ? {} : { matchConditions: webhook.matchConditions }),
      },
  };
  return result;
}

/**
 * The last render error of each decoration: the TemplateValid condition when it is False,
 * else the newest TemplateInvalid Event about the decoration's updated revision.
 */
async function renderErrors(client: Client, namespace: string, decorations: readonly PodDecoration[], warnings: string[]): Promise<Map<string, string>> {
  const errors = new Map<string, string>();
  const events = await client.core.events
    .list(namespace, { fieldSelector: "involvedObject.kind=PodDecoration,reason=TemplateInvalid" })
    .catch((error: unknown) => {
      // The status condition still tells; only the Events' account is missing.
      warnings.push(`Events in ${namespace} could not be read (${statusMessage(error)}); render errors come from status conditions only`);
      return [];
    });
  for (const decoration of decorations) {
    const name = decoration.metadata.name ?? "";
    const condition = decoration.status?.conditions?.find((candidate) => candidate.type === "TemplateValid");
    if (condition?.status === "False") {
      errors.set(name, `TemplateValid is False (${condition.reason ?? ""}): ${condition.message ?? ""}`);
      continue;
    }
    const revision = decoration.status?.updatedRevision;
    const latest = events
      .filter((event) => event.involvedObject.name === name && revision !== undefined && (event.message ?? "").startsWith(`revision ${revision}:`))
      .sort((a, b) => eventTime(b) - eventTime(a))[0];
    if (latest !== undefined) errors.set(name, `Event TemplateInvalid: ${latest.message ?? ""}`);
  }
  return errors;
}

function eventTime(event: { lastTimestamp?: string; eventTime?: string; metadata?: { creationTimestamp?: string } }): number {
  const value = event.lastTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp;
  return value === undefined ? 0 : Date.parse(value);
}
