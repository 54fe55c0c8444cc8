// Steps 2–4 of rendering a decoration: init containers, patches to the pod's primary
// containers, and sidecars. `spec` is the renderer's own; the lists and containers in it are
// the input pod's, so they are replaced, never changed.
import type { Container, EnvVar, PodSpec, VolumeMount } from "../../api/kubernetes.ts";
import { type ContainerPatch, type PrimaryContainerPatch, primaryTargetPolicy } from "../../api/poddecoration.ts";
import type { Warn } from "./warn.ts";
import { cloneJson } from "../../api/json.ts";
import { isPresent } from "./present.ts";

/** Where the next native sidecar goes: after those injected before it, ahead of the pod's own init containers. */
export interface InitContainerPlacement {
  nativeSidecars: number;
}

/**
 * Adds init containers. Native sidecars (`restartPolicy: Always`) go before the pod's own init
 * containers, after the native sidecars injected before them (the decorations' order), so the
 * pod's init containers and its app can use them; regular init containers are appended after
 * the pod's own. A name already used by any container in the pod keeps the pod's.
 */
export function renderInitContainers(spec: PodSpec, initContainers: readonly Container[], placement: InitContainerPlacement, warn: Warn): void {
  initContainers.forEach((container, index) => {
    if (containerNameTaken(spec, container.name)) {
      warn(`template.initContainers[${index}]`, `the pod already has a container named ${container.name}; the pod's is kept`);
      return;
    }
    const list = [...(spec.initContainers ?? [])];
    if (container.restartPolicy === "Always") list.splice(placement.nativeSidecars++, 0, cloneJson(container));
    else list.push(cloneJson(container));
    spec.initContainers = list;
  });
}

/**
 * Patches the primary containers: those the pod had before any decoration was rendered,
 * identified by name in `primaryNames` so that sidecars rendered earlier are never targets.
 */
export function renderPrimaryContainers(spec: PodSpec, patches: readonly PrimaryContainerPatch[], primaryNames: ReadonlySet<string>, warn: Warn): void {
  patches.forEach((patch, index) => {
    const primaries = spec.containers.filter((container) => isPresent(container) && primaryNames.has(container.name));
    let targets: readonly Container[];
    switch (primaryTargetPolicy(patch)) {
      case "ByName":
        targets = primaries.filter((container) => container.name === patch.name);
        if (targets.length === 0) warn(`template.primaryContainers[${index}]`, `the pod has no primary container named ${patch.name ?? "(no name given)"}`);
        break;
      case "All":
        targets = primaries;
        break;
      case "First":
        targets = primaries.slice(0, 1);
        break;
      case "Last":
        targets = primaries.slice(-1);
        break;
    }
    if (targets.length === 0) return;
    const targeted = new Set(targets);
    spec.containers = spec.containers.map((container) => (targeted.has(container) ? patchedContainer(container, patch) : container));
  });
}

function patchedContainer(container: Container, patch: PrimaryContainerPatch): Container {
  const result = { ...container };
  if (patch.image !== undefined && patch.image !== "") result.image = patch.image;
  if (patch.env !== undefined && patch.env.length > 0) result.env = mergeByKey<EnvVar>(container.env ?? [], patch.env, (variable) => variable.name);
  if (patch.volumeMounts !== undefined && patch.volumeMounts.length > 0) {
    result.volumeMounts = mergeByKey<VolumeMount>(container.volumeMounts ?? [], patch.volumeMounts, (mount) => mount.mountPath);
  }
  return result;
}

/**
 * An existing entry with a key the patch has is replaced in place, new keys are appended. Where
 * the list repeats a key the last entry is replaced: for env that is the definition that takes
 * effect (Kubernetes uses the last), so the decoration's value is the one the container sees.
 */
export function mergeByKey<T>(existing: readonly T[], additions: readonly T[], keyOf: (item: T) => string): T[] {
  const result = [...existing];
  const positions = new Map<string, number>();
  result.forEach((item, index) => {
    if (isPresent(item)) positions.set(keyOf(item), index);
  });
  for (const addition of additions) {
    const key = keyOf(addition);
    const position = positions.get(key);
    if (position === undefined) {
      positions.set(key, result.length);
      result.push(cloneJson(addition));
    } else {
      result[position] = cloneJson(addition);
    }
  }
  return result;
}

/**
 * Sidecars: a name the pod's containers already use is replaced in place; otherwise
 * BeforePrimaryContainer inserts just before the first primary container (so sidecars keep
 * the order they were rendered in) and AfterPrimaryContainer appends.
 */
export function renderSidecars(spec: PodSpec, sidecars: readonly ContainerPatch[], primaryNames: ReadonlySet<string>, warn: Warn): void {
  sidecars.forEach((patch, index) => {
    const { injectPolicy, ...container } = cloneJson(patch);
    const existing = spec.containers.findIndex((candidate) => isPresent(candidate) && candidate.name === container.name);
    if (existing >= 0) {
      spec.containers = spec.containers.with(existing, container);
      return;
    }
    if ((spec.initContainers ?? []).some((candidate) => isPresent(candidate) && candidate.name === container.name)) {
      warn(`template.containers[${index}]`, `the pod has an init container named ${container.name}; the sidecar is not added`);
      return;
    }
    const firstPrimary = spec.containers.findIndex((candidate) => isPresent(candidate) && primaryNames.has(candidate.name));
    if ((injectPolicy ?? "BeforePrimaryContainer") === "BeforePrimaryContainer" && firstPrimary >= 0) spec.containers = spec.containers.toSpliced(firstPrimary, 0, container);
    else spec.containers = [...spec.containers, container];
  });
}

function containerNameTaken(spec: PodSpec, name: string): boolean {
  return [...spec.containers, ...(spec.initContainers ?? [])].some((container) => isPresent(container) && container.name === name);
}
