// Semantic validation of a decoration (DESIGN §7): a sample pod rendered with it is sent to
// the API server as a server-side dry-run create, so the API server's own rules (volume
// references, ports, resource formats, ...) judge the rendered result.
import type { Pod } from "../../api/pod.ts";
import type { PodDecoration, PodDecorationTemplate } from "../../api/poddecoration.ts";
import { DecorationError } from "../../decoration/decoration-error.ts";
import { renderPod } from "../../decoration/render.ts";
import type { DecorationRevision } from "../../decoration/decorate.ts";
import type { DryRunCreate, DryRunVerdict } from "../../kube/server-dry-run.ts";


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

/** Renders the decoration's revision into the sample and asks the API server. */
export async function validateTemplate(decoration: PodDecoration, revision: DecorationRevision, matched: SamplePodSource | undefined, dryRun: DryRunCreate): Promise<DryRunVerdict> {
  let rendered;
  try {
    rendered = renderPod(samplePod(decoration, matched, revision.template), [{ name: decoration.metadata.name ?? "", namespace: decoration.metadata.namespace, ...revision }]);
  } catch (error) {
    // The renderer already knows the API server would refuse it (a mount of a volume the sample lacks…).
    if (error instanceof DecorationError) return { valid: false, message: error.message };
    throw error;
  }
  return dryRun(rendered.pod);
}
