// Flags of `pod-decorator serve`, each also settable from the environment as
// POD_DECORATOR_<FLAG> (e.g. POD_DECORATOR_WEBHOOK_PORT=9443), flags winning.
import { parseArgs } from "node:util";
import type { LabelSelector } from "../api/label-selector.ts";
import { DEFAULT_EXCLUDED_NAMESPACES, type AdmissionScopeOptions } from "../decoration/admission-scope.ts";
import { isValidSelector } from "../decoration/selector.ts";
import { DEFAULT_ADMISSION_LIMITS } from "../webhook/admission-limits.ts";
import { DEFAULT_DECORATION_BOUNDS, type DecorationBounds } from "../decoration/engine-bounds.ts";
import { UsageError } from "./usage-error.ts";

export interface ServeOptions {
  kubeconfig: string | undefined;
  webhookHost: string;
  webhookPort: number;
  metricsPort: number;
  /** /healthz and /readyz in a thread of their own, plain HTTP; 0 disables. */
  healthPort: number;
  /** Connections open at once from one address to the webhook port; more are closed as they come. */
  maxConnectionsPerSource: number;
  tls: { certFile: string; keyFile: string; caFile: string | undefined } | { selfSigned: true; hosts: string[]; caSecret: string };
  /** The CA whose client certificate every webhook caller must present (the API server's); undefined: none asked. */
  clientCaFile: string | undefined;
  /** Outside a cluster: create the webhook configurations so the API server calls this URL. */
  webhookConfigUrl: string | undefined;
  /** Inside a cluster: the configurations are the chart's; patch their caBundle when self-signed. */
  webhookConfigName: string;
  failurePolicy: "Fail" | "Ignore";
  /**
   * Which pods the pod webhook is called for: what serve writes with --webhook-config-url, what
   * the chart renders from the same values, and what the controllers judge an eviction by.
   */
  scope: AdmissionScopeOptions;
  /** The controller's own namespace: never decorated, home of the leader-election Lease. */
  namespace: string;
  leaderElect: boolean;
  leaderElectionId: string;
  /** What a pod gets when a decoration cannot be rendered: refused, or admitted undecorated with a warning. */
  onDecorationError: "reject" | "admit";
  /** What one pod's decorations may cost, and what admission therefore refuses (DESIGN §10). */
  decorationBounds: DecorationBounds;
  /**
   * The usernames whose pod bookkeeping (revisions annotation, decoration labels) counts: the
   * controller's own identity. Empty: asked from the API server (SelfSubjectReview) at start.
   */
  controllerUsernames: string[];
  /** PodOpsLifecycle around CollaSet updates: off means pods are updated while in traffic. */
  podOpsLifecycle: boolean;
  /** Without protection finalizers, how long a pod is out of traffic before it is updated. */
  lifecycleDrainDelayMs: number;
  /** A lifecycle step waiting this long is reported (CollaSet condition and Event). */
  lifecycleStuckAfterMs: number;
  logLevel: string;
}

const flags = {
  kubeconfig: { type: "string" },
  "webhook-host": { type: "string" },
  "webhook-port": { type: "string" },
  "metrics-port": { type: "string" },
  "health-port": { type: "string" },
  "max-connections-per-source": { type: "string" },
  "tls-cert-file": { type: "string" },
  "tls-key-file": { type: "string" },
  "tls-ca-file": { type: "string" },
  "self-signed": { type: "boolean" },
  "client-ca-file": { type: "string" },
  "self-signed-hosts": { type: "string" },
  "self-signed-ca-secret": { type: "string" },
  "webhook-config-url": { type: "string" },
  "webhook-config-name": { type: "string" },
  "failure-policy": { type: "string" },
  "excluded-namespaces": { type: "string" },
  "cert-manager-namespace": { type: "string" },
  "namespace-opt-in": { type: "boolean" },
  "pod-namespace-selector": { type: "string" },
  "pod-object-selector": { type: "string" },
  namespace: { type: "string" },
  "leader-elect": { type: "boolean" },
  "leader-election-id": { type: "string" },
  "on-decoration-error": { type: "string" },
  "max-decorations-per-namespace": { type: "string" },
  "max-selection-rounds": { type: "string" },
  "controller-username": { type: "string" },
  "pod-ops-lifecycle": { type: "string" },
  "lifecycle-drain-delay": { type: "string" },
  "lifecycle-stuck-after": { type: "string" },
  "log-level": { type: "string" },
} as const;

export const serveUsage = `usage: pod-decorator serve [flags]

  --kubeconfig FILE            kubeconfig (default: $KUBECONFIG, then in-cluster, then ~/.kube/config)
  --webhook-host HOST          address the webhook listens on (default 0.0.0.0)
  --webhook-port PORT          HTTPS port of the admission webhooks and /healthz, /readyz (default 9443)
  --metrics-port PORT          Prometheus metrics on plain HTTP; 0 disables (default 8080)
  --health-port PORT           /healthz and /readyz on plain HTTP, answered by a thread of their own
                               so a flood of admission requests cannot stall them; 0 disables (default 8081)
  --max-connections-per-source N  connections open at once from one address to the webhook port; more
                               are closed as they come. The API server opens one per concurrent call
                               (default 512: twice the 256 calls answered at once)
  --tls-cert-file FILE         serving certificate, reloaded when the file changes
  --tls-key-file FILE          its private key
  --tls-ca-file FILE           with --webhook-config-url: the CA bundle the API server should trust
  --self-signed                issue a CA and serving certificate in process instead
  --client-ca-file FILE        require every webhook caller to present a client certificate signed by
                               this CA (the API server's, set in its AdmissionConfiguration); others
                               are refused at the TLS handshake
  --self-signed-hosts LIST     comma-separated DNS names/IPs for it (default 127.0.0.1,localhost)
  --self-signed-ca-secret NAME without --webhook-config-url: the Secret in --namespace that holds the CA
                               every replica signs with (created by the first; default pod-decorator-webhook-ca)
  --webhook-config-url URL     outside a cluster: create the webhook configurations to call URL
  --webhook-config-name NAME   the configurations to patch the caBundle of (default pod-decorator)
  --failure-policy Fail|Ignore with --webhook-config-url (default Fail)
  --excluded-namespaces LIST   comma-separated namespaces whose pods the pod webhook is never called for
                               (default kube-system,kube-public,kube-node-lease; --namespace is always added)
  --cert-manager-namespace NS  cert-manager issues the serving certificate: its namespace is excluded too
  --namespace-opt-in           decorate only namespaces labelled poddecoration.kusionstack.io/injection=enabled
  --pod-namespace-selector JSON  further namespace conditions ({matchLabels, matchExpressions}), ANDed
  --pod-object-selector JSON   only pods matching this label selector are sent to the pod webhook
  --namespace NS               the controller's namespace (default $POD_NAMESPACE or pod-decorator-system)
  --leader-elect               run controllers only while holding the Lease
  --leader-election-id NAME    the Lease name (default pod-decorator)
  --on-decoration-error reject|admit  refuse a pod whose decoration fails, or admit it undecorated (default reject)
  --max-decorations-per-namespace N  PodDecorations one namespace may hold: admission refuses the one over
                               it; the newest beyond it (written while no webhook checked) are not applied
                               to new pods (default ${DEFAULT_DECORATION_BOUNDS.maxDecorationsPerNamespace})
  --max-selection-rounds N     how deep decorations may select labels other decorations set: N rounds
                               of selection, 1 = only the pod's own labels; a pod needing more goes
                               through --on-decoration-error, and admission refuses a decoration that
                               would make such a chain (default ${DEFAULT_DECORATION_BOUNDS.maxSelectionRounds})
  --controller-username LIST   comma-separated usernames whose revisions annotation on a new pod counts
                               (default: this process's own, asked from the API server)
  --pod-ops-lifecycle true|false  take CollaSet pods out of traffic (readiness gate
                               pod.kusionstack.io/service-ready) around each update (default true)
  --lifecycle-drain-delay DURATION  with no prot.podopslifecycle.kusionstack.io/* finalizer, how long
                               a pod stays out of traffic (from when the kubelet marked it not
                               Ready) before it is updated (default 5s)
  --lifecycle-stuck-after DURATION  report a lifecycle step waiting this long (default 60s)
  --log-level LEVEL            pino level (default info)

Every flag can also be set as POD_DECORATOR_<FLAG> in the environment.`;

export function parseServeOptions(argv: readonly string[], env: NodeJS.ProcessEnv): ServeOptions {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: flags, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const value = (name: keyof typeof flags): string | undefined => {
    const flag = parsed[name];
    if (typeof flag === "string") return flag;
    if (typeof flag === "boolean") return String(flag);
    return env[`POD_DECORATOR_${name.toUpperCase().replaceAll("-", "_")}`];
  };
  const bool = (name: keyof typeof flags): boolean => {
    const text = value(name);
    if (text === undefined || text === "" || text === "false") return false;
    if (text === "true") return true;
    throw new UsageError(`--${name}: expected true or false, got ${JSON.stringify(text)}`);
  };
  const port = (name: keyof typeof flags, fallback: number): number => {
    const text = value(name) ?? String(fallback);
    const number = Number(text);
    if (!Number.isInteger(number) || number < 0 || number > 65535) throw new UsageError(`--${name}: not a port: ${JSON.stringify(text)}`);
    return number;
  };
  const oneOf = <T extends string>(name: keyof typeof flags, allowed: readonly T[], fallback: T): T => {
    const text = value(name) ?? fallback;
    if (!(allowed as readonly string[]).includes(text)) throw new UsageError(`--${name}: must be one of ${allowed.join(", ")}, got ${JSON.stringify(text)}`);
    return text as T;
  };

  const positiveInteger = (name: keyof typeof flags, fallback: number): number => {
    const text = value(name) ?? String(fallback);
    const number = Number(text);
    if (!Number.isSafeInteger(number) || number < 1) throw new UsageError(`--${name}: not a positive integer: ${JSON.stringify(text)}`);
    return number;
  };
  const duration = (name: keyof typeof flags, fallbackMs: number): number => {
    const text = value(name);
    if (text === undefined) return fallbackMs;
    const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text);
    if (match === null) throw new UsageError(`--${name}: expected a duration such as 500ms, 5s or 1m, got ${JSON.stringify(text)}`);
    return Math.round(Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[match[2] as "ms" | "s" | "m"]);
  };
  const certFile = value("tls-cert-file");
  const keyFile = value("tls-key-file");
  const selfSigned = bool("self-signed");
  if (selfSigned && (certFile !== undefined || keyFile !== undefined)) {
    throw new UsageError("--self-signed and --tls-cert-file/--tls-key-file are exclusive");
  }
  if (!selfSigned && (certFile === undefined || keyFile === undefined)) {
    throw new UsageError("give --tls-cert-file and --tls-key-file, or --self-signed");
  }
  const webhookConfigUrl = value("webhook-config-url");
  if (webhookConfigUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(webhookConfigUrl);
    } catch {
      throw new UsageError(`--webhook-config-url: not a URL: ${JSON.stringify(webhookConfigUrl)}`);
    }
    if (url.protocol !== "https:") throw new UsageError("--webhook-config-url: the API server calls webhooks over https only");
    if (!selfSigned && value("tls-ca-file") === undefined) throw new UsageError("--webhook-config-url with certificate files needs --tls-ca-file (the CA the API server should trust)");
  }
  const selector = (name: keyof typeof flags): LabelSelector | undefined => {
    const text = value(name);
    if (text === undefined || text.trim() === "") return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UsageError(`--${name}: not JSON: ${JSON.stringify(text)}`);
    }
    if (!isValidSelector(parsed as LabelSelector)) throw new UsageError(`--${name}: not a valid label selector ({matchLabels, matchExpressions}): ${text}`);
    return parsed as LabelSelector;
  };
  const list = (name: keyof typeof flags): string[] | undefined => value(name)?.split(",").map((item) => item.trim()).filter((item) => item !== "");
  const namespace = value("namespace") ?? env.POD_NAMESPACE ?? "pod-decorator-system";
  const hosts = (value("self-signed-hosts") ?? "127.0.0.1,localhost").split(",").map((host) => host.trim()).filter((host) => host !== "");

  return {
    kubeconfig: value("kubeconfig"),
    webhookHost: value("webhook-host") ?? "0.0.0.0",
    webhookPort: port("webhook-port", 9443),
    metricsPort: port("metrics-port", 8080),
    healthPort: port("health-port", 8081),
    maxConnectionsPerSource: positiveInteger("max-connections-per-source", DEFAULT_ADMISSION_LIMITS.maxConnectionsPerSource),
    tls: selfSigned ? { selfSigned: true, hosts, caSecret: value("self-signed-ca-secret") ?? "pod-decorator-webhook-ca" } : { certFile: certFile!, keyFile: keyFile!, caFile: value("tls-ca-file") },
    clientCaFile: value("client-ca-file"),
    webhookConfigUrl,
    webhookConfigName: value("webhook-config-name") ?? "pod-decorator",
    failurePolicy: oneOf("failure-policy", ["Fail", "Ignore"], "Fail"),
    scope: {
      excludedNamespaces: list("excluded-namespaces") ?? DEFAULT_EXCLUDED_NAMESPACES,
      ownNamespace: namespace,
      certManagerNamespace: value("cert-manager-namespace"),
      optIn: bool("namespace-opt-in"),
      namespaceSelector: selector("pod-namespace-selector"),
      objectSelector: selector("pod-object-selector"),
    },
    namespace,
    leaderElect: bool("leader-elect"),
    leaderElectionId: value("leader-election-id") ?? "pod-decorator",
    onDecorationError: oneOf("on-decoration-error", ["reject", "admit"], "reject"),
    decorationBounds: {
      maxDecorationsPerNamespace: positiveInteger("max-decorations-per-namespace", DEFAULT_DECORATION_BOUNDS.maxDecorationsPerNamespace),
      maxSelectionRounds: positiveInteger("max-selection-rounds", DEFAULT_DECORATION_BOUNDS.maxSelectionRounds),
    },
    controllerUsernames: (value("controller-username") ?? "").split(",").map((name) => name.trim()).filter((name) => name !== ""),
    podOpsLifecycle: value("pod-ops-lifecycle") === undefined ? true : bool("pod-ops-lifecycle"),
    lifecycleDrainDelayMs: duration("lifecycle-drain-delay", 5000),
    lifecycleStuckAfterMs: duration("lifecycle-stuck-after", 60_000),
    logLevel: value("log-level") ?? "info",
  };
}
