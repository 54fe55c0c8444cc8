// `pod-decorator explain` against the real control plane (the simulated kubelet is not needed:
// explain involves no container behaviour), with `serve` running the webhook and controllers:
// one world where every reason a decoration is not on a pod holds, explained through the CLI
// as a user runs it (--kubeconfig, $KUBECONFIG, and as the kubectl plugin `kubectl pd`).
import { execFile } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject } from "vitest";
import { parse } from "yaml";
import type { DecorationReport, PodReport } from "../src/cli/live-explanation.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import { explain, explainPodJson, verdict, type CliRun } from "./support/explain-cli.ts";
import { startOperator, type Operator } from "./support/operator.ts";

const main = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));
const group = { group: "apps.kusionstack.io", version: "v1alpha1", plural: "poddecorations" };

function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
  return new Promise((done) => {
    execFile(file, args, { env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr });
    });
  });
}

/** The report once the rollout's status has caught up with what `ready` looks for. */
function explainPodUntil(namespace: string, pod: string, ready: (report: PodReport) => boolean, what: string): Promise<PodReport> {
  return eventually(async () => {
    const report = await explainPodJson(namespace, pod);
    return ready(report) ? report : undefined;
  }, 30_000, what);
}

const reasonsOf = (report: PodReport, name: string) => report.decorations.find((candidate) => candidate.name === name)?.reasons.map((reason) => reason.reason) ?? [];

/** kubectl apply; admission warnings (the iscsi volume's) are expected on stderr. */
async function apply(yaml: string): Promise<void> {
  const result = await kubectl(["apply", "-f", "-"], yaml);
  expect(result.code, result.stderr).toBe(0);
}

function decoration(namespace: string, name: string, selector: Record<string, string>, body: string): string {
  const labels = Object.entries(selector).map(([key, value]) => `      ${key}: "${value}"`).join("\n");
  return `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  selector:
    matchLabels:
${labels}
${body}`;
}

/** `level`: an env var on the sidecar, a change the kubelet cannot make in place. */
const logging = (namespace: string, image: string, level?: string) => decoration(namespace, "logging", { tier: "logging" }, `  updateStrategy:
    rollingUpdate:
      partition: 1
      selector:
        matchLabels:
          canary: "true"
  template:
    containers:
      - name: logging-sidecar
        image: ${image}
${level === undefined ? "" : `        env: [{ name: LEVEL, value: ${level} }]\n`}`);

const mesh = (namespace: string, name: string, weight: number) => decoration(namespace, name, { tier: "mesh" }, `  injectStrategy:
    group: mesh
    weight: ${weight}
  template:
    containers:
      - name: ${name}-proxy
        image: envoy:1
`);

// Admission checks the common volume sources only; an iscsi volume without a target portal
// passes it and fails the controller's server-side dry run (TemplateValid False, an Event).
const broken = (namespace: string) => decoration(namespace, "broken", { tier: "broken" }, `  template:
    containers:
      - name: broken-sidecar
        image: busybox:1
        volumeMounts:
          - name: data
            mountPath: /data
    volumes:
      - name: data
        iscsi:
          iqn: iqn.2001-04.com.example:storage
`);

async function createPod(namespace: string, name: string, labels: Record<string, string>): Promise<{ creationTimestamp: string }> {
  const pod = await clients().core.createNamespacedPod({
    namespace,
    body: { metadata: { name, labels }, spec: { automountServiceAccountToken: false, containers: [{ name: "app", image: "app:1" }] } },
  });
  return { creationTimestamp: pod.metadata!.creationTimestamp!.toISOString() };
}

interface StoredStatus {
  metadata: { creationTimestamp?: string };
  status?: { updatedRevision?: string; conditions?: { type: string; status: string }[] };
}

async function stored(namespace: string, name: string): Promise<StoredStatus> {
  return (await clients().custom.getNamespacedCustomObject({ ...group, namespace, name })) as StoredStatus;
}

function revisionOf(namespace: string, name: string, unlike?: string): Promise<string> {
  return eventually(async () => {
    const revision = (await stored(namespace, name)).status?.updatedRevision;
    return revision !== undefined && revision !== unlike ? revision : undefined;
  }, 30_000, `the updated revision of ${name}`);
}

/**
 * Timestamps are whole seconds: waits until the API server stamps objects a second later than
 * `after`, so that what is created next is strictly newer (told by the server's own clock).
 */
async function serverClockPast(namespace: string, after: string): Promise<void> {
  await eventually(async () => {
    const probe = await clients().core.createNamespacedConfigMap({ namespace, body: { metadata: { generateName: "clock-" } } });
    return Date.parse(probe.metadata!.creationTimestamp!.toISOString()) > Date.parse(after) ? true : undefined;
  }, 10_000, "the API server's clock to pass the pod's creation second");
}

let operator: Operator;
beforeAll(async () => {
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
});

describe("pod-decorator explain against a cluster", () => {
  test("tells, for each reason, why a pod does not have a decoration's updated revision", async ({ namespace }) => {
    // A pod that exists before its decoration, whose template the API server then refuses.
    const early = await createPod(namespace, "early", { tier: "broken" });
    await serverClockPast(namespace, early.creationTimestamp);
    await apply(broken(namespace));
    await apply(mesh(namespace, "mesh-light", 1));
    await apply(mesh(namespace, "mesh-heavy", 5));
    await apply(logging(namespace, "fluent-bit:1"));
    await eventually(async () => ((await stored(namespace, "broken")).status?.conditions?.some((c) => c.type === "TemplateValid" && c.status === "False") === true ? true : undefined), 30_000, "TemplateValid False on broken");
    const [, , r1] = await Promise.all([revisionOf(namespace, "mesh-light"), revisionOf(namespace, "mesh-heavy"), revisionOf(namespace, "logging")]);

    await createPod(namespace, "meshed", { tier: "mesh" });
    for (const [name, canary] of [["log-a", "true"], ["log-b", "true"], ["log-c", "false"]] as const) await createPod(namespace, name, { tier: "logging", canary });
    await apply(logging(namespace, "fluent-bit:1", "debug"));
    const r2 = await revisionOf(namespace, "logging", r1);

    // Adding a sidecar to a live pod needs its recreation: the rollout reports it (recreatePolicy Never).
    const earlyReport = await explainPodUntil(namespace, "early", (report) => reasonsOf(report, "broken").includes("needs-recreation"), "the rollout to report early");
    expect(earlyReport.webhook.inScope).toBe(true);
    expect(verdict(earlyReport, "broken")).toMatchObject({ matches: true, state: "missing" });
    expect(reasonsOf(earlyReport, "broken")).toEqual(["created-before", "needs-recreation", "render-error"]);
    expect(verdict(earlyReport, "broken").reasons[1]!.detail).toMatch(/from no revision to broken-\w+ changes containers, volumes: more than images and labels or annotations; updateStrategy\.recreatePolicy of broken is not Evict/);
    expect(verdict(earlyReport, "broken").reasons[2]!.detail).toMatch(/iscsi\.targetPortal: Required value/);
    expect(verdict(earlyReport, "logging")).toMatchObject({ matches: false, state: "not-matched", reasons: [{ reason: "selector" }] });

    const meshed = await explainPodJson(namespace, "meshed");
    expect(verdict(meshed, "mesh-heavy")).toMatchObject({ state: "updated" });
    expect(verdict(meshed, "mesh-light")).toMatchObject({ matches: true, state: "excluded", reasons: [{ reason: "group", detail: "group mesh is already applied to the pod by mesh-heavy" }] });

    // Canaries log-a and log-b; partition 1 holds back the last of them in update order.
    const logA = await explainPodUntil(namespace, "log-a", (report) => reasonsOf(report, "logging").includes("needs-recreation"), "the rollout to report log-a");
    expect(verdict(logA, "logging")).toMatchObject({ state: "outdated", podRevision: r1, targetRevision: r2, reasons: [{ reason: "needs-recreation", detail: expect.stringContaining("changes containers") as string }] });
    expect(verdict(await explainPodJson(namespace, "log-b"), "logging")).toMatchObject({
      state: "held",
      podRevision: r1,
      targetRevision: r1,
      reasons: [{ reason: "partition", detail: "held by partition 1: position 2 of 2 in update order, and only the first 1 move" }],
    });
    expect(verdict(await explainPodJson(namespace, "log-c"), "logging")).toMatchObject({ state: "held", podRevision: r1, reasons: [{ reason: "canary-selector" }] });

    // The decoration's view: its pods by state, as text.
    const byState = await explain(["pd", "logging", "-n", namespace]);
    expect(byState.code, byState.stderr).toBe(0);
    expect(byState.stdout).toContain(`Updated revision:  ${r2}\n`);
    expect(byState.stdout).toContain(`  outdated (1):\n    log-a  has ${r1}, should have ${r2}\n`);
    expect(byState.stdout).toContain(`  held (2):\n    log-b  has ${r1}, should have ${r1}\n`);
    const asYaml = parse((await explain(["poddecoration/logging", "-n", namespace, "-o", "yaml"])).stdout) as DecorationReport;
    expect(Object.keys(asYaml.pods).sort()).toEqual(["held", "outdated"]);
  });

  test("says a namespace the webhook does not see is out of its scope", async ({ namespace }) => {
    const off = `${namespace}-off`;
    await clients().core.createNamespace({ body: { metadata: { name: off, labels: { "poddecoration.kusionstack.io/injection": "disabled", "e2e.pod-decorator.io/test": "true" } } } });
    try {
      await apply(mesh(off, "mesh-heavy", 5));
      await revisionOf(off, "mesh-heavy");
      await createPod(off, "meshed", { tier: "mesh" });
      // The rollout reports the undecorated pod too: only its recreation could add a sidecar.
      const report = await explainPodUntil(off, "meshed", (candidate) => reasonsOf(candidate, "mesh-heavy").includes("needs-recreation"), "the rollout to report meshed");
      expect(report.webhook.inScope).toBe(false);
      expect(report.recorded).toBeNull();
      expect(verdict(report, "mesh-heavy")).toMatchObject({ state: "missing", reasons: [{ reason: "outside-webhook-scope", detail: expect.stringContaining("namespaceSelector") as string }, { reason: "needs-recreation" }] });
      const text = await explain(["pod", "meshed", "-n", off]);
      expect(text.stdout).toContain("Webhook:     OUT OF SCOPE: namespace");
    } finally {
      await clients().core.deleteNamespace({ name: off }).catch(() => undefined);
    }
  });

  test("finds the cluster as kubectl does, and runs as the kubectl plugin `kubectl pd`", async ({ namespace }) => {
    await apply(logging(namespace, "fluent-bit:1"));
    const revision = await revisionOf(namespace, "logging");
    await createPod(namespace, "log-a", { tier: "logging", canary: "true" });
    const viaFlag = await explainPodJson(namespace, "log-a");
    expect(verdict(viaFlag, "logging")).toMatchObject({ state: "updated", podRevision: revision });
    // From the shell, the cluster given by $KUBECONFIG alone.
    const viaEnv = await run(process.execPath, [main, "explain", "pod", "log-a", "-n", namespace, "-o", "json"], { ...process.env, KUBECONFIG: inject("kubeconfig") });
    expect(viaEnv.stderr).toBe("");
    expect(JSON.parse(viaEnv.stdout)).toEqual(viaFlag);

    // kubectl finds `kubectl-pd` on PATH and passes the rest of the command line and $KUBECONFIG.
    const bin = await mkdtemp(join(tmpdir(), "kubectl-plugin-"));
    try {
      const plugin = join(bin, "kubectl-pd");
      await writeFile(plugin, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(main)} "$@"\n`);
      await chmod(plugin, 0o755);
      // The run's kubectl is a wrapper that puts --kubeconfig first, and kubectl looks up plugins
      // only before the first flag: call the binary it wraps, with $KUBECONFIG instead.
      const wrapper = await readFile(inject("kubectl"), "utf8");
      const binary = /exec '([^']+)' kubectl/.exec(wrapper)?.[1];
      expect(binary, wrapper).toBeDefined();
      const env = { ...process.env, KUBECONFIG: inject("kubeconfig"), PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` };
      const viaPlugin = await run(binary!, ["kubectl", "pd", "explain", "pod", "log-a", "-n", namespace, "-o", "json"], env);
      expect(viaPlugin.stderr).toBe("");
      expect(JSON.parse(viaPlugin.stdout)).toEqual(viaFlag);
    } finally {
      await rm(bin, { recursive: true, force: true });
    }

    const missing = await explain(["pod", "nope", "-n", namespace]);
    expect(missing).toMatchObject({ code: 2, stdout: "", stderr: `pod ${namespace}/nope not found\n` });
    const badContext = await explain(["pod", "log-a", "-n", namespace, "--context", "nope"]);
    expect(badContext).toMatchObject({ code: 2, stderr: 'kubeconfig: context "nope" does not exist in the kubeconfig\n' });
  });
});
