// Issue 13: what admission promises, on the real control plane. A pod with fields this code has
// never heard of (a newer API than its schema) is decorated and keeps them exactly, an int64
// beyond JavaScript's numbers included; a forged revisions annotation opts nobody out; a
// decoration that would make a restricted namespace's pods inadmissible is refused with the rule
// it breaks, and so is one written by someone who may not create pods; a flood of 3 MiB bodies
// refuses no pod the API server sends meanwhile and stalls no health probe.
import { request as plainRequest } from "node:http";
import { Agent, request } from "node:https";
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject } from "vitest";
import { floodBody } from "../test/bench/flood-body.ts";
import { parseKubernetesVersion } from "../src/api/kubernetes-versions.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import { apply, decorationYaml, REVISIONS } from "./support/collaset-world.ts";
import { serviceAccountIdentity } from "./support/identities.ts";
import { startOperator, troubleLines, type Operator } from "./support/operator.ts";
import { waitForAdmission } from "./support/webhook-routes.ts";

const v1 = ["log-shipper=e2e.local/sidecar:1"];
const WEB = { app: "web" };
/** The chart's liveness and readiness probes give up after timeoutSeconds: 3 (templates/deployment.yaml). */
const PROBE_TIMEOUT_MS = 3000;

let operator: Operator;
beforeAll(async () => {
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
});

function containerNames(pod: V1Pod): string[] {
  return (pod.spec?.containers ?? []).map((container) => container.name);
}

describe("a pod from a newer API than this code knows", () => {
  test("is decorated and keeps every field and value it did not render into, an int64 beyond 2^53 exactly", async ({ namespace }) => {
    await apply(decorationYaml(namespace, v1));
    await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
    // supplementalGroupsPolicy is a field from 1.31 on: kubectl's strict field validation has an
    // older API server refuse it as unknown.
    const newerSecurityContext = (parseKubernetesVersion(inject("kubernetesVersion"))?.minor ?? Infinity) >= 31 ? '"supplementalGroupsPolicy": "Strict", ' : "";
    const manifest = (name: string) => `{
      "apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "${name}", "labels": {"app": "web"}},
      "spec": {
        "os": {"name": "linux"},
        "automountServiceAccountToken": false,
        "schedulingGates": [{"name": "example.com/quota"}],
        "securityContext": {${newerSecurityContext}"seccompProfile": {"type": "RuntimeDefault"}},
        "tolerations": [{"key": "maintenance", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 9223372036854775807}],
        "containers": [{
          "name": "app", "image": "e2e.local/app:1",
          "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
          "resources": {"requests": {"cpu": "100m"}},
          "livenessProbe": {"exec": {"command": ["true"]}, "terminationGracePeriodSeconds": 9007199254740993}
        }]
      }
    }`;
    // The manifest mounts no token: the volume's generated name differs from pod to pod where the
    // ServiceAccount admission plugin runs (the real node's control plane).
    // The same pod where no decoration applies: what the API server itself keeps of it.
    const plainNamespace = `${namespace}-plain`;
    await clients().core.createNamespace({ body: { metadata: { name: plainNamespace } } });
    try {
      const plain = await kubectl(["create", "-n", plainNamespace, "-o", "json", "-f", "-"], manifest("plain"));
      const decorated = await kubectl(["create", "-n", namespace, "-o", "json", "-f", "-"], manifest("decorated"));
      expect(decorated.code, decorated.stderr).toBe(0);
      // Read as text: JavaScript's numbers could not tell these two values from their neighbours.
      for (const text of [plain.stdout, decorated.stdout]) {
        expect(text).toMatch(/"tolerationSeconds": 9223372036854775807\b/);
        expect(text).toMatch(/"terminationGracePeriodSeconds": 9007199254740993\b/);
      }
      const [before, after] = [JSON.parse(plain.stdout) as V1Pod, JSON.parse(decorated.stdout) as V1Pod];
      expect(containerNames(after)).toEqual(["log-shipper", "app"]);
      expect(after.spec?.containers[1]).toEqual(before.spec?.containers[0]);
      for (const field of ["os", "schedulingGates", "securityContext", "tolerations"] as const) expect(after.spec?.[field], field).toEqual(before.spec?.[field]);
    } finally {
      await clients().core.deleteNamespace({ name: plainNamespace }).catch(() => undefined);
    }
  });
});

describe("the revisions annotation", () => {
  test("written by a pod's author decides nothing: the pod is decorated, its bookkeeping replaced, and the author told; written by the controller it is kept", async ({ namespace }) => {
    await apply(decorationYaml(namespace, v1));
    await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
    const author = await serviceAccountIdentity(namespace, "app-team", [{ apiGroups: [""], resources: ["pods"], verbs: ["create", "get"] }]);
    const forged = (name: string) => JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels: { app: "web", "poddecoration.kusionstack.io/pd-logging": "logging-forged" }, annotations: { [REVISIONS]: "[]" } },
      spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] },
    });
    const created = await kubectl(["create", `--kubeconfig=${author.kubeconfigPath}`, "-n", namespace, "-o", "json", "-f", "-"], forged("forged"));
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(`Warning: pod-decorator: the pod's poddecoration.kusionstack.io/revisions annotation and pd-* labels were set by ${author.username}, not by pod-decorator's controller`);
    const pod = JSON.parse(created.stdout) as V1Pod;
    expect(containerNames(pod)).toEqual(["log-shipper", "app"]);
    const recorded = JSON.parse(pod.metadata?.annotations?.[REVISIONS] ?? "[]") as { name: string; revision: string }[];
    expect(recorded.map((entry) => entry.name)).toEqual(["logging"]);
    expect(pod.metadata?.labels?.["poddecoration.kusionstack.io/pd-logging"]).toBe(recorded[0]?.revision);

    // serve's own identity is the run's cluster-admin: from it, the annotation is the controller's word.
    const trusted = await kubectl(["create", "-n", namespace, "-o", "json", "-f", "-"], forged("trusted"));
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(containerNames(JSON.parse(trusted.stdout) as V1Pod)).toEqual(["app"]);
  });
});

describe("writing a PodDecoration", () => {
  /** A decoration of pods labelled app=web with one sidecar, as JSON (kubectl reads it as it reads YAML). */
  const decoration = (namespace: string, name: string, sidecar: Record<string, unknown>) => JSON.stringify({
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name, namespace },
    spec: { selector: { matchLabels: WEB }, template: { containers: [sidecar] } },
  });
  const privileged = (namespace: string) => decoration(namespace, "debugger", { name: "debugger", image: "e2e.local/proxy:1", securityContext: { privileged: true } });
  const hardened = (namespace: string) => decoration(namespace, "logging", {
    name: "log-shipper",
    image: "e2e.local/sidecar:1",
    securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ["ALL"] }, seccompProfile: { type: "RuntimeDefault" } },
  });

  test("in a namespace enforcing restricted: a privileged sidecar is refused with the rule; a hardened one is admitted, and so are the pods it decorates", async ({ namespace }) => {
    expect((await kubectl(["label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"])).code).toBe(0);
    const refused = await kubectl(["apply", "-f", "-"], privileged(namespace));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('PodDecoration/debugger: spec.template.containers[0].securityContext.privileged: Forbidden: pods in namespace');
    expect(refused.stderr).toContain('would violate PodSecurity "restricted:latest": privileged (container "debugger" must not set securityContext.privileged=true)');

    const admitted = await kubectl(["apply", "-f", "-"], hardened(namespace));
    expect(admitted.code, admitted.stderr).toBe(0);
    const restrictedPod: V1Pod = {
      metadata: { name: "web-0", labels: WEB },
      spec: {
        securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } },
        containers: [{ name: "app", image: "e2e.local/app:1", securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } }],
      },
    };
    // Pod Security Admission, in the API server, checks the pod as decorated.
    const pod = await eventually(async () => {
      const created = await clients().core.createNamespacedPod({ namespace, body: restrictedPod, dryRun: "All" });
      return containerNames(created).includes("log-shipper") ? created : undefined;
    }, 30_000, "the webhook to know the hardened decoration");
    expect(containerNames(pod)).toEqual(["log-shipper", "app"]);
    expect((await clients().core.createNamespacedPod({ namespace, body: restrictedPod })).metadata?.name).toBe("web-0");
  });

  test("is refused to whoever may not create pods in the namespace, and allowed to whoever may", async ({ namespace }) => {
    const decorations = { apiGroups: ["apps.kusionstack.io"], resources: ["poddecorations"], verbs: ["create", "get", "patch", "update"] };
    const outsider = await serviceAccountIdentity(namespace, "decorations-only", [decorations]);
    const refused = await kubectl(["apply", `--kubeconfig=${outsider.kubeconfigPath}`, "-f", "-"], hardened(namespace));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`PodDecoration/logging: Forbidden: ${outsider.username} may not create pods in namespace ${namespace}`);
    const insider = await serviceAccountIdentity(namespace, "pods-too", [decorations, { apiGroups: [""], resources: ["pods"], verbs: ["create"] }]);
    const allowed = await kubectl(["apply", `--kubeconfig=${insider.kubeconfigPath}`, "-f", "-"], hardened(namespace));
    expect(allowed.code, allowed.stderr).toBe(0);
  });
});

describe("a flood of 3 MiB AdmissionReviews at the webhook", () => {
  test("refuses no pod the API server sends meanwhile, stalls no health probe, and the process lives", async ({ namespace, onTestFailed }) => {
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    await apply(decorationYaml(namespace, v1));
    await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
    // Pods of this namespace, where a decoration matches them: every body is rendered, not only parsed.
    const body = floodBody(3 * 1024 * 1024, namespace);
    const until = Date.now() + 15_000;
    const flood: Record<string, number> = {};
    const clientsDone = Array.from({ length: 12 }, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
      while (Date.now() < until) {
        const status = await new Promise<string>((done) => {
          const call = request({ host: "127.0.0.1", port: operator.port, path: "/mutate-pods?timeout=10s", method: "POST", agent, headers: { "content-type": "application/json", "content-length": body.length } }, (response) => {
            response.resume();
            response.once("end", () => done(String(response.statusCode)));
          });
          call.once("error", () => done("error"));
          call.end(body);
        });
        flood[status] = (flood[status] ?? 0) + 1;
        if (status !== "200") await new Promise((resume) => setTimeout(resume, 50));
      }
      agent.destroy();
    });
    const probes: number[] = [];
    const prober = (async () => {
      while (Date.now() < until) {
        const started = performance.now();
        const status = await new Promise<number>((done) => {
          const call = plainRequest({ host: "127.0.0.1", port: operator.healthPort, path: "/healthz", agent: false, timeout: 2 * PROBE_TIMEOUT_MS }, (response) => {
            response.resume();
            response.once("end", () => done(response.statusCode ?? 0));
          });
          call.once("error", () => done(0));
          call.once("timeout", () => call.destroy());
          call.end();
        });
        expect(status).toBe(200);
        probes.push(performance.now() - started);
        await new Promise((resume) => setTimeout(resume, 200));
      }
    })();
    const pods: V1Pod[] = [];
    const creator = (async () => {
      for (let index = 0; Date.now() < until; index++) {
        pods.push(await clients().core.createNamespacedPod({ namespace, body: { metadata: { name: `during-${index}`, labels: WEB }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } } }));
        await new Promise((resume) => setTimeout(resume, 500));
      }
    })();
    await Promise.all([...clientsDone, prober, creator]);
    console.log(`flood on the real control plane: ${JSON.stringify(flood)}; ${pods.length} pods created meanwhile; /healthz max ${Math.round(Math.max(...probes))} ms over ${probes.length} probes`);
    expect(pods.length).toBeGreaterThan(5);
    for (const pod of pods) expect(containerNames(pod)).toEqual(["log-shipper", "app"]);
    // The limits engaged (429) and the flood was still served (200).
    expect(flood["200"]).toBeGreaterThan(0);
    expect(flood["429"]).toBeGreaterThan(0);
    // Every probe answered within the chart's probe timeout: the kubelet counts no failure, let
    // alone restarts the pod or takes it out of the Service. (The time itself depends on the
    // machine's load; `make bench`'s flood section measures it on a quiet core.)
    expect(Math.max(...probes)).toBeLessThan(PROBE_TIMEOUT_MS);
    expect(operator.child.exitCode).toBeNull();
  });
});
