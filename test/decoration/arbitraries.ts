// fast-check generators for pods and valid PodDecorations. Names, keys and values come from
// small pools so that selectors match, groups collide, and container, volume, env and
// toleration names clash with the pod's as often as they do not.
import fc from "fast-check";
import type { Container, EnvVar, NodeSelectorTerm, Toleration, Volume, VolumeMount } from "../../src/api/kubernetes.ts";
import type { LabelSelector } from "../../src/api/label-selector.ts";
import type { Pod } from "../../src/api/pod.ts";
import type { ContainerPatch, MetadataPatch, PodDecoration, PrimaryContainerPatch } from "../../src/api/poddecoration.ts";

const LABEL_KEYS = ["app", "tier", "example.com/team", "track"] as const;
const LABEL_VALUES = ["web", "api", "frontend", "canary", "a.b_c-1"] as const;
const CONTAINER_NAMES = ["app", "web", "proxy", "log", "init-a", "init-b", "metrics"] as const;
const VOLUME_NAMES = ["data", "logs", "config"] as const;
const ENV_NAMES = ["A", "B", "LOG_DIR"] as const;
const MOUNT_PATHS = ["/data", "/logs", "/etc/config"] as const;
const TAINT_KEYS = ["a", "b", "example.com/dedicated"] as const;

const labels = fc.dictionary(fc.constantFrom(...LABEL_KEYS), fc.constantFrom(...LABEL_VALUES), { maxKeys: 4 });
const jsonObjectText = fc.dictionary(fc.constantFrom("a", "b", "nested"), fc.oneof(fc.integer(), fc.constant(null), fc.dictionary(fc.constantFrom("x", "y"), fc.integer(), { maxKeys: 2 })), { maxKeys: 3 })
  .map((value) => JSON.stringify(value));
// A merge patch may be any JSON value (RFC 7386); objects, which merge, most often.
const jsonText = fc.oneof({ arbitrary: jsonObjectText, weight: 3 }, { arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)), weight: 1 });
const annotationValue = fc.oneof(jsonObjectText, fc.constantFrom("plain text", "[1,2]", ""));

// A name may repeat (Kubernetes allows it; the last definition takes effect).
const env: fc.Arbitrary<EnvVar[]> = fc.array(
  fc.record({ name: fc.constantFrom(...ENV_NAMES), value: fc.constantFrom("1", "2", "/var/log") }),
  { maxLength: 3 },
);
const volumeMounts: fc.Arbitrary<VolumeMount[]> = fc.uniqueArray(
  fc.record({ name: fc.constantFrom(...VOLUME_NAMES), mountPath: fc.constantFrom(...MOUNT_PATHS) }),
  { selector: (mount) => mount.mountPath, maxLength: 2 },
);

function container(name: string, mounts: fc.Arbitrary<VolumeMount[]> = volumeMounts): fc.Arbitrary<Container> {
  return fc.record(
    { name: fc.constant(name), image: fc.constantFrom("registry.k8s.io/pause:3.10", "example.com/app:2"), env, volumeMounts: mounts },
    { requiredKeys: ["name", "image"] },
  );
}

function containers(names: readonly string[], mounts?: fc.Arbitrary<VolumeMount[]>): fc.Arbitrary<Container[]> {
  return names.length === 0 ? fc.constant([]) : fc.tuple(...names.map((name) => container(name, mounts)));
}

const volumes: fc.Arbitrary<Volume[]> = fc.uniqueArray(
  fc.oneof(
    fc.record({ name: fc.constantFrom(...VOLUME_NAMES), emptyDir: fc.constant({}) }),
    fc.record({ name: fc.constantFrom(...VOLUME_NAMES), configMap: fc.record({ name: fc.constantFrom("cm-a", "cm-b") }) }),
  ),
  { selector: (volume) => volume.name, maxLength: 2 },
);

/** Mounts of the given volumes only: what a valid pod has. */
function mountsOf(volumeList: readonly Volume[]): fc.Arbitrary<VolumeMount[]> {
  if (volumeList.length === 0) return fc.constant([]);
  return fc.uniqueArray(fc.record({ name: fc.constantFrom(...volumeList.map((volume) => volume.name)), mountPath: fc.constantFrom(...MOUNT_PATHS) }), { selector: (mount) => mount.mountPath, maxLength: 2 });
}

const toleration: fc.Arbitrary<Toleration> = fc.oneof(
  fc.record({ key: fc.constantFrom(...TAINT_KEYS), operator: fc.constant("Exists" as const), effect: fc.constantFrom("NoSchedule" as const, "NoExecute" as const) }),
  fc.record({ key: fc.constantFrom(...TAINT_KEYS), operator: fc.constant("Equal" as const), value: fc.constantFrom("x", "y"), effect: fc.constant("NoSchedule" as const) }),
);

const nodeSelectorTerm: fc.Arbitrary<NodeSelectorTerm> = fc.record({
  matchExpressions: fc.array(
    fc.record({ key: fc.constantFrom("zone", "pool", "kubernetes.io/arch"), operator: fc.constant("In" as const), values: fc.uniqueArray(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 2 }) }),
    { minLength: 1, maxLength: 2 },
  ),
});

const affinity = fc.record(
  {
    nodeAffinity: fc.record({ requiredDuringSchedulingIgnoredDuringExecution: fc.record({ nodeSelectorTerms: fc.array(nodeSelectorTerm, { minLength: 1, maxLength: 2 }) }) }),
    podAntiAffinity: fc.constant({ preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { topologyKey: "kubernetes.io/hostname" } }] }),
  },
  { requiredKeys: [] },
);

/** A valid pod: container names unique across init and regular containers, mounts of its own volumes. */
export const pod: fc.Arbitrary<Pod> = fc
  .uniqueArray(fc.constantFrom(...CONTAINER_NAMES), { minLength: 1, maxLength: 5 })
  .chain((names) => fc.tuple(fc.constant(names), fc.integer({ min: 0, max: names.length - 1 }), volumes))
  .chain(([names, initCount, podVolumes]) =>
    fc.record(
      {
        apiVersion: fc.constant("v1"),
        kind: fc.constant("Pod"),
        metadata: fc.record(
          { name: fc.constant("pod-0"), namespace: fc.constant("shop"), labels, annotations: fc.dictionary(fc.constantFrom("example.com/config", "note"), annotationValue, { maxKeys: 2 }) },
          { requiredKeys: ["name", "namespace"] },
        ),
        spec: fc.record(
          {
            initContainers: containers(names.slice(0, initCount), mountsOf(podVolumes)),
            containers: containers(names.slice(initCount), mountsOf(podVolumes)),
            volumes: fc.constant(podVolumes),
            affinity,
            tolerations: fc.array(toleration, { maxLength: 3 }),
            runtimeClassName: fc.constantFrom("runc", "gvisor"),
          },
          { requiredKeys: ["containers", "volumes"] },
        ),
      },
      { requiredKeys: ["apiVersion", "kind", "metadata", "spec"] },
    ),
  )
  .map((generated) => {
    // Empty lists are not what a real pod has; drop them like the API server would.
    const { initContainers, volumes: podVolumes, ...spec } = generated.spec;
    return { ...generated, spec: { ...spec, ...(initContainers?.length ? { initContainers } : {}), ...(podVolumes.length > 0 ? { volumes: podVolumes } : {}) } };
  });

// Mostly selectors that match the generated pods, so that most runs render something.
const selector: fc.Arbitrary<LabelSelector> = fc.oneof(
  { arbitrary: fc.constant({}), weight: 4 },
  { arbitrary: fc.record({ matchLabels: fc.dictionary(fc.constantFrom(...LABEL_KEYS), fc.constantFrom(...LABEL_VALUES), { minKeys: 1, maxKeys: 2 }) }), weight: 1 },
  {
    arbitrary: fc.record({
      matchExpressions: fc.array(
        fc.oneof(
          fc.record({ key: fc.constantFrom(...LABEL_KEYS), operator: fc.constantFrom("In" as const, "NotIn" as const), values: fc.uniqueArray(fc.constantFrom(...LABEL_VALUES), { minLength: 1, maxLength: 2 }) }),
          fc.record({ key: fc.constantFrom(...LABEL_KEYS), operator: fc.constantFrom("Exists" as const, "DoesNotExist" as const) }),
        ),
        { minLength: 1, maxLength: 2 },
      ),
    }),
    weight: 2,
  },
);

const metadataPatch: fc.Arbitrary<MetadataPatch> = fc.oneof(
  fc.record(
    { patchPolicy: fc.constantFrom("Retain" as const, "Overwrite" as const), labels, annotations: fc.dictionary(fc.constantFrom("example.com/config", "note", "other"), fc.string({ maxLength: 5 }), { maxKeys: 2 }) },
    { requiredKeys: [] },
  ),
  fc.record({ patchPolicy: fc.constant("MergePatchJson" as const), annotations: fc.dictionary(fc.constantFrom("example.com/config", "note"), jsonText, { maxKeys: 2 }) }),
);

const primaryContainerPatch: fc.Arbitrary<PrimaryContainerPatch> = fc.oneof(
  fc.record({ targetPolicy: fc.constant("ByName" as const), name: fc.constantFrom(...CONTAINER_NAMES), image: fc.constant("example.com/patched:1"), env, volumeMounts }, { requiredKeys: ["name"] }),
  fc.record({ targetPolicy: fc.constantFrom("All" as const, "First" as const, "Last" as const), env, volumeMounts }, { requiredKeys: ["targetPolicy"] }),
);

function sidecar(name: string): fc.Arbitrary<ContainerPatch> {
  return fc.tuple(container(name), fc.option(fc.constantFrom("BeforePrimaryContainer" as const, "AfterPrimaryContainer" as const), { nil: undefined }))
    .map(([base, injectPolicy]) => (injectPolicy === undefined ? base : { ...base, injectPolicy }));
}

const template = fc
  .uniqueArray(fc.constantFrom(...CONTAINER_NAMES), { maxLength: 4 })
  .chain((names) => fc.tuple(fc.constant(names), fc.integer({ min: 0, max: names.length })))
  .chain(([names, initCount]) =>
    fc.record(
      {
        metadata: fc.array(metadataPatch, { maxLength: 2 }),
        initContainers: containers(names.slice(0, initCount)),
        primaryContainers: fc.array(primaryContainerPatch, { maxLength: 2 }),
        containers: names.length === initCount ? fc.constant([]) : fc.tuple(...names.slice(initCount).map(sidecar)),
        volumes,
        affinity: fc.record({ overrideAffinity: affinity, nodeSelectorTerms: fc.array(nodeSelectorTerm, { maxLength: 2 }) }, { requiredKeys: [] }),
        tolerations: fc.array(toleration, { maxLength: 3 }),
        runtimeClassName: fc.constantFrom("kata", "gvisor"),
      },
      { requiredKeys: [] },
    ),
  );

const DECORATION_NAMES = ["alpha", "beta", "gamma", "delta", "epsilon", "a.long-name.with.dots"] as const;

function decoration(name: string): fc.Arbitrary<PodDecoration> {
  return fc.record({
    apiVersion: fc.constant("apps.kusionstack.io/v1alpha1"),
    kind: fc.constant("PodDecoration"),
    metadata: fc
      .record({
        namespace: fc.oneof({ arbitrary: fc.constant("shop"), weight: 9 }, { arbitrary: fc.constant("other"), weight: 1 }),
        creationTimestamp: fc.constantFrom("2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"),
        deleting: fc.oneof({ arbitrary: fc.constant(false), weight: 9 }, { arbitrary: fc.constant(true), weight: 1 }),
      })
      .map(({ namespace, creationTimestamp, deleting }) => ({ name, namespace, creationTimestamp, ...(deleting ? { deletionTimestamp: "2024-02-01T00:00:00Z" } : {}) })),
    spec: fc.record(
      {
        selector,
        injectStrategy: fc.record({ group: fc.constantFrom("", "g1", "g2"), weight: fc.integer({ min: -2, max: 2 }) }, { requiredKeys: [] }),
        weight: fc.integer({ min: -2, max: 2 }),
        template,
      },
      { requiredKeys: ["selector"] },
    ),
  }) as fc.Arbitrary<PodDecoration>;
}

/** Up to five valid decorations with distinct names. */
export const decorations: fc.Arbitrary<PodDecoration[]> = fc
  .uniqueArray(fc.constantFrom(...DECORATION_NAMES), { maxLength: 5 })
  .chain((names) => (names.length === 0 ? fc.constant([]) : fc.tuple(...names.map(decoration))));
