import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { contextNamespace, loadKubeConfig, loadKubectlConfig } from "../../src/kube/kubeconfig.ts";

const config = (server: string) => `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

describe("loadKubeConfig", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "kubeconfig-test-"));
    await writeFile(join(dir, "flag"), config("https://flag.example:6443"));
    await writeFile(join(dir, "env"), config("https://env.example:6443"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("prefers the --kubeconfig flag over everything else", () => {
    vi.stubEnv("KUBECONFIG", join(dir, "env"));
    const loaded = loadKubeConfig({ kubeconfig: join(dir, "flag"), inCluster: () => true });
    expect(loaded.source).toBe("flag");
    expect(loaded.config.getCurrentCluster()?.server).toBe("https://flag.example:6443");
  });

  it("uses $KUBECONFIG when there is no flag, even inside a cluster", () => {
    vi.stubEnv("KUBECONFIG", join(dir, "env"));
    const loaded = loadKubeConfig({ inCluster: () => true });
    expect(loaded.source).toBe("env");
    expect(loaded.config.getCurrentCluster()?.server).toBe("https://env.example:6443");
  });

  it("falls back to the in-cluster service account", () => {
    vi.stubEnv("KUBECONFIG", "");
    vi.stubEnv("KUBERNETES_SERVICE_HOST", "10.0.0.1");
    vi.stubEnv("KUBERNETES_SERVICE_PORT", "443");
    const loaded = loadKubeConfig({ inCluster: () => true });
    expect(loaded.source).toBe("in-cluster");
    expect(loaded.config.getCurrentCluster()?.server).toBe("https://10.0.0.1:443");
  });

  it("ends at the default loader outside a cluster", () => {
    vi.stubEnv("KUBECONFIG", "");
    vi.stubEnv("HOME", dir);
    expect(loadKubeConfig({ inCluster: () => false }).source).toBe("default");
  });
});

const twoContexts = (server: string) => `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}"}}, {name: d, cluster: {server: "https://other.example:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}, {name: y, context: {cluster: d, user: u, namespace: shop}}]
current-context: x
`;

describe("loadKubectlConfig (kubectl's rules, for explain)", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "kubectl-config-test-"));
    await writeFile(join(dir, "flag"), twoContexts("https://flag.example:6443"));
    await writeFile(join(dir, "env-a"), twoContexts("https://env.example:6443"));
    await mkdir(join(dir, "home", ".kube"), { recursive: true });
    await writeFile(join(dir, "home", ".kube", "config"), twoContexts("https://home.example:6443"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("prefers --kubeconfig, then $KUBECONFIG, then ~/.kube/config", () => {
    vi.stubEnv("HOME", join(dir, "home"));
    vi.stubEnv("KUBECONFIG", join(dir, "env-a"));
    expect(loadKubectlConfig({ kubeconfig: join(dir, "flag") }).getCurrentCluster()?.server).toBe("https://flag.example:6443");
    expect(loadKubectlConfig().getCurrentCluster()?.server).toBe("https://env.example:6443");
    vi.stubEnv("KUBECONFIG", "");
    expect(loadKubectlConfig().getCurrentCluster()?.server).toBe("https://home.example:6443");
  });

  it("switches to --context and takes its namespace, else default", () => {
    const chosen = loadKubectlConfig({ kubeconfig: join(dir, "flag"), context: "y" });
    expect(chosen.getCurrentCluster()?.server).toBe("https://other.example:6443");
    expect(contextNamespace(chosen)).toBe("shop");
    expect(contextNamespace(loadKubectlConfig({ kubeconfig: join(dir, "flag") }))).toBe("default");
  });

  it("refuses a context the kubeconfig does not have", () => {
    expect(() => loadKubectlConfig({ kubeconfig: join(dir, "flag"), context: "nope" })).toThrow('context "nope" does not exist in the kubeconfig');
  });
});
