// Runs `pod-decorator serve` as a real child process against a control plane given by its
// kubeconfig file, with the API server calling it over HTTPS at a loopback URL, exactly as
// `make demo` does. No test-runner dependency: e2e tests (operator.ts) and benchmarks use it.
import { spawn, type ChildProcess } from "node:child_process";
import { request as httpsRequest } from "node:https";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { eventually, uniqueName } from "./polling.ts";

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

export interface ServeProcess {
  port: number;
  metricsPort: number;
  child: ChildProcess;
  /** Everything the process logged so far (JSON lines). */
  logs(): string;
  /** SIGTERM, wait for a clean exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** Sends a signal (e.g. SIGKILL) and waits for the process to end. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export interface ServeProcessOptions {
  /** The kubeconfig file serve (and the readiness probe) use. */
  kubeconfig: string;
  /** Extra flags; by default --self-signed with the webhook configurations pointing here. */
  args?: readonly string[];
  /** Replaces the TLS flags (e.g. certificate files). */
  tlsArgs?: readonly string[];
  /** Wait until the API server demonstrably calls this process (default true). */
  waitForWebhook?: boolean;
  /** Remove the webhook configurations when stopped, so later tests are not refused (default true). */
  removeWebhookConfigurations?: boolean;
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? done(address.port) : fail(new Error("no port"))));
    });
  });
}

export function loadKubeConfigFile(path: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(path);
  return config;
}

export async function startServeProcess(options: ServeProcessOptions): Promise<ServeProcess> {
  const config = loadKubeConfigFile(options.kubeconfig);
  const [port, metricsPort] = [await freePort(), await freePort()];
  const url = `https://127.0.0.1:${port}`;
  const args = [
    main, "serve",
    `--kubeconfig=${options.kubeconfig}`,
    "--webhook-host=127.0.0.1",
    `--webhook-port=${port}`,
    `--metrics-port=${metricsPort}`,
    `--webhook-config-url=${url}`,
    "--namespace=pod-decorator-system",
    ...(options.tlsArgs ?? ["--self-signed"]),
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));

  const serve: ServeProcess = {
    port,
    metricsPort,
    child,
    logs: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const code = await exited;
      if (options.removeWebhookConfigurations ?? true) await removeWebhookConfigurations(config);
      return code;
    },
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };

  try {
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${output}`);
      return (await readyz(port)) ? true : undefined;
    }, 30_000, "pod-decorator serve to be ready");
    if (options.waitForWebhook ?? true) await waitUntilCalled(config);
  } catch (error) {
    await serve.kill("SIGKILL");
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- serve output ---\n${output}`, { cause: error });
  }
  return serve;
}

export async function removeWebhookConfigurations(config: KubeConfig): Promise<void> {
  const admission = config.makeApiClient(AdmissionregistrationV1Api);
  await admission.deleteMutatingWebhookConfiguration({ name: "pod-decorator" }).catch(() => undefined);
  await admission.deleteValidatingWebhookConfiguration({ name: "pod-decorator" }).catch(() => undefined);
}

function readyz(port: number): Promise<boolean> {
  return new Promise((done) => {
    // The harness only asks whether it is up; the API server is what verifies the CA.
    const request = httpsRequest({ host: "127.0.0.1", port, path: "/readyz", rejectUnauthorized: false, timeout: 2000 }, (response) => {
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
  const core = config.makeApiClient(CoreV1Api);
  const custom = config.makeApiClient(CustomObjectsApi);
  const namespace = uniqueName("probe");
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  try {
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
    });
    await eventually(async () => {
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
