// Runs `pod-decorator serve` as a real child process against a control plane given by its
// kubeconfig file, with the API server calling it over HTTPS at a loopback URL, exactly as
// `make demo` does. No test-runner dependency: e2e tests (operator.ts) and benchmarks use it.
import { spawn, type ChildProcess } from "node:child_process";
import { request as httpsRequest } from "node:https";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { eventually, uniqueName } from "./polling.ts";
import { freePorts } from "../controlplane/processes.ts";
import { apiClient } from "../../src/kube/api-client.ts";

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

/** The namespace serve is told it runs in: its leader-election Lease lives there (the chart creates it). */
export const SERVE_NAMESPACE = "pod-decorator-system";

export interface ServeProcess {
  port: number;
  metricsPort: number;
  /** /healthz and /readyz over plain HTTP, from serve's health thread. */
  healthPort: number;
  child: ChildProcess;
  /** Everything the process logged so far (JSON lines). */
  logs(): string;
  /** Resolves once the output contains `text`; rejects when the process exits first, or after `timeoutMs`. */
  waitForLog(text: string, timeoutMs: number): Promise<void>;
  /** SIGTERM, wait for a clean exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** Sends a signal (e.g. SIGKILL) and waits for the process to end. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export interface ServeProcessOptions {
  /** serve's kubeconfig file: its identity and API server. */
  kubeconfig: string;
  /** The kubeconfig the harness itself uses (probe, clean-up); serve's when omitted. */
  adminKubeconfig?: string;
  /** Extra flags; by default --self-signed with the webhook configurations pointing here. */
  args?: readonly string[];
  /** Replaces the TLS flags (e.g. certificate files). */
  tlsArgs?: readonly string[];
  /** Wait until the API server demonstrably calls this process (default true). */
  waitForWebhook?: boolean;
  /** Remove the webhook configurations when stopped, so later tests are not refused (default true). */
  removeWebhookConfigurations?: boolean;
  /**
   * Serve as a chart's pod does: the webhook configurations exist already and serve only patches
   * their caBundle (no --webhook-config-url, which needs cluster-admin). Every other flag then
   * comes from args, and these are the ports they set.
   */
  existingWebhookConfigurations?: { port: number; metricsPort: number; healthPort: number };
  /** Extra environment (e.g. POD_NAMESPACE, as a pod's downward API sets it). */
  env?: Readonly<Record<string, string>>;
  /** The API server the "webhook is called" probe goes through (default: the admin kubeconfig's). */
  probeConfig?: KubeConfig;
  /** How long serve may take to sync its caches (default DEFAULT_SYNC_TIMEOUT_MS). */
  syncTimeoutMs?: number;
  /** The webhook port, when it must be known before serve starts (default: a free one). */
  webhookPort?: number;
  /** What the harness presents to a serve run with --client-ca-file. */
  clientCertificate?: { certPem: string; keyPem: string };
  /**
   * The command run as `pod-decorator`, up to and with its script (default: this node running
   * src/cli/main.ts through its type stripping); a benchmark passes the compiled program with the
   * image's node flags, in a memory cgroup.
   */
  command?: readonly [string, ...string[]];
}

/**
 * Serve syncs its caches in seconds; the bound is many times that, for a loaded shared machine's
 * slow start, and is there so that a serve that hangs fails the test with its output instead of
 * running into the test's own timeout without a word.
 */
export const DEFAULT_SYNC_TIMEOUT_MS = 120_000;
/** How much of serve's output a failed start shows. */
const OUTPUT_TAIL_CHARS = 8000;

export function loadKubeConfigFile(path: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(path);
  return config;
}

export async function startServeProcess(options: ServeProcessOptions): Promise<ServeProcess> {
  const config = loadKubeConfigFile(options.adminKubeconfig ?? options.kubeconfig);
  const existing = options.existingWebhookConfigurations;
  const [port = 0, metricsPort = 0, healthPort = 0] = existing === undefined
    ? options.webhookPort === undefined ? await freePorts(3) : [options.webhookPort, ...await freePorts(2)]
    : [existing.port, existing.metricsPort, existing.healthPort];
  const url = `https://127.0.0.1:${port}`;
  const [executable, ...command] = options.command ?? [process.execPath, main];
  const args = existing !== undefined
    ? [...command, "serve", `--kubeconfig=${options.kubeconfig}`, ...(options.args ?? [])]
    : [
      ...command, "serve",
      `--kubeconfig=${options.kubeconfig}`,
      "--webhook-host=127.0.0.1",
      `--webhook-port=${port}`,
      `--metrics-port=${metricsPort}`,
      `--health-port=${healthPort}`,
      `--webhook-config-url=${url}`,
      `--namespace=${SERVE_NAMESPACE}`,
      ...(options.tlsArgs ?? ["--self-signed"]),
      ...(options.args ?? []),
    ];
  const child = spawn(executable, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env } });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));

  const serve: ServeProcess = {
    port,
    metricsPort,
    healthPort,
    child,
    logs: () => output,
    waitForLog: (text, timeoutMs) => waitForOutput(child, () => output, exited, text, timeoutMs),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const code = await exited;
      // The caller asserts the exit code; this says why it is not 0.
      if (code !== 0) console.error(`serve exited with code ${code}, signal ${child.signalCode ?? "none"}; the end of its output:\n${output.slice(-4000)}`);
      if (options.removeWebhookConfigurations ?? true) await removeWebhookConfigurations(config);
      return code;
    },
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };

  try {
    await waitForOutput(child, () => output, exited, '"msg":"caches synced; ready"', options.syncTimeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS);
    // Then /readyz must agree.
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}`);
      return (await readyz(port, options.clientCertificate)) ? true : undefined;
    }, 30_000, "pod-decorator serve to be ready");
    if (options.waitForWebhook ?? true) await waitUntilCalled(options.probeConfig ?? config);
  } catch (error) {
    await serve.kill("SIGKILL");
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- the end of serve's output ---\n${output.slice(-OUTPUT_TAIL_CHARS)}`, { cause: error });
  }
  return serve;
}

/**
 * Resolves once serve's output contains `text`; rejects at once when the process exits first,
 * or after `timeoutMs`.
 */
function waitForOutput(child: ChildProcess, output: () => string, exited: Promise<number | null>, text: string, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const settle = (done: () => void) => {
      clearTimeout(timer);
      child.stdout?.off("data", onOutput);
      child.stderr?.off("data", onOutput);
      done();
    };
    const onOutput = () => {
      if (output().includes(text)) settle(resolve);
    };
    const timer = setTimeout(() => settle(() => reject(new Error(`timed out after ${timeoutMs}ms waiting for serve to log ${text}`))), timeoutMs);
    child.stdout?.on("data", onOutput);
    child.stderr?.on("data", onOutput);
    void exited.then((code) => settle(() => reject(new Error(`serve exited with code ${code}, signal ${child.signalCode ?? "none"}, before it logged ${text}`))));
    onOutput();
  });
}

export async function removeWebhookConfigurations(config: KubeConfig): Promise<void> {
  const admission = apiClient(config, AdmissionregistrationV1Api);
  await admission.deleteMutatingWebhookConfiguration({ name: "pod-decorator" }).catch(() => undefined);
  await admission.deleteValidatingWebhookConfiguration({ name: "pod-decorator" }).catch(() => undefined);
}

function readyz(port: number, client: ServeProcessOptions["clientCertificate"]): Promise<boolean> {
  return new Promise((done) => {
    // The harness only asks whether it is up; the API server is what verifies the CA.
    const certificate = client === undefined ? {} : { cert: client.certPem, key: client.keyPem };
    const request = httpsRequest({ host: "127.0.0.1", port, path: "/readyz", rejectUnauthorized: false, timeout: 2000, ...certificate }, (response) => {
      response.resume();
      done(response.statusCode === 200);
    });
    request.on("error", () => done(false));
    request.on("timeout", () => request.destroy());
    request.end();
  });
}

/**
 * The API server picks up webhook configurations after a short delay: a PodDecoration in a
 * throwaway namespace must show on a dry-run pod before the webhook counts as active.
 */
async function waitUntilCalled(config: KubeConfig): Promise<void> {
  const core = apiClient(config, CoreV1Api);
  const custom = apiClient(config, CustomObjectsApi);
  const namespace = uniqueName("probe");
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  try {
    await eventually(async () => {
      await custom.createNamespacedCustomObject({
        group: "apps.kusionstack.io",
        version: "v1alpha1",
        namespace,
        plural: "poddecorations",
        body: {
          apiVersion: "apps.kusionstack.io/v1alpha1",
          kind: "PodDecoration",
          metadata: { name: "probe" },
          spec: { selector: {}, template: { metadata: [{ annotations: { "e2e.pod-decorator.io/probe": "yes" } }] } },
        },
      }).catch((error: unknown) => {
        // Made by an earlier round (409); any other refusal, such as the API server not
        // trusting serve while its caBundle is being published, is tried again.
        if ((error as { code?: number }).code !== 409) throw error;
      });
      const pod = await core.createNamespacedPod({
        namespace,
        dryRun: "All",
        body: { metadata: { name: "probe" }, spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] } },
      });
      if (pod.metadata?.annotations?.["e2e.pod-decorator.io/probe"] === "yes") return true;
      await sleep(100);
      return undefined;
    }, 30_000, "the API server to call the pod webhook");
  } finally {
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }
}

/** The warnings and errors a serve process logged (the last `limit`), for a failed test's output. */
export function troubleLines(logs: string, limit = 60): string {
  return logs.split("\n").filter((line) => /"level":(40|50|60)/.test(line)).slice(-limit).join("\n");
}
