// The workload every benchmark decorates: a typical application pod and a namespace with 50
// PodDecorations of which 5 select it (a logging sidecar, a mesh proxy, env and mounts on the
// primary container, scheduling, and labels/annotations), as DESIGN §9 specifies. The fleet's
// variant (issue 38, DESIGN §12), in a namespace of its own: the same five renders done by
// ClusterPodDecorations selecting that namespace by label.
import { defaultClusterPodDecoration, type ClusterPodDecoration } from "../../src/api/cluster-poddecoration.ts";
import { CLUSTER_POD_DECORATION_KIND, OWN_API_VERSION } from "../../src/api/group.ts";
import type { Pod } from "../../src/api/pod.ts";
import { defaultPodDecoration, type PodDecoration } from "../../src/api/poddecoration.ts";
import { NAMESPACE_NAME_LABEL } from "../../src/decoration/admission-scope.ts";
import type { Namespace } from "../../src/kube/objects.ts";

export const NAMESPACE = "bench";
/** The fleet's namespace, and the label its ClusterPodDecorations select it by. */
export const FLEET_NAMESPACE = "bench-fleet";
export const FLEET_NAMESPACE_LABEL = { mesh: "enabled" } as const;

// Plain manifests, asserted to the engine's types: those type only the fields the engine reads.
export function typicalPod(): Pod {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      generateName: "web-6f9c8d7b5-",
      namespace: NAMESPACE,
      labels: { app: "web", tier: "frontend", "pod-template-hash": "6f9c8d7b5" },
      annotations: { "kubectl.kubernetes.io/default-container": "app" },
    },
    spec: {
      containers: [
        {
          name: "app",
          image: "registry.example.com/shop/web:2.14.1",
          ports: [{ containerPort: 8080, name: "http" }],
          env: [{ name: "MODE", value: "production" }, { name: "PORT", value: "8080" }],
          resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { memory: "512Mi" } },
          volumeMounts: [{ name: "config", mountPath: "/etc/web" }],
          readinessProbe: { httpGet: { path: "/healthz", port: 8080 } },
        },
        { name: "metrics", image: "registry.example.com/exporters/web:1.3.0", ports: [{ containerPort: 9100 }] },
      ],
      volumes: [{ name: "config", configMap: { name: "web-config" } }],
      serviceAccountName: "web",
    },
  };
  return pod;
}

// Defaulted, as our defaulting webhook stores them and the caches hold them.
function decoration(index: number, matching: boolean, template: NonNullable<PodDecoration["spec"]["template"]>, namespace = NAMESPACE): PodDecoration {
  return defaultPodDecoration({
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: {
      name: `decoration-${String(index).padStart(2, "0")}`,
      namespace,
      uid: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
      creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, index)).toISOString().replace(".000Z", "Z"),
      generation: 1,
    },
    spec: {
      selector: matching
        ? { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "In", values: ["frontend", "backend"] }] }
        : { matchLabels: { app: `other-${index}` } },
      injectStrategy: { weight: index },
      template,
    },
  });
}

const matchingTemplates = [
  {
    containers: [{ name: "log-shipper", image: "cr.fluentbit.io/fluent/fluent-bit:3.2.2", injectPolicy: "AfterPrimaryContainer", volumeMounts: [{ name: "logs", mountPath: "/var/log/app", readOnly: true }] }],
    primaryContainers: [{ targetPolicy: "All", volumeMounts: [{ name: "logs", mountPath: "/var/log/app" }] }],
    volumes: [{ name: "logs", emptyDir: {} }],
  },
  {
    initContainers: [{ name: "mesh-init", image: "mesh/init:1.24", securityContext: { capabilities: { add: ["NET_ADMIN"] } } }],
    containers: [{ name: "mesh-proxy", image: "mesh/proxy:1.24", ports: [{ containerPort: 15001 }] }],
  },
  {
    primaryContainers: [{ targetPolicy: "ByName", name: "app", env: [{ name: "OTEL_EXPORTER_OTLP_ENDPOINT", value: "http://otel-collector:4317" }, { name: "MODE", value: "canary" }] }],
  },
  {
    tolerations: [{ key: "dedicated", operator: "Equal", value: "web", effect: "NoSchedule" }],
    affinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: ["a", "b"] }] }] },
  },
  {
    metadata: [
      { patchPolicy: "Overwrite", labels: { "cost-center": "shop" }, annotations: { "prometheus.io/scrape": "true" } },
      { patchPolicy: "MergePatchJson", annotations: { "config.example.com/flags": '{"tracing":true}' } },
    ],
  },
] as NonNullable<PodDecoration["spec"]["template"]>[];

/** 50 decorations; those with index % 10 === 0 (5 of them) select the typical pod. */
export function typicalDecorations(): PodDecoration[] {
  return Array.from({ length: 50 }, (_, index) => {
    const matching = index % 10 === 0;
    const template = matching ? matchingTemplates[index / 10]! : { containers: [{ name: `other-${index}`, image: `other/sidecar:${index}` }] };
    return decoration(index, matching, template);
  });
}

/** A namespace as the namespace informer holds it: its name label and `labels`. */
export function namespaceObject(name: string, labels: Readonly<Record<string, string>> = {}): Namespace {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name, resourceVersion: "1", labels: { [NAMESPACE_NAME_LABEL]: name, ...labels } } };
}

/** A ClusterPodDecoration, defaulted, selecting namespaces by `namespaceSelector` and the typical pod by its labels. */
function clusterDecoration(index: number, namespaceSelector: ClusterPodDecoration["spec"]["namespaceSelector"], template: NonNullable<PodDecoration["spec"]["template"]>, weight: number): ClusterPodDecoration {
  return defaultClusterPodDecoration({
    apiVersion: OWN_API_VERSION,
    kind: CLUSTER_POD_DECORATION_KIND,
    metadata: {
      name: `fleet-${String(index).padStart(2, "0")}`,
      uid: `00000000-0000-4000-9000-${String(index).padStart(12, "0")}`,
      creationTimestamp: new Date(Date.UTC(2025, 11, 1, 0, index)).toISOString().replace(".000Z", "Z"),
      generation: 1,
    },
    spec: {
      namespaceSelector,
      selector: { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "In", values: ["frontend", "backend"] }] },
      injectStrategy: { weight },
      template,
    },
  });
}

export interface FleetWorld {
  /** The fleet namespace's own: 50, none selecting the typical pod. */
  decorations: PodDecoration[];
  /** 20, of which those with index % 4 === 0 (5) select the fleet namespace and render the five typical templates into the pod. */
  clusterDecorations: ClusterPodDecoration[];
  namespace: Namespace;
}

/**
 * The fleet's variant of the typical world (issue 38's bench), in FLEET_NAMESPACE: the pod gets
 * the same five renders as from typicalDecorations(), done by ClusterPodDecorations selecting
 * its namespace by label (same templates, same weights), beside 50 PodDecorations of its
 * namespace that do not select it and 15 ClusterPodDecorations that select the pod's labels but
 * other namespaces (NAMESPACE, unlabelled, is selected by none).
 */
export function fleetWorld(): FleetWorld {
  const decorations = Array.from({ length: 50 }, (_, index) => decoration(index, false, { containers: [{ name: `other-${index}`, image: `other/sidecar:${index}` }] }, FLEET_NAMESPACE));
  const clusterDecorations = Array.from({ length: 20 }, (_, index) => {
    if (index % 4 === 0) return clusterDecoration(index, { matchLabels: { ...FLEET_NAMESPACE_LABEL } }, matchingTemplates[index / 4]!, (index / 4) * 10);
    return clusterDecoration(index, { matchLabels: { team: `other-${index}` } }, { containers: [{ name: `fleet-${index}`, image: `fleet/sidecar:${index}` }] }, index);
  });
  return { decorations, clusterDecorations, namespace: namespaceObject(FLEET_NAMESPACE, FLEET_NAMESPACE_LABEL) };
}

const TOKEN_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";
const GENERATED_NAME_CHARACTERS = "bcdfghjklmnpqrstvwxz2456789";

/** A token volume's name as the ServiceAccount admission plugin makes it: five random characters after the prefix. */
export function generatedTokenVolumeName(): string {
  let suffix = "";
  for (let index = 0; index < 5; index++) suffix += GENERATED_NAME_CHARACTERS[Math.floor(Math.random() * GENERATED_NAME_CHARACTERS.length)];
  return `kube-api-access-${suffix}`;
}

/**
 * The pod as the API server hands it to webhooks: its managed fields written, and the
 * ServiceAccount admission plugin's token volume, named `kube-api-access-` and five random
 * characters, mounted into every container. Each call names the volume anew, as the plugin does.
 */
export function asAdmissionSeesIt(pod: Pod, now = new Date()): Pod {
  const tokenVolume = generatedTokenVolumeName();
  const mount = { name: tokenVolume, readOnly: true, mountPath: TOKEN_MOUNT };
  const spec = pod.spec!;
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      managedFields: [{ manager: "kube-controller-manager", operation: "Update", apiVersion: "v1", time: now.toISOString().replace(/\.\d+Z$/, "Z"), fieldsType: "FieldsV1", fieldsV1: { "f:metadata": { "f:generateName": {}, "f:labels": {} }, "f:spec": { "f:containers": {} } } }],
    },
    spec: {
      ...spec,
      containers: spec.containers.map((container) => ({ ...container, volumeMounts: [...(container.volumeMounts ?? []), mount] })),
      volumes: [...(spec.volumes ?? []), { name: tokenVolume, projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: "token" } }, { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } }] } }],
    },
  };
}

/** A pod CREATE as the API server sends it for a workload controller, as JSON text. */
export function podAdmissionReview(pod: Pod, namespace: string = NAMESPACE): string {
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "8b2f6a9e-2d0c-4b7e-9f10-3c2a1d5e7f00",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      operation: "CREATE",
      namespace,
      userInfo: { username: "system:serviceaccount:kube-system:replicaset-controller", groups: ["system:serviceaccounts", "system:authenticated"] },
      object: pod,
      dryRun: false,
    },
  });
}
