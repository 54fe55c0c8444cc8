// For the reliability tests that take the controller's kube-apiserver away mid-rollout: a
// private API server on the run's etcd (the test kills and restarts it; the test itself and the
// kubelet keep using the shared one), serve's kubeconfig for it written to a file, and the
// kubelet the rollouts run against — set up before the file's tests, torn down after them.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { privateApiServer, type PrivateApiServer } from "../runtime-control-plane.ts";
import { startKubelet, type Kubelet } from "./kubelet.ts";

export interface ControllerApiServer {
  readonly api: PrivateApiServer;
  /** serve's kubeconfig: the private API server. */
  readonly kubeconfig: string;
}

/** Registers the file's setup and teardown; read the fields from within its tests. */
export function useControllerApiServer(): ControllerApiServer {
  let api: PrivateApiServer | undefined;
  let kubelet: Kubelet | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    api = await privateApiServer();
    dir = await mkdtemp(join(tmpdir(), "pod-decorator-private-apiserver-"));
    await writeFile(join(dir, "kubeconfig"), api.config.exportConfig(), { mode: 0o600 });
    kubelet = await startKubelet();
  });
  afterAll(async () => {
    await kubelet?.stop();
    await api?.kill();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is read before the file's setup ran`);
    return value;
  };
  return {
    get api() {
      return started(api, "the private API server");
    },
    get kubeconfig() {
      return join(started(dir, "the kubeconfig"), "kubeconfig");
    },
  };
}
