// What a PodDecoration template may use depends on the Kubernetes version its pods are created
// on (docs/kubernetes-versions.md). The rules this project mirrors are those of the newest
// release it is tested on (1.37); an older API server either refuses a pod that uses a field of
// a later feature, or — worse — drops the field and runs the pod without it, so that a sidecar
// is no sidecar or a resize policy holds nowhere. Each feature below is on by default from the
// minor it names; on an older API server a decoration that uses it is refused at admission with
// the version and the field named, never admitted to be silently not enforced. (Feature gates a
// cluster turns off are caught after the fact: the controller's server-side dry run reports what
// the API server dropped, see src/controller/poddecoration/template-validation.ts.)
import { childPath, type FieldError, forbiddenError, indexPath } from "./field-errors.ts";
import { asList, asRecord, isSet, type JsonRecord } from "./json-shape.ts";
import type { PodDecorationTemplate } from "./poddecoration.ts";

/** A Kubernetes version as the API server reports it (`/version`). */
export interface KubernetesVersion {
  major: number;
  minor: number;
  /** e.g. v1.30.14, or a distribution's v1.30.14-eks-1a2b3c. */
  gitVersion: string;
}

/**
 * Reads `/version`'s gitVersion (v1.30.14, v1.31.2+k3s1, v1.32.0-gke.100); undefined when it is
 * not a release's (an unversioned build says v0.0.0-master).
 */
export function parseKubernetesVersion(gitVersion: string): KubernetesVersion | undefined {
  const match = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$/.exec(gitVersion.trim());
  if (match === null || Number(match[1]) < 1) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), gitVersion: gitVersion.trim() };
}

export function atLeast(version: KubernetesVersion, major: number, minor: number): boolean {
  return version.major > major || (version.major === major && version.minor >= minor);
}

/** What an older API server does with a pod that uses the feature. */
type Effect = "dropped" | "refused";

interface TemplateFeature {
  /** The Kubernetes feature gate. */
  gate: string;
  /** The first 1.x minor where the gate is on by default (beta or GA). */
  since: number;
  what: string;
  effect: Effect;
  /** The template paths that use the feature. */
  uses(template: PodDecorationTemplate, path: string): string[];
}

type Role = "init" | "container" | "primary";

interface ContainerAt {
  container: JsonRecord;
  path: string;
  role: Role;
}

function containersOf(template: PodDecorationTemplate, path: string): ContainerAt[] {
  const list = (field: "initContainers" | "containers" | "primaryContainers", role: Role) =>
    asList(template[field]).map((value, index) => ({ container: asRecord(value) ?? {}, path: indexPath(childPath(path, field), index), role }));
  return [...list("initContainers", "init"), ...list("containers", "container"), ...list("primaryContainers", "primary")];
}

function eachContainer(fn: (at: ContainerAt) => string[]): (template: PodDecorationTemplate, path: string) => string[] {
  return (template, path) => containersOf(template, path).flatMap(fn);
}

/** The lifecycle hooks' sleep actions of a container, with their paths. */
function sleeps({ container, path }: ContainerAt): { seconds: unknown; path: string }[] {
  const lifecycle = asRecord(container.lifecycle);
  if (lifecycle === undefined) return [];
  return (["postStart", "preStop"] as const).flatMap((hook) => {
    const sleep = asRecord(asRecord(lifecycle[hook])?.sleep);
    return sleep === undefined ? [] : [{ seconds: sleep.seconds, path: childPath(childPath(childPath(path, "lifecycle"), hook), "sleep") }];
  });
}

/** An environment variable name as Kubernetes read one before RelaxedEnvironmentVariableValidation (IsEnvVarName). */
const STRICT_ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

export const TEMPLATE_FEATURES: readonly TemplateFeature[] = [
  {
    gate: "SidecarContainers", since: 29, what: "native sidecars (init containers with restartPolicy: Always)", effect: "dropped",
    uses: eachContainer(({ container, path, role }) => (role === "init" && container.restartPolicy === "Always" ? [childPath(path, "restartPolicy")] : [])),
  },
  {
    gate: "PodLifecycleSleepAction", since: 30, what: "the sleep action of lifecycle hooks", effect: "dropped",
    uses: eachContainer((at) => sleeps(at).map((sleep) => sleep.path)),
  },
  {
    gate: "RecursiveReadOnlyMounts", since: 31, what: "recursiveReadOnly volume mounts", effect: "dropped",
    uses: eachContainer(({ container, path }) => asList(container.volumeMounts).flatMap((mount, index) =>
      isSet(asRecord(mount)?.recursiveReadOnly) ? [childPath(indexPath(childPath(path, "volumeMounts"), index), "recursiveReadOnly")] : [])),
  },
  {
    gate: "RelaxedEnvironmentVariableValidation", since: 32, what: "environment variable names outside [-._a-zA-Z][-._a-zA-Z0-9]*", effect: "refused",
    uses: eachContainer(({ container, path }) => [
      ...asList(container.env).flatMap((variable, index) => {
        const name = asRecord(variable)?.name;
        return typeof name === "string" && name !== "" && !STRICT_ENV_NAME.test(name) ? [childPath(indexPath(childPath(path, "env"), index), "name")] : [];
      }),
      ...asList(container.envFrom).flatMap((source, index) => {
        const prefix = asRecord(source)?.prefix;
        return typeof prefix === "string" && prefix !== "" && !STRICT_ENV_NAME.test(prefix) ? [childPath(indexPath(childPath(path, "envFrom"), index), "prefix")] : [];
      }),
    ]),
  },
  {
    gate: "PodLifecycleSleepActionAllowZero", since: 33, what: "a lifecycle sleep of 0 seconds", effect: "refused",
    uses: eachContainer((at) => sleeps(at).filter((sleep) => sleep.seconds === 0).map((sleep) => childPath(sleep.path, "seconds"))),
  },
  {
    gate: "InPlacePodVerticalScaling", since: 33, what: "container resize policies (in-place pod resize)", effect: "dropped",
    uses: eachContainer(({ container, path }) => (asList(container.resizePolicy).length > 0 ? [childPath(path, "resizePolicy")] : [])),
  },
  {
    gate: "ImageVolume", since: 35, what: "image volumes", effect: "refused",
    uses: (template, path) => asList(template.volumes).flatMap((volume, index) => (isSet(asRecord(volume)?.image) ? [childPath(indexPath(childPath(path, "volumes"), index), "image")] : [])),
  },
  {
    gate: "EnvFiles", since: 35, what: "environment variables read from files (valueFrom.fileKeyRef)", effect: "refused",
    uses: eachContainer(({ container, path }) => asList(container.env).flatMap((variable, index) =>
      isSet(asRecord(asRecord(variable)?.valueFrom)?.fileKeyRef) ? [childPath(childPath(indexPath(childPath(path, "env"), index), "valueFrom"), "fileKeyRef")] : [])),
  },
  {
    gate: "ContainerRestartRules", since: 35, what: "restart policies of regular containers and container restart rules", effect: "refused",
    uses: eachContainer(({ container, path, role }) => [
      ...(role === "container" && isSet(container.restartPolicy) ? [childPath(path, "restartPolicy")] : []),
      ...(asList(container.restartPolicyRules).length > 0 ? [childPath(path, "restartPolicyRules")] : []),
    ]),
  },
  {
    gate: "RestartAllContainersOnContainerExits", since: 36, what: "the RestartAllContainers restart rule action", effect: "refused",
    uses: eachContainer(({ container, path }) => asList(container.restartPolicyRules).flatMap((rule, index) =>
      asRecord(rule)?.action === "RestartAllContainers" ? [childPath(indexPath(childPath(path, "restartPolicyRules"), index), "action")] : [])),
  },
];

/**
 * The fields of a template that the cluster's Kubernetes version cannot honour, as admission
 * errors naming the feature, the version it needs and the version the API server runs.
 */
export function versionGatedFieldErrors(template: PodDecorationTemplate | undefined, path: string, version: KubernetesVersion): FieldError[] {
  if (template === undefined) return [];
  const errors: FieldError[] = [];
  for (const feature of TEMPLATE_FEATURES) {
    if (atLeast(version, 1, feature.since)) continue;
    const effect = feature.effect === "dropped" ? "drops the field from pods, so the decoration would not be enforced" : "refuses pods that use it";
    for (const used of feature.uses(template, path)) {
      errors.push(forbiddenError(used, `${feature.what} need Kubernetes 1.${feature.since} or later (feature gate ${feature.gate}); this cluster's API server is ${version.gitVersion}, which ${effect}`));
    }
  }
  return errors;
}

/** The template features a cluster of this version refuses in decorations, for serve's start-up log. */
export function unavailableTemplateFeatures(version: KubernetesVersion): string[] {
  return TEMPLATE_FEATURES.filter((feature) => !atLeast(version, 1, feature.since)).map((feature) => `${feature.what} (1.${feature.since}, ${feature.gate})`);
}
