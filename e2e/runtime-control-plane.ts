// A second kube-apiserver on the run's own etcd, started by the runtime tests so that they
// can kill and restart an API server without disturbing tests that use the shared one. It
// runs with exactly the shared server's flags (read from /proc), on another port, plus any
// flags a test adds (audit logging, admission plugins).
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { KubeConfig } from "@kubernetes/client-node";
import { inject } from "vitest";
import { RestTransport } from "../src/kube/rest-transport.ts";
import { freePort } from "./controlplane/processes.ts";

export interface PrivateApiServer {
  server: string;
  /** The run's kubeconfig pointed at this server. */
  config: KubeConfig;
  /** SIGKILL, as a crash: connections drop without goodbye. */
  kill(): Promise<void>;
  start(): Promise<void>;
}

interface ControlPlaneState {
  binary: string;
  pids: { "kube-apiserver"?: number };
}

export interface PrivateApiServerOptions {
  /** Added to the shared server's flags (a later flag wins over an earlier one). */
  extraFlags?: readonly string[];
}

export async function privateApiServer(options: PrivateApiServerOptions = {}): Promise<PrivateApiServer> {
  const dir = inject("controlPlaneDir");
  const state = JSON.parse(await readFile(join(dir, "state.json"), "utf8")) as ControlPlaneState;
  const sharedPid = state.pids["kube-apiserver"];
  if (sharedPid === undefined) throw new Error("the shared control plane has no kube-apiserver");
  const [, ...args] = readFileSync(`/proc/${sharedPid}/cmdline`, "utf8").split("\0").filter((part) => part !== "");
  const port = await freePort();
  const flags = [...args.map((arg) => (arg.startsWith("--secure-port=") ? `--secure-port=${port}` : arg)), ...(options.extraFlags ?? [])];
  const server = `https://127.0.0.1:${port}`;
  const shared = new KubeConfig();
  shared.loadFromFile(inject("kubeconfig"));
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: shared.getClusters().map((cluster) => ({ ...cluster, server })),
    users: shared.getUsers(),
    contexts: shared.getContexts(),
    currentContext: shared.getCurrentContext(),
  });
  const transport = new RestTransport(config, { requestTimeoutMs: 5_000 });
  let child: ChildProcess | undefined;
  const killOnExit = () => child?.kill("SIGKILL");
  process.once("exit", killOnExit);

  const api: PrivateApiServer = {
    server,
    config,
    async kill() {
      const running = child;
      if (running === undefined || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.kill("SIGKILL");
      await exited;
      child = undefined;
    },
    async start() {
      const log = openSync(join(dir, "logs", `private-apiserver-${port}.log`), "a");
      child = spawn(state.binary, flags, { stdio: ["ignore", log, log] });
      closeSync(log);
      const deadline = Date.now() + 90_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`private kube-apiserver exited with ${child.exitCode}`);
        try {
          await transport.getJson("/api/v1/namespaces/default");
          return;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await sleep(250);
        }
      }
    },
  };
  await api.start();
  return api;
}
