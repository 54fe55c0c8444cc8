// What a live pod runs of the decoration revisions it records (DESIGN §10, "What pods run is
// what counts"): the record is the pod's metadata, which its author may rewrite, and the parts
// a decoration injected can be changed after admission (an image set back, a label removed).
// So the planners and the status judge a pod by its parts against each recorded revision's
// template: the containers and native sidecars it injects (present, image, env, mounts), the
// volumes it adds, what it patches on the primary containers (image, mounts), the labels and
// annotations it sets, and the label recording it. A part that several recorded decorations
// set (a later one replaced a container by name, or overwrote a label) is judged by none of
// them. What differs is drift: in images, labels and annotations it can be put back in place;
// anything else only by recreating the pod. Pure.
import type { Container, EnvVar, Volume, VolumeMount } from "../api/kubernetes.ts";
import { primaryTargetPolicy, type MetadataPatch, type PodDecorationTemplate, type PrimaryContainerPatch } from "../api/poddecoration.ts";
import { envFingerprint, envFingerprintOf } from "./env-fingerprint.ts";
import { decorationLabelKey, decorationLabelValue } from "./recording.ts";

interface RunningContainer {
  name: string;
  image?: string | undefined;
  env?: readonly EnvVar[] | null | undefined;
  volumeMounts?: readonly VolumeMount[] | null | undefined;
}

export interface RunningPod {
  metadata?: { labels?: Readonly<Record<string, string>> | undefined; annotations?: Readonly<Record<string, string>> | undefined } | undefined;
  spec?: {
    containers?: readonly RunningContainer[] | undefined;
    initContainers?: readonly RunningContainer[] | null | undefined;
    volumes?: readonly { name: string }[] | null | undefined;
  } | undefined;
}

/** How a pod differs from one recorded revision. */
export interface Drift {
  /** Every difference is in an image, a label or an annotation: it can be put back in place. */
  inPlace: boolean;
  /** What differs, one phrase each. */
  details: string[];
}

export type TemplateOf = (decoration: string, revision: string) => PodDecorationTemplate | undefined;

/**
 * The recorded revisions the pod runs: `recorded` without those it drifted from. A revision
 * not stored (yet) is kept, as nothing can be judged of it.
 */
export function runningRevisions(pod: RunningPod, recorded: ReadonlyMap<string, string>, template: TemplateOf): Map<string, string> {
  const drifts = revisionDrifts(pod, recorded, template);
  const running = new Map<string, string>();
  for (const [decoration, revision] of recorded) if (!drifts.has(decoration)) running.set(decoration, revision);
  return running;
}

/** The recorded revisions the pod drifted from, by decoration, with how. */
export function revisionDrifts(pod: RunningPod, recorded: ReadonlyMap<string, string>, template: TemplateOf): Map<string, Drift> {
  const templates = new Map<string, PodDecorationTemplate>();
  for (const [decoration, revision] of recorded) {
    const found = template(decoration, revision);
    if (found !== undefined) templates.set(decoration, found);
  }
  const drifts = new Map<string, Drift>();
  if (templates.size === 0) return drifts;
  const shared = sharedParts(templates);
  const containers = new Map<string, RunningContainer>();
  for (const container of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) containers.set(container.name, container);
  const primaries = (pod.spec?.containers ?? []).filter((container) => !shared.injected.has(container.name));
  const volumes = new Set((pod.spec?.volumes ?? []).map((volume) => volume.name));
  const labels = pod.metadata?.labels ?? {};
  const annotations = pod.metadata?.annotations ?? {};
  for (const [decoration, revision] of recorded) {
    const details: string[] = [];
    let inPlace = true;
    const outOfPlace = (detail: string) => {
      details.push(detail);
      inPlace = false;
    };
    const found = templates.get(decoration);
    if (found !== undefined) {
      for (const container of injectedContainers(found)) {
        if (shared.injected.get(container.name) !== 1) continue;
        const live = containers.get(container.name);
        if (live === undefined) {
          outOfPlace(`container "${container.name}" is missing`);
          continue;
        }
        if (nonEmpty(container.image) && live.image !== container.image) details.push(`container "${container.name}" runs image ${live.image ?? "(none)"}, not ${container.image}`);
        if (envFingerprintOf(live) !== envFingerprint(container.env)) outOfPlace(`the env of container "${container.name}" is not the revision's`);
        const missing = missingMounts(live, container.volumeMounts);
        if (missing.length > 0) outOfPlace(`container "${container.name}" lacks the mounts at ${missing.join(", ")}`);
      }
      for (const patch of objects<PrimaryContainerPatch>(found.primaryContainers)) {
        for (const target of patchTargets(patch, primaries)) {
          if (nonEmpty(patch.image) && shared.primaryImages.get(target.name) === 1 && target.image !== patch.image) details.push(`container "${target.name}" runs image ${target.image ?? "(none)"}, not ${patch.image}`);
          const missing = missingMounts(target, patch.volumeMounts);
          if (missing.length > 0) outOfPlace(`container "${target.name}" lacks the mounts at ${missing.join(", ")}`);
        }
      }
      for (const volume of objects<Volume>(found.volumes)) if (!volumes.has(volume.name)) outOfPlace(`volume "${volume.name}" is missing`);
      for (const [field, kind] of [["labels", "label"], ["annotations", "annotation"]] as const) {
        const present = field === "labels" ? labels : annotations;
        for (const patch of objects<MetadataPatch>(found.metadata)) {
          if (field === "labels" && patch.patchPolicy === "MergePatchJson") continue;
          for (const [key, value] of Object.entries(patch[field] ?? {})) {
            if (shared.metadata.get(`${field}/${key}`) !== 1 || typeof value !== "string") continue;
            if (!(key in present)) details.push(`${kind} "${key}" is missing`);
            else if ((patch.patchPolicy ?? "Retain") === "Overwrite" && present[key] !== value) details.push(`${kind} "${key}" is "${present[key]}", not "${value}"`);
          }
        }
      }
      const recordingValue = decorationLabelValue(revision);
      const recordingKey = decorationLabelKey(decoration);
      if (recordingValue !== undefined && labels[recordingKey] !== recordingValue) details.push(`label "${recordingKey}" is ${labels[recordingKey] === undefined ? "missing" : `"${labels[recordingKey]}"`}, not "${recordingValue}"`);
    }
    if (details.length > 0) drifts.set(decoration, { inPlace, details });
  }
  return drifts;
}

/** How many of the recorded templates set each part: container names, primary images, metadata keys. */
function sharedParts(templates: ReadonlyMap<string, PodDecorationTemplate>) {
  const injected = new Map<string, number>();
  const primaryImages = new Map<string, number>();
  const metadata = new Map<string, number>();
  const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const template of templates.values()) {
    // Every container a template adds, regular init containers too: none of them is primary.
    for (const container of [...objects<Container>(template.containers), ...objects<Container>(template.initContainers)]) count(injected, container.name);
    for (const patch of objects<MetadataPatch>(template.metadata)) {
      for (const key of Object.keys(patch.labels ?? {})) if (patch.patchPolicy !== "MergePatchJson") count(metadata, `labels/${key}`);
      for (const key of Object.keys(patch.annotations ?? {})) count(metadata, `annotations/${key}`);
    }
  }
  // Images of primary containers: by name where a patch names one; All, First and Last may reach any.
  let anyPrimary = 0;
  for (const template of templates.values()) {
    for (const patch of objects<PrimaryContainerPatch>(template.primaryContainers)) {
      if (!nonEmpty(patch.image)) continue;
      if (primaryTargetPolicy(patch) === "ByName") count(primaryImages, patch.name ?? "");
      else anyPrimary++;
    }
  }
  return { injected, primaryImages: { get: (name: string) => (primaryImages.get(name) ?? 0) + anyPrimary }, metadata };
}

/** The containers and native sidecars a template injects (regular init containers run once and are gone). */
function injectedContainers(template: PodDecorationTemplate): Container[] {
  return [...objects<Container>(template.containers), ...objects<Container>(template.initContainers).filter((container) => container.restartPolicy === "Always")];
}

function patchTargets(patch: PrimaryContainerPatch, primaries: readonly RunningContainer[]): RunningContainer[] {
  switch (primaryTargetPolicy(patch)) {
    case "ByName":
      return primaries.filter((container) => nonEmpty(patch.name) && container.name === patch.name);
    case "All":
      return [...primaries];
    case "First":
      return primaries.slice(0, 1);
    case "Last":
      return primaries.slice(-1);
  }
}

/** The mount paths `wanted` names that the container does not mount from the same volume. */
function missingMounts(container: RunningContainer, wanted: readonly VolumeMount[] | null | undefined): string[] {
  const mounts = container.volumeMounts ?? [];
  return objects<VolumeMount>(wanted)
    .filter((mount) => !mounts.some((live) => live.mountPath === mount.mountPath && live.name === mount.name && (live.readOnly ?? false) === (mount.readOnly ?? false) && (live.subPath ?? "") === (mount.subPath ?? "")))
    .map((mount) => mount.mountPath);
}

// Cached templates may predate validation: list items that are not objects render nothing.
function objects<T extends object>(list: readonly T[] | null | undefined): T[] {
  return Array.isArray(list) ? list.filter((item): item is T => typeof item === "object" && item !== null) : [];
}

function nonEmpty(value: string | null | undefined): value is string {
  return typeof value === "string" && value !== "";
}
