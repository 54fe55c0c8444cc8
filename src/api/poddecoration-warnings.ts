// Admission warnings for a valid PodDecoration (DESIGN §2, §3): where a KusionStack manifest
// means something else here, because KusionStack's meaning is unsafe or surprising, the
// warning names the field and the difference; and where a volume mount relies on the pod to
// provide the volume, it says what happens to a pod that does not. kubectl prints them.
//
// Two moments: `podDecorationDefaultingWarnings` sees the object as written (the mutating
// webhook, before our defaults make an omission explicit); `podDecorationWarnings` sees the
// object as it will be stored (the validating webhook). Each warning comes from one of them.
import { childPath, indexPath } from "./field-errors.ts";
import { withoutNullFields } from "./null-fields.ts";
import { asList, asRecord, asString, type JsonRecord } from "./json-shape.ts";
import { CHECKED_VOLUME_SOURCES } from "./volume-rules.ts";
import type { PodDecoration, PodDecorationTemplate } from "./poddecoration.ts";
import { primaryTargetPolicy } from "./poddecoration.ts";

/** Warnings about what the defaults will make of the (valid) object as written. */
export function podDecorationDefaultingWarnings(written: PodDecoration): string[] {
  const pd = withoutNullFields(written);
  const warnings: string[] = [];
  (pd.spec.template?.primaryContainers ?? []).forEach((patch, index) => {
    if (patch.targetPolicy !== undefined || primaryTargetPolicy(patch) !== "ByName") return;
    const path = childPath(indexPath("spec.template.primaryContainers", index), "targetPolicy");
    warnings.push(`${path}: not set and name is ${JSON.stringify(patch.name)}, so only that container is patched (ByName); KusionStack defaults targetPolicy to All and patches every container. Set targetPolicy to say which you mean.`);
  });
  return warnings;
}

/**
 * Mounts (and devices, and env files) naming a volume the decoration does not declare: each
 * pod must provide it, and a pod that does not gets no decoration (the pod webhook refuses or
 * admits it undecorated, as its onDecorationError says).
 */
function podProvidedVolumeWarnings(template: PodDecorationTemplate): string[] {
  const declared = new Set((template.volumes ?? []).map((volume) => volume.name));
  const warnings: string[] = [];
  const check = (name: string | undefined, path: string) => {
    if (name === undefined || name === "" || declared.has(name)) return;
    warnings.push(`${path}: volume ${JSON.stringify(name)} is not declared in spec.template.volumes, so each pod must provide it; a pod without it is not decorated (refused, or admitted undecorated, as the webhook's onDecorationError says).`);
  };
  const containers: [string, { volumeMounts?: { name: string }[] | undefined; env?: unknown }[] | undefined][] = [
    ["initContainers", template.initContainers],
    ["primaryContainers", template.primaryContainers],
    ["containers", template.containers],
  ];
  for (const [list, members] of containers) {
    (members ?? []).forEach((container, index) => {
      const path = indexPath(`spec.template.${list}`, index);
      (container.volumeMounts ?? []).forEach((mount, mountIndex) => check(mount.name, childPath(indexPath(childPath(path, "volumeMounts"), mountIndex), "name")));
      asList((container as JsonRecord).volumeDevices).forEach((device, deviceIndex) => check(asString(asRecord(device)?.name), childPath(indexPath(childPath(path, "volumeDevices"), deviceIndex), "name")));
      asList(container.env).forEach((variable, envIndex) => {
        check(asString(asRecord(asRecord(asRecord(variable)?.valueFrom)?.fileKeyRef)?.volumeName), childPath(indexPath(childPath(path, "env"), envIndex), "valueFrom.fileKeyRef.volumeName"));
      });
    });
  }
  return warnings;
}

/** Warnings about the (valid) object as it will be stored. */
export function podDecorationWarnings(stored: PodDecoration): string[] {
  const warnings: string[] = [];
  const { spec } = withoutNullFields(stored);
  if (spec.selector === undefined) {
    warnings.push("spec.selector: not set, so this decoration selects no pod (as Kubernetes reads a missing selector; {} selects every pod). KusionStack counts every pod of the namespace as matched but decorates none.");
  }
  const rollingUpdate = spec.updateStrategy?.rollingUpdate;
  if (rollingUpdate?.selector !== undefined && rollingUpdate.partition !== undefined) {
    warnings.push(`spec.updateStrategy.rollingUpdate: partition and selector are both set: the selector picks the pods to update and the partition holds back ${rollingUpdate.partition} of them; KusionStack ignores the partition when a selector is set.`);
  }
  const template = spec.template ?? {};
  warnings.push(...podProvidedVolumeWarnings(template));
  (template.volumes ?? []).forEach((volume, index) => {
    for (const [source, value] of Object.entries(volume)) {
      if (source === "name" || typeof value !== "object" || value === null || (CHECKED_VOLUME_SOURCES as readonly string[]).includes(source)) continue;
      warnings.push(`${childPath(indexPath("spec.template.volumes", index), source)}: the rules of this volume source are not checked at admission; the controller's server-side dry run reports in TemplateValid what the API server refuses.`);
    }
  });
  (template.primaryContainers ?? []).forEach((patch, index) => {
    if ((patch.volumeMounts ?? []).length === 0) return;
    const path = childPath(indexPath("spec.template.primaryContainers", index), "volumeMounts");
    warnings.push(`${path}: merged into the container's mounts by mountPath (a mount at the same path is replaced); KusionStack merges them by volume name.`);
  });
  if ((template.affinity?.nodeSelectorTerms ?? []).length > 0) {
    warnings.push("spec.template.affinity.nodeSelectorTerms: ANDed into the pod's required node selector terms, so the decoration only narrows where the pod may run; KusionStack appends them to the pod's terms, which are ORed, and so widens it.");
  }
  if (template.affinity?.overrideAffinity !== undefined) {
    warnings.push("spec.template.affinity.overrideAffinity: replaces only the affinities it sets (nodeAffinity, podAffinity, podAntiAffinity) and keeps the pod's others; KusionStack replaces the pod's whole affinity.");
  }
  if ((template.tolerations ?? []).length > 0) {
    warnings.push("spec.template.tolerations: added to the pod's tolerations, never replacing one; KusionStack replaces the pod's tolerations that have the same key.");
  }
  if (template.runtimeClassName !== undefined && template.runtimeClassName !== "") {
    warnings.push("spec.template.runtimeClassName: set on the pods; KusionStack accepts the field but does not apply it.");
  }
  return warnings;
}
