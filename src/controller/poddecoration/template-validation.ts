// Semantic validation of a decoration (DESIGN §7): a sample pod rendered with it is sent to
// the API server as a server-side dry-run create, so the API server's own rules (volume
// references, ports, resource formats, ...) judge the rendered result. The pod the API server
// would store is compared with the one sent: a field it drops (a feature its Kubernetes version
// or feature gates lack, a field it does not know) is part of the decoration that would not be
// enforced, and is reported as such (docs/kubernetes-versions.md), never passed over.
import type { Pod } from "../../api/pod.ts";
import type { PodDecoration, PodDecorationTemplate } from "../../api/poddecoration.ts";
import { DecorationError } from "../../decoration/decoration-error.ts";
import { renderPod } from "../../decoration/render.ts";
import type { DecorationRevision } from "../../decoration/decorate.ts";
import type { DryRunCreate } from "../../kube/server-dry-run.ts";


interface SamplePodSource {
  metadata?: { labels?: Record<string, string> };
  spec?: {
    containers?: readonly { name?: string; image?: string; volumeMounts?: readonly { name?: string; mountPath?: string }[] }[];
    initContainers?: readonly { name?: string; image?: string; volumeMounts?: readonly { name?: string; mountPath?: string }[] }[];
    volumes?: readonly ({ name?: string } & Record<string, unknown>)[];
  };
}

const serviceAccountVolume = /^kube-api-access-/;

/**
 * A pod to render the decoration into: the containers (names, images, mounts) and volumes of a
 * pod it selects, without what admission added (service-account token volumes), or a minimal
 * pod with the selector's labels, and the volumes the template expects pods to provide, when it
 * selects none yet.
 */
export function samplePod(decoration: PodDecoration, matched: SamplePodSource | undefined, template: PodDecorationTemplate = decoration.spec.template ?? {}): Pod {
  const namespace = decoration.metadata.namespace ?? "default";
  const metadata = { generateName: "pod-decorator-validation-", namespace, labels: { ...(matched?.metadata?.labels ?? selectorLabels(decoration)) } };
  const containers = (list: NonNullable<SamplePodSource["spec"]>["containers"]) =>
    (list ?? []).map((container) => ({
      name: container.name ?? "main",
      image: container.image ?? "registry.k8s.io/pause:3.10",
      ...(container.volumeMounts === undefined
        ? {}
        : { volumeMounts: container.volumeMounts.filter((mount) => !serviceAccountVolume.test(mount.name ?? "")).map((mount) => ({ ...mount })) }),
    }));
  const spec = matched?.spec;
  if (spec?.containers === undefined || spec.containers.length === 0) {
    // The volumes the template expects a pod to provide, so that only the template is judged.
    const provided = podProvidedVolumes(template);
    return { apiVersion: "v1", kind: "Pod", metadata, spec: { containers: [{ name: "main", image: "registry.k8s.io/pause:3.10" }], ...(provided.length === 0 ? {} : { volumes: provided }) } } as Pod;
  }
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata,
    spec: {
      containers: containers(spec.containers),
      ...(spec.initContainers === undefined ? {} : { initContainers: containers(spec.initContainers) }),
      ...(spec.volumes === undefined ? {} : { volumes: spec.volumes.filter((volume) => !serviceAccountVolume.test(volume.name ?? "")).map((volume) => ({ ...volume })) }),
    },
  } as Pod;
}

/** Placeholders for the volumes a template's mounts (emptyDir) and devices (a claim) name but do not declare. */
function podProvidedVolumes(template: PodDecorationTemplate): Record<string, unknown>[] {
  const declared = new Set((template.volumes ?? []).map((volume) => volume.name));
  const volumes = new Map<string, Record<string, unknown>>();
  const containers: { volumeMounts?: { name: string }[] | undefined; volumeDevices?: unknown }[] = [...(template.initContainers ?? []), ...(template.containers ?? []), ...(template.primaryContainers ?? [])];
  for (const container of containers) {
    for (const device of Array.isArray(container.volumeDevices) ? (container.volumeDevices as { name?: unknown }[]) : []) {
      if (typeof device.name === "string" && !declared.has(device.name)) volumes.set(device.name, { name: device.name, persistentVolumeClaim: { claimName: device.name } });
    }
    for (const mount of container.volumeMounts ?? []) if (!declared.has(mount.name) && !volumes.has(mount.name)) volumes.set(mount.name, { name: mount.name, emptyDir: {} });
  }
  return [...volumes.values()];
}

function selectorLabels(decoration: PodDecoration): Record<string, string> {
  const labels: Record<string, string> = { ...(decoration.spec.selector?.matchLabels ?? {}) };
  for (const requirement of decoration.spec.selector?.matchExpressions ?? []) {
    if ((requirement.operator === "In" || requirement.operator === "Exists") && labels[requirement.key] === undefined) {
      labels[requirement.key] = requirement.values?.[0] ?? "true";
    }
  }
  return labels;
}

/**
 * The API server's verdict on a pod rendered with the revision: refused (with its message),
 * accepted, or accepted with fields dropped (their paths in the pod, containers and volumes by
 * name).
 */
export type TemplateVerdict = { valid: true; dropped?: readonly string[] } | { valid: false; message: string };

/** Renders the decoration's revision into the sample and asks the API server. */
export async function validateTemplate(decoration: PodDecoration, revision: DecorationRevision, matched: SamplePodSource | undefined, dryRun: DryRunCreate): Promise<TemplateVerdict> {
  let rendered;
  try {
    rendered = renderPod(samplePod(decoration, matched, revision.template), [{ name: decoration.metadata.name ?? "", namespace: decoration.metadata.namespace, ...revision }]);
  } catch (error) {
    // The renderer already knows the API server would refuse it (a mount of a volume the sample lacks…).
    if (error instanceof DecorationError) return { valid: false, message: error.message };
    throw error;
  }
  const verdict = await dryRun(rendered.pod);
  if (!verdict.valid || verdict.stored === undefined) return verdict.valid ? { valid: true } : verdict;
  const dropped = droppedFields(rendered.pod.spec, verdict.stored.spec, "spec");
  return dropped.length === 0 ? { valid: true } : { valid: true, dropped };
}

/** Lists keyed by name in a pod spec: their items are matched by name, not position. */
const NAMED_LISTS = new Set(["spec.containers", "spec.initContainers", "spec.ephemeralContainers", "spec.volumes"]);

/**
 * The paths of `sent` that `stored` lacks. Values may be normalised (a quantity rewritten,
 * defaults added) and are not compared; zero values (false, 0, "", [], {}) are left out, as
 * the API server omits them when it writes an object.
 */
export function droppedFields(sent: unknown, stored: unknown, path: string): string[] {
  if (isZero(sent)) return [];
  if (stored === undefined || stored === null) return [path];
  if (Array.isArray(sent)) {
    if (!Array.isArray(stored)) return [];
    const storedList: readonly unknown[] = stored;
    if (NAMED_LISTS.has(path)) {
      return sent.flatMap((item: unknown) => {
        const name = (item as { name?: unknown } | null)?.name;
        const match = storedList.find((candidate) => (candidate as { name?: unknown } | null)?.name === name);
        return droppedFields(item, match, `${path}[name=${String(name)}]`);
      });
    }
    return sent.flatMap((item: unknown, index) => droppedFields(item, storedList[index], `${path}[${String(index)}]`));
  }
  if (typeof sent !== "object" || typeof stored !== "object" || Array.isArray(stored)) return [];
  const storedObject = stored as Record<string, unknown>;
  return Object.entries(sent as Record<string, unknown>).flatMap(([key, value]) => droppedFields(value, storedObject[key], `${path}.${key}`));
}

function isZero(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === "object" && Object.keys(value).length === 0;
}
