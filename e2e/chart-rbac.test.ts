// The chart's RBAC is sufficient and minimal: `pod-decorator serve` runs with the chart's own
// arguments as the chart's ServiceAccount (see support/chart-release.ts) through a PodDecoration
// scenario — revisions created, rolled back and pruned, status, finalizer, events, the leader
// election Lease, the template's dry-run validation, the caBundle of the chart's webhook
// configurations, the shared CA Secret written back, the decoration's writer checked, a CollaSet,
// a PodTransitionRule and an OperationJob through their lives — and the
// API server's audit log of what it did is compared with what the
// chart grants: nothing refused, nothing granted for today's code left unused without a reason.
import { AppsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { stringify as toYaml } from "yaml";
import { helmBinary, type KubeManifest } from "./helm/helm.ts";
import { startChartRelease, type AuditEvent, type ChartRelease } from "./support/chart-release.ts";
import { eventually, kubeConfig, kubectl, test, uniqueName } from "./support/cluster.ts";

const GROUP = { group: "apps.kusionstack.io", version: "v1alpha1", plural: "poddecorations" };

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** "group resource[/subresource] verb" for every grant of the rules. */
function grants(rules: readonly PolicyRule[]): Set<string> {
  return new Set(rules.flatMap((rule) => rule.apiGroups.flatMap((group) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${group} ${resource} ${verb}`)))));
}

function used(event: AuditEvent): string {
  const ref = event.objectRef ?? {};
  return `${ref.apiGroup ?? ""} ${ref.resource ?? ""}${ref.subresource === undefined ? "" : `/${ref.subresource}`} ${event.verb}`;
}

function rulesOf(objects: readonly KubeManifest[], kind: string, name: string): PolicyRule[] {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (found === undefined) throw new Error(`the chart renders no ${kind} ${name}`);
  return found.rules as PolicyRule[];
}

/**
 * Grants that the scenario cannot show as a request, and why. Everything else the chart
 * grants must appear in the audit log.
 */
const NOT_A_REQUEST: Record<string, string> = {
  "apps.kusionstack.io poddecorations/finalizers update":
    "checked by the OwnerReferencesPermissionEnforcement admission plugin when a revision with blockOwnerDeletion is created; proven by the refusal test below",
  "apps.kusionstack.io collasets/finalizers update":
    "checked by the same plugin when a CollaSet's pod or revision with blockOwnerDeletion is created",
  "pod-decorator.io clusterpoddecorations/finalizers update":
    "checked by the same plugin when a ClusterPodDecoration's revision with blockOwnerDeletion is created",
  " events patch":
    "the event recorder patches only a repeat of an identical event (test/controller/runtime/event-recorder.test.ts); no scenario event repeats",
};

let release: ChartRelease;
let appNamespace: string;

beforeAll(async () => {
  helmBinary();
  const releaseNamespace = uniqueName("chart-rbac");
  await kubectl(["create", "namespace", releaseNamespace]);
  release = await startChartRelease({ namespace: releaseNamespace });
  appNamespace = uniqueName("decorated");
  await release.api.config.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: appNamespace } } });
}, 600_000);

afterAll(async () => {
  await release?.stop();
  await kubectl(["delete", "namespace", appNamespace, release?.namespace ?? "", "--ignore-not-found", "--wait=false"]);
});

function sidecarDecoration(image: string): object {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name: "sidecar" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      historyLimit: 1,
      // The one pod stays on what it records (its revision stays in use): no rollout reaches it.
      updateStrategy: { rollingUpdate: { partition: 1 } },
      template: { containers: [{ name: "proxy", image, injectPolicy: "AfterPrimaryContainer" }] },
    },
  };
}

interface StoredDecoration {
  metadata: { uid: string; finalizers?: string[]; resourceVersion: string };
  status?: {
    currentRevision?: string;
    updatedRevision?: string;
    matchedPods?: number;
    injectedPods?: number;
    updatedPods?: number;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

describe("the chart's pod webhook scope", () => {
  // Issue 29: the chart used to skip any pod labelled as pod-decorator's own, in any namespace.
  test("decorates a tenant's pod that carries pod-decorator's own labels: no label is a way out", async () => {
    const core = release.api.config.makeApiClient(CoreV1Api);
    const custom = release.api.config.makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      ...GROUP,
      namespace: appNamespace,
      body: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "mandatory" }, spec: { selector: { matchLabels: { team: "a" } }, template: { metadata: [{ annotations: { "platform.example.com/audited": "yes" } }] } } },
    });
    try {
      const ourLabels = { "app.kubernetes.io/name": "pod-decorator", "app.kubernetes.io/instance": "pod-decorator", team: "a" };
      const annotation = await eventually(async () => {
        const pod = await core.createNamespacedPod({ namespace: appNamespace, dryRun: "All", body: { metadata: { generateName: "sneaky-", labels: ourLabels }, spec: { containers: [{ name: "app", image: "app:1" }] } } });
        return pod.metadata?.annotations?.["platform.example.com/audited"];
      }, 30_000, "the decoration on a pod labelled as pod-decorator's own");
      expect(annotation).toBe("yes");
    } finally {
      await custom.deleteNamespacedCustomObject({ ...GROUP, namespace: appNamespace, name: "mandatory" });
    }
  });
});

describe("the chart's ServiceAccount", () => {
  test("runs the controllers and the webhooks with nothing refused and nothing granted unused", async () => {
    const config = release.api.config;
    const core = config.makeApiClient(CoreV1Api);
    const apps = config.makeApiClient(AppsV1Api);
    const custom = config.makeApiClient(CustomObjectsApi);
    const namespace = appNamespace;
    const read = async () => (await custom.getNamespacedCustomObject({ ...GROUP, namespace, name: "sidecar" })) as StoredDecoration;
    const revisions = async () => (await apps.listNamespacedControllerRevision({ namespace, labelSelector: "poddecoration.kusionstack.io/name=sidecar" })).items;

    // The webhook: the chart's configurations were patched with serve's CA (startOperator waited
    // until the API server called it through the chart's Service).
    for (const kind of ["mutatingwebhookconfiguration", "validatingwebhookconfiguration"]) {
      const stored = await kubectl(["get", kind, "pod-decorator", "-o", "json"]);
      const webhooks = (JSON.parse(stored.stdout) as { webhooks: { clientConfig: { caBundle?: string; service?: { namespace: string } } }[] }).webhooks;
      for (const webhook of webhooks) {
        expect(Buffer.from(webhook.clientConfig.caBundle ?? "", "base64").toString()).toContain("BEGIN CERTIFICATE");
        expect(webhook.clientConfig.service?.namespace).toBe(release.namespace);
      }
    }

    // The shared CA Secret made unusable: serve writes it back (within its 10 s check).
    const caSecret = `${release.namespace}/pod-decorator-webhook-ca`;
    const ca = await core.readNamespacedSecret({ namespace: release.namespace, name: "pod-decorator-webhook-ca" });
    await core.patchNamespacedSecret({ namespace: release.namespace, name: "pod-decorator-webhook-ca", body: [{ op: "replace", path: "/data/tls.key", value: Buffer.from("not a key").toString("base64") }] });
    await eventually(async () => {
      const secret = await core.readNamespacedSecret({ namespace: release.namespace, name: "pod-decorator-webhook-ca" });
      return secret.data?.["tls.key"] === ca.data?.["tls.key"] ? true : undefined;
    }, 30_000, `serve to write back Secret ${caSecret}`);

    // Finalizer, first revision, status, template validated by a dry-run create.
    await custom.createNamespacedCustomObject({ ...GROUP, namespace, body: sidecarDecoration("proxy:1") });
    const first = await eventually(async () => {
      const pd = await read();
      const valid = pd.status?.conditions?.find((condition) => condition.type === "TemplateValid");
      return pd.metadata.finalizers?.includes("poddecoration.kusionstack.io/protection") === true && pd.status?.updatedRevision !== undefined && valid !== undefined ? { pd, valid } : undefined;
    }, 30_000, "the finalizer, the first revision and the TemplateValid condition");
    expect(first.valid).toMatchObject({ status: "True", reason: "DryRunAccepted" });
    const revision1 = first.pd.status!.updatedRevision!;
    const [stored1] = await revisions();
    expect(stored1?.metadata?.name).toBe(revision1);
    expect(stored1?.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: "PodDecoration", name: "sidecar", uid: first.pd.metadata.uid, controller: true, blockOwnerDeletion: true })]);

    // A pod created now is decorated through the chart's Service, and counted.
    const pod: V1Pod = await core.createNamespacedPod({ namespace, body: { metadata: { name: "web-0", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "app:1" }] } } });
    expect(pod.spec?.containers.map((container) => container.name)).toEqual(["app", "proxy"]);
    expect(pod.metadata?.annotations?.["poddecoration.kusionstack.io/revisions"]).toBe(JSON.stringify([{ name: "sidecar", revision: revision1 }]));
    await eventually(async () => {
      const status = (await read()).status;
      return status?.matchedPods === 1 && status.injectedPods === 1 && status.updatedPods === 1 && status.currentRevision === revision1 ? true : undefined;
    }, 30_000, "status to count the decorated pod");

    // A new template: a second revision; the pod keeps the first, so it stays current.
    await custom.patchNamespacedCustomObject({ ...GROUP, namespace, name: "sidecar", body: [{ op: "replace", path: "/spec/template/containers/0/image", value: "proxy:2" }] });
    const revision2 = await eventually(async () => {
      const status = (await read()).status;
      return status?.updatedRevision !== undefined && status.updatedRevision !== revision1 ? status.updatedRevision : undefined;
    }, 30_000, "the second revision");
    expect((await revisions()).map((item) => item.metadata?.name).sort()).toEqual([revision1, revision2].sort());

    // Back to the first template: rolled back (its .revision bumped), and with historyLimit 1
    // the second, now used by nothing, is pruned.
    await custom.patchNamespacedCustomObject({ ...GROUP, namespace, name: "sidecar", body: [{ op: "replace", path: "/spec/template/containers/0/image", value: "proxy:1" }] });
    await eventually(async () => {
      const items = await revisions();
      return (await read()).status?.updatedRevision === revision1 && items.length === 1 && items[0]?.revision === 3 ? true : undefined;
    }, 30_000, "the roll back to the first revision and the pruning of the second");

    // Leader election: the Lease in the release namespace, held by serve.
    const lease = await config.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: release.namespace, name: "pod-decorator" });
    expect(lease.spec?.holderIdentity).toMatch(/_/);

    // Deleted: taking the sidecar out of the pod needs its recreation, which the decoration does
    // not ask for (UpdateBlocked): the pod keeps it, and the finalizer goes, then the decoration.
    await custom.deleteNamespacedCustomObject({ ...GROUP, namespace, name: "sidecar" });
    await eventually(async () => {
      try {
        await read();
        return undefined;
      } catch (error) {
        return (error as { code?: number }).code === 404 ? true : undefined;
      }
    }, 30_000, "the decoration to be released and gone");

    const events = await eventually(async () => {
      const list = await core.listNamespacedEvent({ namespace, fieldSelector: "involvedObject.name=sidecar" });
      const reasons = list.items.map((event) => event.reason).sort();
      return reasons.includes("Released") ? list.items : undefined;
    }, 30_000, "the Released event");
    expect(events.map((event) => event.reason).sort()).toEqual(["Released", "RevisionCreated", "RevisionCreated", "RevisionRolledBack", "UpdateBlocked"]);
    expect(new Set(events.map((event) => event.source?.component))).toEqual(new Set(["pod-decorator"]));

    // A ClusterPodDecoration selecting the namespace by name: its finalizer, its revision in the
    // release namespace, its status; a new pod gets it; deleted, it is released and gone.
    const clusterDecorations = { group: "pod-decorator.io", version: "v1alpha1", plural: "clusterpoddecorations" };
    const fleetName = uniqueName("fleet");
    await custom.createClusterCustomObject({
      ...clusterDecorations,
      body: { apiVersion: "pod-decorator.io/v1alpha1", kind: "ClusterPodDecoration", metadata: { name: fleetName }, spec: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } }, selector: { matchLabels: { app: "fleet" } }, template: { containers: [{ name: "fleet-proxy", image: "proxy:1" }] } } },
    });
    const readFleet = async () => (await custom.getClusterCustomObject({ ...clusterDecorations, name: fleetName })) as StoredDecoration;
    const fleetRevision = await eventually(async () => {
      const cpd = await readFleet();
      return cpd.metadata.finalizers?.includes("poddecoration.kusionstack.io/protection") === true && cpd.status?.updatedRevision !== undefined ? cpd.status.updatedRevision : undefined;
    }, 30_000, "the cluster decoration's finalizer and first revision");
    expect((await apps.readNamespacedControllerRevision({ namespace: release.namespace, name: fleetRevision })).metadata?.ownerReferences?.[0]).toMatchObject({ kind: "ClusterPodDecoration", name: fleetName, blockOwnerDeletion: true });
    const fleetPod = await eventually(async () => {
      const created = await core.createNamespacedPod({ namespace, dryRun: "All", body: { metadata: { generateName: "fleet-", labels: { app: "fleet" } }, spec: { containers: [{ name: "app", image: "app:1" }] } } });
      return created.spec?.containers.some((container) => container.name === "fleet-proxy") === true ? created : undefined;
    }, 30_000, "the webhook to render the cluster decoration");
    expect(fleetPod.metadata?.annotations?.["pod-decorator.io/cluster-revisions"]).toBe(JSON.stringify([{ name: fleetName, revision: fleetRevision }]));
    await custom.deleteClusterCustomObject({ ...clusterDecorations, name: fleetName });
    await eventually(async () => readFleet().then(() => undefined, (error: unknown) => ((error as { code?: number }).code === 404 ? true : undefined)), 30_000, "the cluster decoration to be released and gone");

    // The CollaSet controller: pods created, each after its claim, a decoration rolled out to
    // them by recreation (dry run, recreate finalizer, delete, replacement, release), scaled in
    // (a claim deleted), status written; deleted under whenDeleted Retain (its finalizer added
    // and removed, its claim let go).
    const collaSets = { ...GROUP, plural: "collasets" };
    await custom.createNamespacedCustomObject({
      ...collaSets,
      namespace,
      body: {
        apiVersion: "apps.kusionstack.io/v1alpha1",
        kind: "CollaSet",
        metadata: { name: "cls" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "cls" } },
          template: { metadata: { labels: { app: "cls" } }, spec: { containers: [{ name: "app", image: "app:1" }] } },
          volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Mi" } } } }],
          scaleStrategy: { persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain" } },
        },
      },
    });
    const clsClaims = async () => (await core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector: "app=cls" })).items.filter((claim) => claim.metadata?.deletionTimestamp === undefined);
    const clsPods = async () => (await core.listNamespacedPod({ namespace, labelSelector: "app=cls" })).items;
    const first2 = await eventually(async () => {
      const items = await clsPods();
      return items.length === 2 ? items.map((item) => item.metadata!.uid!) : undefined;
    }, 30_000, "the CollaSet's two pods");
    await custom.createNamespacedCustomObject({ ...GROUP, namespace, body: { ...sidecarDecoration("proxy:1"), metadata: { name: "cls-sidecar" }, spec: { selector: { matchLabels: { app: "cls" } }, template: { containers: [{ name: "proxy", image: "proxy:1" }] } } } });
    await eventually(async () => {
      const items = await clsPods();
      const done = items.length === 2 && items.every((item) => item.metadata?.deletionTimestamp === undefined && item.spec?.containers.length === 2 && !first2.includes(item.metadata!.uid!));
      return done ? true : undefined;
    }, 30_000, "the CollaSet's pods recreated with the sidecar");
    await custom.patchNamespacedCustomObject({ ...collaSets, namespace, name: "cls", body: [{ op: "replace", path: "/spec/replicas", value: 1 }] });
    await eventually(async () => {
      const cls = (await custom.getNamespacedCustomObject({ ...collaSets, namespace, name: "cls" })) as { status?: { replicas?: number } };
      return (await clsPods()).length === 1 && cls.status?.replicas === 1 ? true : undefined;
    }, 30_000, "the scale-in and its status");
    await eventually(async () => ((await clsClaims()).length === 1 ? true : undefined), 30_000, "the scaled-in instance's claim deleted");
    await custom.deleteNamespacedCustomObject({ ...collaSets, namespace, name: "cls" });
    await eventually(async () => {
      const left = await clsClaims();
      const gone = await custom.getNamespacedCustomObject({ ...collaSets, namespace, name: "cls" }).then(() => false, () => true);
      return gone && left.length === 1 && (left[0]!.metadata?.ownerReferences ?? []).length === 0 ? true : undefined;
    }, 30_000, "the CollaSet gone and its claim retained without owner");

    // The PodTransitionRule controller: kuperator's finalizer added, status written, each selected
    // pod's verdict annotation patched; deleted, the annotations taken off and the finalizer removed.
    const transitionRules = { ...GROUP, plural: "podtransitionrules" };
    await custom.createNamespacedCustomObject({
      ...transitionRules,
      namespace,
      body: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodTransitionRule", metadata: { name: "budget" }, spec: { selector: { matchLabels: { app: "cls-kept" } }, rules: [{ name: "one", availablePolicy: { maxUnavailableValue: 1 } }] } },
    });
    await core.createNamespacedPod({ namespace, body: { metadata: { name: "kept", labels: { app: "cls-kept" } }, spec: { containers: [{ name: "app", image: "app:1" }] } } });
    await eventually(async () => {
      const rule = (await custom.getNamespacedCustomObject({ ...transitionRules, namespace, name: "budget" })) as { metadata: { finalizers?: string[] }; status?: { targets?: string[] } };
      const kept = await core.readNamespacedPod({ namespace, name: "kept" });
      return rule.metadata.finalizers?.includes("finalizer.operating.kusionstack.io/protected") === true && rule.status?.targets?.includes("kept") === true && kept.metadata?.annotations?.["detail.podtransitionrule.kusionstack.io/budget"] !== undefined ? true : undefined;
    }, 30_000, "the rule's finalizer, status and verdict annotation");
    await custom.deleteNamespacedCustomObject({ ...transitionRules, namespace, name: "budget" });
    await eventually(async () => {
      const gone = await custom.getNamespacedCustomObject({ ...transitionRules, namespace, name: "budget" }).then(() => false, () => true);
      const kept = await core.readNamespacedPod({ namespace, name: "kept" });
      return gone && kept.metadata?.annotations?.["detail.podtransitionrule.kusionstack.io/budget"] === undefined ? true : undefined;
    }, 30_000, "the rule gone and its annotation off the pod");

    // The OperationJob controller: kuperator's finalizer added, a target that does not exist failed
    // in status, the job deleted once its time to live is over, and its finalizer removed then.
    const operationJobs = { ...GROUP, plural: "operationjobs" };
    await custom.createNamespacedCustomObject({
      ...operationJobs,
      namespace,
      body: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "OperationJob", metadata: { name: "swap" }, spec: { action: "Replace", targets: [{ name: "no-such-pod" }], TTLSecondsAfterFinished: 1 } },
    });
    await eventually(async () => ((await custom.getNamespacedCustomObject({ ...operationJobs, namespace, name: "swap" }).then(() => false, () => true)) ? true : undefined), 30_000, "the job failed and deleted after its time to live");

    // What serve did, as the API server audited it, against what the chart grants.
    expect(await release.operator.stop()).toBe(0);
    const username = `system:serviceaccount:${release.namespace}:${release.serviceAccount}`;
    const audited = (await release.auditEvents()).filter((event) => event.user.username === username && event.objectRef?.resource !== undefined);
    // Refused by authorization, that is: admission may refuse too (a write into a namespace being
    // deleted, say), which is no RBAC matter.
    const refused = audited.filter((event) => event.annotations?.["authorization.k8s.io/decision"] !== "allow").map((event) => `${used(event)} ${event.requestURI}`);
    expect(refused).toEqual([]);
    const usedGrants = new Set(audited.map(used));
    const granted = grants([...rulesOf(release.objects, "ClusterRole", "pod-decorator"), ...rulesOf(release.objects, "Role", "pod-decorator-leader-election"), ...rulesOf(release.objects, "Role", "pod-decorator-webhook-ca")]);
    expect([...usedGrants].filter((grant) => !granted.has(grant)).sort()).toEqual([]);
    const unused = [...granted].filter((grant) => !usedGrants.has(grant)).sort();
    expect(unused).toEqual(Object.keys(NOT_A_REQUEST).sort());
    // Spelled out, for the reader: the shared CA Secret created and read, the Lease created and
    // renewed, the caBundle patched, revisions rolled back and pruned, the template's dry-run create.
    // The shared CA Secret written back, who serve is, and the PodDecoration's writer checked.
    for (const grant of [" pods delete", " pods patch", "apps.kusionstack.io collasets/status patch", "apps.kusionstack.io poddecorations/status patch", " secrets create", " secrets get", " secrets update", "coordination.k8s.io leases create", "coordination.k8s.io leases update", "admissionregistration.k8s.io mutatingwebhookconfigurations patch", "apps controllerrevisions delete", "apps controllerrevisions patch", " pods create", "authentication.k8s.io selfsubjectreviews create", "authorization.k8s.io subjectaccessreviews create", " namespaces get"]) {
      expect(usedGrants.has(grant), grant).toBe(true);
    }
  }, 300_000);

  test("is refused revisions with blockOwnerDeletion without update on poddecorations/finalizers", async () => {
    // Same grants minus the finalizers rule, for a second ServiceAccount.
    const name = uniqueName("no-finalizers");
    const rules = rulesOf(release.objects, "ClusterRole", "pod-decorator").filter((rule) => !rule.resources.includes("poddecorations/finalizers"));
    const manifests = [
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace: release.namespace } },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name, namespace: appNamespace }, rules },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name, namespace: appNamespace }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name }, subjects: [{ kind: "ServiceAccount", name, namespace: release.namespace }] },
    ];
    const applied = await kubectl(["apply", "-f", "-"], manifests.map((manifest) => toYaml(manifest)).join("---\n"));
    expect(applied.code, applied.stderr).toBe(0);
    const custom = release.api.config.makeApiClient(CustomObjectsApi);
    const owner = (await custom.createNamespacedCustomObject({
      ...GROUP,
      namespace: appNamespace,
      body: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "owner" }, spec: { selector: { matchLabels: { app: "none" } } } },
    })) as StoredDecoration;
    try {
      const revision = (blockOwnerDeletion: boolean) => ({
        apiVersion: "apps/v1",
        kind: "ControllerRevision",
        metadata: { name: `proof-${String(blockOwnerDeletion)}`, namespace: appNamespace, ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", name: "owner", uid: owner.metadata.uid, controller: true, blockOwnerDeletion }] },
        data: {},
        revision: 1,
      });
      const token = await kubectl(["create", "token", name, "--namespace", release.namespace]);
      expect(token.code, token.stderr).toBe(0);
      // A kubeconfig of its own: the run's kubectl would otherwise also present the admin's client certificate.
      const asOther = [`--kubeconfig=${await release.tokenKubeconfig(token.stdout.trim())}`, "--dry-run=server", "-f", "-"];
      const refused = await kubectl(["create", ...asOther], JSON.stringify(revision(true)));
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("cannot set blockOwnerDeletion");
      // Everything else about the request is allowed: only the owner's finalizers are missing.
      const allowed = await kubectl(["create", ...asOther], JSON.stringify(revision(false)));
      expect(allowed.stderr).toBe("");
      expect(allowed.code).toBe(0);
    } finally {
      await custom.deleteNamespacedCustomObject({ ...GROUP, namespace: appNamespace, name: "owner" }).catch(() => undefined);
      await kubectl(["delete", "serviceaccount", name, "-n", release.namespace, "--ignore-not-found"]);
    }
  });

  test("cannot do what the code never does", async () => {
    const shared = kubeConfig().getCurrentCluster()?.server ?? "";
    // Asked of the shared API server, so the checks stay out of the private one's audit log.
    const canI = async (...args: string[]) => {
      const result = await kubectl(["auth", "can-i", `--kubeconfig=${release.serviceAccountKubeconfig}`, `--server=${shared}`, ...args]);
      return result.stdout.trim();
    };
    const ns = release.namespace;
    const denied = [
      ["delete", "poddecorations.apps.kusionstack.io", "-A"],
      ["create", "poddecorations.apps.kusionstack.io", "-n", appNamespace],
      ["update", "poddecorations.apps.kusionstack.io", "-n", appNamespace],
      ["get", "secrets", "-n", ns],
      ["list", "secrets", "-A"],
      ["get", "secrets/someone-else", "-n", ns],
      ["create", "configmaps", "-n", ns],
      ["delete", "namespaces"],
      ["list", "nodes"],
      ["patch", "deployments.apps", "-n", ns],
      ["create", "pods", "--subresource=exec", "-n", appNamespace],
      ["create", "clusterrolebindings.rbac.authorization.k8s.io"],
      ["create", "mutatingwebhookconfigurations.admissionregistration.k8s.io"],
      ["patch", "mutatingwebhookconfigurations.admissionregistration.k8s.io/someone-else"],
      ["delete", "validatingwebhookconfigurations.admissionregistration.k8s.io/pod-decorator"],
      ["update", "leases.coordination.k8s.io/someone-else", "-n", ns],
      ["update", "secrets/someone-else", "-n", ns],
      ["create", "leases.coordination.k8s.io", "-n", appNamespace],
    ];
    const allowed = [
      ["list", "poddecorations.apps.kusionstack.io", "-A"],
      ["patch", "poddecorations.apps.kusionstack.io", "--subresource=status", "-n", appNamespace],
      ["patch", "mutatingwebhookconfigurations.admissionregistration.k8s.io/pod-decorator"],
      ["update", "leases.coordination.k8s.io/pod-decorator", "-n", ns],
      ["create", "pods", "-n", appNamespace],
      ["update", "secrets/pod-decorator-webhook-ca", "-n", ns],
      ["create", "subjectaccessreviews.authorization.k8s.io"],
      // Which namespaces the pod webhook is called for decides which pods may be evicted.
      ["watch", "namespaces"],
    ];
    const answers = async (checks: string[][]) => Object.fromEntries(await Promise.all(checks.map(async (check) => [check.join(" "), await canI(...check)] as const)));
    expect(await answers(denied)).toEqual(Object.fromEntries(denied.map((check) => [check.join(" "), "no"])));
    expect(await answers(allowed)).toEqual(Object.fromEntries(allowed.map((check) => [check.join(" "), "yes"])));
  });
});
