// Generated (decorations, pod) pairs for the dry-run property test: valid pods as tools write
// them, and decorations drawn from a space wider than the valid one — values that break a rule
// of Kubernetes' pod validation on purpose, mounts of volumes the pod may lack, host ports that
// may collide with the pod's, hooks longer than its grace period. Admission (our validation)
// filters the decorations; rendering refuses what cannot go into the pod; every other rendered
// pod must be one the API server accepts.
import fc from "fast-check";
import type { Container, Volume } from "../../src/api/kubernetes.ts";
import type { Pod } from "../../src/api/pod.ts";
import type { PodDecoration, PodDecorationTemplate } from "../../src/api/poddecoration.ts";
import { podConsistencyProblems } from "../../src/decoration/pod-consistency.ts";

/** RuntimeClasses the test creates, so that a decoration's runtimeClassName names one. */
export const RUNTIME_CLASSES = ["kata", "gvisor"] as const;

const POD_CONTAINERS = ["app", "web", "worker"] as const;
const SIDECARS = ["proxy", "log", "app", "metrics"] as const;
const INIT_NAMES = ["init-a", "init-b", "setup"] as const;
const VOLUMES = ["data", "logs", "config", "certs", "disk"] as const;
const MOUNT_PATHS = ["/data", "/logs", "/etc/config", "/certs", "/var/run/x"] as const;
const IMAGES = ["registry.k8s.io/pause:3.10", "example.com/app:2"] as const;
const ENV_NAMES = ["A", "B", "LOG_DIR", "my.var"] as const;
const LABEL_KEYS = ["app", "tier", "example.com/team"] as const;

/**
 * Mostly valid, sometimes not: `invalid` values are drawn about one time in forty, so that a
 * decoration of twenty-odd fields is refused at admission about a third of the time.
 */
function mostly<A, B>(valid: fc.Arbitrary<A>, invalid: fc.Arbitrary<B>): fc.Arbitrary<A | B> {
  return fc.oneof({ arbitrary: valid, weight: 39 }, { arbitrary: invalid, weight: 1 });
}

function optional<T>(value: fc.Arbitrary<T>, weight = 1): fc.Arbitrary<T | undefined> {
  return fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: value, weight });
}

/** A record without the keys whose value came out undefined. */
function defined<T extends Record<string, unknown>>(record: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return record.map((value) => Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as T);
}

// --- the parts both sides use ------------------------------------------------------------

const labels = fc.dictionary(fc.constantFrom(...LABEL_KEYS), fc.constantFrom("web", "api", "a.b_c-1", ""), { maxKeys: 3 });

const envVar = mostly(
  fc.oneof(
    fc.record({ name: fc.constantFrom(...ENV_NAMES), value: fc.constantFrom("1", "/var/log", "") }),
    fc.record({ name: fc.constantFrom(...ENV_NAMES), valueFrom: fc.oneof(
      fc.record({ fieldRef: fc.record({ fieldPath: fc.constantFrom("metadata.name", "status.podIP", "metadata.labels['app']", "spec.nodeName") }) }),
      fc.constantFrom({ resourceFieldRef: { resource: "limits.cpu", divisor: "1m" } }, { resourceFieldRef: { resource: "requests.memory", divisor: "1Mi" } }, { resourceFieldRef: { resource: "requests.memory" } }),
      fc.record({ configMapKeyRef: fc.record({ name: fc.constant("config"), key: fc.constantFrom("a", "b.c") }) }),
      fc.record({ secretKeyRef: fc.record({ name: fc.constant("secret"), key: fc.constant("token") }) }),
    ) }),
  ),
  fc.oneof(
    fc.record({ name: fc.constantFrom("A=B", ""), value: fc.constant("1") }),
    fc.record({ name: fc.constant("A"), value: fc.constant("1"), valueFrom: fc.constant({ fieldRef: { fieldPath: "metadata.name" } }) }),
    fc.record({ name: fc.constant("A"), valueFrom: fc.constantFrom({}, { fieldRef: { fieldPath: "spec.hostname" } }, { secretKeyRef: { name: "s" } }, { fieldRef: { fieldPath: "metadata.name" }, configMapKeyRef: { name: "c", key: "k" } }) }),
  ),
);
const env = fc.array(envVar, { maxLength: 3 });

const port = mostly(
  defined(fc.record({
    containerPort: fc.constantFrom(80, 8080, 9090, 53),
    hostPort: optional(fc.constantFrom(80, 8443)),
    protocol: optional(fc.constantFrom("TCP", "UDP")),
    name: optional(fc.constantFrom("http", "metrics")),
  })),
  fc.constantFrom<Record<string, unknown>>({ containerPort: 0 }, { containerPort: 70_000 }, { containerPort: 80, protocol: "HTTP" }, { containerPort: 80, name: "Web_1" }),
);

const resources = mostly(
  fc.constantFrom<Record<string, unknown>>(
    { requests: { cpu: "100m", memory: "64Mi" } },
    { requests: { cpu: 0.25 }, limits: { cpu: "500m", memory: "128Mi" } },
    { limits: { "example.com/gpu": 1 } },
    { requests: { "ephemeral-storage": "1Gi" } },
  ),
  fc.constantFrom<Record<string, unknown>>({ requests: { cpu: "2" }, limits: { cpu: "1" } }, { limits: { memory: "lots" } }, { requests: { gpu: "1" } }, { requests: { "example.com/gpu": "1" } }),
);

const probe = mostly(
  fc.constantFrom<Record<string, unknown>>(
    { tcpSocket: { port: 80 } },
    { httpGet: { port: 8080, path: "/healthz" }, periodSeconds: 5 },
    { exec: { command: ["true"] }, initialDelaySeconds: 1 },
    { grpc: { port: 9090 } },
  ),
  fc.constantFrom<Record<string, unknown>>({}, { exec: { command: [] } }, { tcpSocket: { port: 80 }, httpGet: { port: 80 } }, { httpGet: { path: "/" } }, { tcpSocket: { port: 80 }, periodSeconds: -1 }),
);

const lifecycle = mostly(
  fc.oneof(
    fc.record({ preStop: fc.record({ sleep: fc.record({ seconds: fc.constantFrom(1, 10, 40) }) }) }),
    fc.constant<Record<string, unknown>>({ postStart: { exec: { command: ["true"] } } }),
  ),
  fc.constant<Record<string, unknown>>({ preStop: {} }),
);

const securityContext = mostly(
  fc.constantFrom<Record<string, unknown>>({ runAsUser: 1000, runAsNonRoot: true }, { privileged: true }, { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } }, { seccompProfile: { type: "RuntimeDefault" } }),
  fc.constantFrom<Record<string, unknown>>({ privileged: true, allowPrivilegeEscalation: false }, { runAsUser: -1 }, { seccompProfile: { type: "Localhost" } }, { procMount: "Unmasked" }),
);

function mounts(names: readonly string[]): fc.Arbitrary<Record<string, unknown>[]> {
  if (names.length === 0) return fc.constant([]);
  return fc.uniqueArray(
    defined(fc.record({
      name: fc.constantFrom(...names),
      mountPath: fc.constantFrom(...MOUNT_PATHS),
      readOnly: optional(fc.boolean()),
      subPath: optional(mostly(fc.constantFrom("sub", "a/b"), fc.constantFrom("/abs", "../up"))),
      mountPropagation: optional(mostly(fc.constantFrom("None", "HostToContainer"), fc.constantFrom("Bidirectional", "Shared"))),
    })),
    { selector: (mount) => mount.mountPath, maxLength: 2 },
  );
}

// --- pods ----------------------------------------------------------------------------------

const podVolume = (name: string): fc.Arbitrary<Volume> => fc.oneof(
  fc.constant({ name, emptyDir: {} }),
  fc.constant({ name, configMap: { name: "config" } }),
  fc.constant({ name, secret: { secretName: "secret" } }),
  fc.constant({ name, hostPath: { path: `/var/lib/${name}` } }),
  fc.constant({ name, persistentVolumeClaim: { claimName: name } }),
);

function podContainer(name: string, volumeNames: readonly string[]): fc.Arbitrary<Container> {
  return defined(fc.record({
    name: fc.constant(name),
    image: fc.constantFrom(...IMAGES),
    env: optional(fc.array(fc.record({ name: fc.constantFrom(...ENV_NAMES), value: fc.constantFrom("1", "2") }), { maxLength: 3 }), 2),
    volumeMounts: optional(mounts(volumeNames).map((list) => list.map(({ subPath: _subPath, mountPropagation: _propagation, ...mount }) => mount)), 2),
    ports: optional(fc.uniqueArray(fc.record({ containerPort: fc.constantFrom(80, 8080, 9090), hostPort: optional(fc.constant(8443)) }).map((value) => Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined))), { selector: (item) => item.containerPort, maxLength: 2 })),
    resources: optional(fc.constantFrom({ requests: { cpu: "100m" } }, { limits: { memory: "64Mi" } })),
    readinessProbe: optional(fc.constant({ tcpSocket: { port: 80 } })),
  })) as fc.Arbitrary<Container>;
}

/** A valid pod: what a Deployment, a Job or kubectl run would create. */
export const pod: fc.Arbitrary<Pod> = fc
  .record({
    containerNames: fc.uniqueArray(fc.constantFrom(...POD_CONTAINERS), { minLength: 1, maxLength: 3 }),
    initNames: fc.uniqueArray(fc.constantFrom(...INIT_NAMES), { maxLength: 2 }),
    volumeNames: fc.uniqueArray(fc.constantFrom(...VOLUMES), { maxLength: 3 }),
  })
  .chain(({ containerNames, initNames, volumeNames }) =>
    defined(fc.record({
      labels,
      annotations: optional(fc.dictionary(fc.constantFrom("example.com/config", "note"), fc.constantFrom('{"a":1,"b":{"c":2}}', "plain text", "[1,2]", ""), { maxKeys: 2 })),
      volumes: fc.tuple(...volumeNames.map(podVolume)),
      containers: fc.tuple(...containerNames.map((name) => podContainer(name, volumeNames))),
      initContainers: initNames.length === 0 ? fc.constant(undefined) : fc.tuple(...initNames.map((name) => podContainer(name, volumeNames).map((container) => {
        const { readinessProbe: _probe, ...rest } = container;
        return rest;
      }))),
      terminationGracePeriodSeconds: optional(fc.constantFrom(5, 60)),
      restartPolicy: optional(fc.constantFrom("Never", "OnFailure")),
      hostNetwork: optional(fc.constant(true), 1),
      podResources: optional(fc.constantFrom({ requests: { cpu: "1", memory: "1Gi" } })),
      tolerations: optional(fc.constant([{ key: "dedicated", operator: "Equal", value: "web", effect: "NoSchedule" }])),
      affinity: optional(fc.constant({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["a", "b"] }] }] } } })),
      nodeSelector: optional(fc.constant({ "kubernetes.io/os": "linux" })),
    })),
  )
  .map((generated) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { labels: generated.labels, ...(generated.annotations === undefined ? {} : { annotations: generated.annotations }) },
    spec: {
      containers: generated.containers,
      ...(generated.initContainers === undefined ? {} : { initContainers: generated.initContainers }),
      ...(generated.volumes.length === 0 ? {} : { volumes: generated.volumes }),
      ...(generated.terminationGracePeriodSeconds === undefined ? {} : { terminationGracePeriodSeconds: generated.terminationGracePeriodSeconds }),
      ...(generated.restartPolicy === undefined ? {} : { restartPolicy: generated.restartPolicy }),
      ...(generated.hostNetwork === undefined ? {} : { hostNetwork: true }),
      ...(generated.podResources === undefined ? {} : { resources: generated.podResources }),
      ...(generated.tolerations === undefined ? {} : { tolerations: generated.tolerations }),
      ...(generated.affinity === undefined ? {} : { affinity: generated.affinity }),
      ...(generated.nodeSelector === undefined ? {} : { nodeSelector: generated.nodeSelector }),
    },
  }) as Pod)
  // A pod the API server would refuse on its own (colliding host ports…) is not a valid pod.
  .filter((generated) => podConsistencyProblems(generated).length === 0);

// --- decorations ---------------------------------------------------------------------------

const anyVolume = fc.constantFrom<string>(...VOLUMES);

function sidecar(name: string): fc.Arbitrary<Record<string, unknown>> {
  return defined(fc.record({
    name: fc.constant(name),
    image: mostly(fc.constantFrom<string | undefined>(...IMAGES), fc.constantFrom(undefined, " ")),
    injectPolicy: optional(fc.constantFrom("BeforePrimaryContainer", "AfterPrimaryContainer")),
    env: optional(env, 2),
    envFrom: optional(mostly(fc.constant([{ configMapRef: { name: "config" }, prefix: "CFG_" }]), fc.constantFrom([{}], [{ secretRef: {} }])), 1),
    ports: optional(fc.array(port, { maxLength: 2 }), 2),
    resources: optional(resources, 2),
    readinessProbe: optional(probe),
    livenessProbe: optional(mostly(probe, fc.constant({ tcpSocket: { port: 80 }, successThreshold: 3 }))),
    lifecycle: optional(lifecycle),
    securityContext: optional(securityContext),
    volumeMounts: optional(mounts([...VOLUMES]), 2),
    volumeDevices: optional(fc.constant([{ name: "disk", devicePath: "/dev/disk0" }])),
    restartPolicy: optional(mostly(fc.constantFrom("Always", "OnFailure"), fc.constant("Sometimes"))),
    terminationMessagePolicy: optional(mostly(fc.constant("FallbackToLogsOnError"), fc.constant("Logs"))),
  }));
}

/** A native sidecar (restartPolicy Always) or, mostly without probes and hooks, a regular init container. */
function initContainer(name: string): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(sidecar(name), fc.constantFrom<string | undefined>(undefined, "Always"), fc.integer({ min: 0, max: 39 })).map(([container, restartPolicy, dice]) => {
    const { injectPolicy: _policy, restartPolicy: _restart, readinessProbe, livenessProbe, lifecycle: hooks, ...rest } = container;
    // A regular init container may carry none of these; one time in forty it does anyway.
    const running = restartPolicy === "Always" || dice === 0 ? { readinessProbe, livenessProbe, lifecycle: hooks } : {};
    return Object.fromEntries(Object.entries({ ...rest, ...running, restartPolicy }).filter(([, value]) => value !== undefined));
  });
}

const primaryPatch = defined(fc.record({
  targetPolicy: optional(mostly(fc.constantFrom("All", "First", "Last"), fc.constant("ByName")), 3),
  name: optional(fc.constantFrom(...POD_CONTAINERS), 3),
  image: optional(mostly(fc.constant("example.com/patched:1"), fc.constant(""))),
  env: optional(env, 3),
  volumeMounts: optional(mounts([...VOLUMES]), 2),
}));

const decorationVolume = (name: string): fc.Arbitrary<Record<string, unknown>> => fc.oneof(
  fc.constant({ name, emptyDir: {} }),
  mostly(fc.constant({ name, emptyDir: { sizeLimit: "1Gi" } }), fc.constant({ name, emptyDir: { sizeLimit: "-1Gi" } })),
  mostly(fc.constantFrom({ name, hostPath: { path: "/var/log" } }, { name, hostPath: { path: "/run/x", type: "DirectoryOrCreate" } }), fc.constantFrom({ name, hostPath: {} }, { name, hostPath: { path: "/a/../b" } }, { name, hostPath: { path: "/x", type: "Folder" } })),
  mostly(fc.constant({ name, configMap: { name: "config", items: [{ key: "a", path: "conf/a" }], defaultMode: 0o644 } }), fc.constantFrom({ name, configMap: {} }, { name, configMap: { name: "c", items: [{ key: "a", path: "../a" }] } }, { name, configMap: { name: "c", defaultMode: 4096 } })),
  fc.constant({ name, secret: { secretName: "secret" } }),
  mostly(fc.constant({ name, persistentVolumeClaim: { claimName: name } }), fc.constant({ name, persistentVolumeClaim: {} })),
  mostly(fc.constant({ name, downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } }), fc.constant({ name, downwardAPI: { items: [{ path: "x" }] } })),
);

const override = defined(fc.record({
  nodeAffinity: optional(mostly(
    fc.constant({ requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "pool", operator: "In", values: ["x"] }] }] } }),
    fc.constantFrom({ requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } }, { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, preference: { matchExpressions: [{ key: "pool", operator: "Exists" }] } }] }),
  )),
  podAntiAffinity: optional(mostly(
    fc.constant({ preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, podAffinityTerm: { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: { app: "web" } } } }] }),
    fc.constantFrom({ requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: "web" } } }] }, { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: "zone", matchLabelKeys: ["app"] }] }),
  )),
}));

const template: fc.Arbitrary<PodDecorationTemplate> = fc
  .record({
    sidecarNames: fc.uniqueArray(fc.constantFrom(...SIDECARS), { maxLength: 2 }),
    initNames: fc.uniqueArray(fc.constantFrom(...INIT_NAMES), { maxLength: 1 }),
    volumeNames: fc.uniqueArray(anyVolume, { maxLength: 3 }),
  })
  .chain(({ sidecarNames, initNames, volumeNames }) =>
    defined(fc.record({
      metadata: optional(fc.array(fc.oneof(
        defined(fc.record({ patchPolicy: optional(fc.constantFrom("Retain", "Overwrite")), labels: optional(labels), annotations: optional(fc.dictionary(fc.constantFrom("example.com/config", "note", "extra"), fc.constantFrom("v", ""), { maxKeys: 2 })) })),
        fc.record({ patchPolicy: fc.constant("MergePatchJson"), annotations: fc.dictionary(fc.constantFrom("example.com/config", "note"), mostly(fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)), fc.constant("not json")), { maxKeys: 2 }) }),
      ), { maxLength: 2 }), 2),
      initContainers: initNames.length === 0 ? fc.constant(undefined) : fc.tuple(...initNames.map(initContainer)),
      primaryContainers: optional(fc.array(primaryPatch, { maxLength: 2 }), 3),
      containers: sidecarNames.length === 0 ? fc.constant(undefined) : fc.tuple(...sidecarNames.map(sidecar)),
      volumes: volumeNames.length === 0 ? fc.constant(undefined) : fc.tuple(...volumeNames.map(decorationVolume)),
      affinity: optional(defined(fc.record({
        overrideAffinity: optional(override),
        nodeSelectorTerms: optional(mostly(fc.constant([{ matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: ["a"] }] }]), fc.constant([{ matchExpressions: [{ key: "bad key", operator: "Exists" }] }]))),
      }))),
      tolerations: optional(mostly(fc.constant([{ key: "dedicated", operator: "Exists", effect: "NoSchedule" }]), fc.constant([{ key: "dedicated", operator: "Exists", value: "x" }]))),
      runtimeClassName: optional(mostly(fc.constantFrom(...RUNTIME_CLASSES), fc.constant("Not_A_Name"))),
    })),
  ) as fc.Arbitrary<PodDecorationTemplate>;

function decoration(name: string): fc.Arbitrary<PodDecoration> {
  return template.map((generated) => ({
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name, namespace: "default", creationTimestamp: "2026-01-01T00:00:00Z" },
    spec: { selector: {}, template: generated },
  }));
}

/** One or two decorations (two decorations can collide where one alone cannot) and a pod. */
export const pair = fc.record({
  pod,
  decorations: fc.oneof({ arbitrary: fc.tuple(decoration("first")), weight: 3 }, { arbitrary: fc.tuple(decoration("first"), decoration("second")), weight: 1 }),
});
