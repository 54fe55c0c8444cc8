// Validation of the pod parts both kinds carry (containers, env, mounts, volumes, tolerations,
// node selector terms, labels): the basics the API server would otherwise reject only later,
// when a rendered or templated pod is created, far from the manifest that caused it.
import {
  childPath,
  duplicateError,
  type FieldError,
  forbiddenError,
  indexPath,
  invalidError,
  keyPath,
  requiredError,
} from "./field-errors.ts";
import type { Container, EnvVar, NodeSelectorRequirement, NodeSelectorTerm, ObjectMeta, Toleration, Volume, VolumeMount } from "./kubernetes.ts";
import { setOperatorValuesErrors } from "./label-selector.ts";
import { dns1123LabelErrors, dns1123SubdomainErrors, labelValueErrors, qualifiedNameErrors } from "./names.ts";

/** `metadata.name` must be set (or generated) and be a DNS-1123 subdomain. */
export function validateObjectName(metadata: ObjectMeta, path: string): FieldError[] {
  const namePath = childPath(path, "name");
  if (metadata.name === undefined || metadata.name === "") {
    return metadata.generateName === undefined || metadata.generateName === "" ? [requiredError(namePath, "name or generateName is required")] : [];
  }
  return dns1123SubdomainErrors(metadata.name).map((reason) => invalidError(namePath, metadata.name, reason));
}

export function validateLabels(labels: Readonly<Record<string, string>>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(labels)) {
    for (const reason of qualifiedNameErrors(key)) errors.push(invalidError(path, key, reason));
    for (const reason of labelValueErrors(value)) errors.push(invalidError(keyPath(path, key), value, reason));
  }
  return errors;
}

export function validateAnnotationKeys(annotations: Readonly<Record<string, string>>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const key of Object.keys(annotations)) {
    for (const reason of qualifiedNameErrors(key.toLowerCase())) errors.push(invalidError(path, key, reason));
  }
  return errors;
}

/** Containers that end up in one pod: names valid and unique across the whole list, images set. */
export function validateContainers(containers: readonly { container: Container; path: string }[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const { container, path } of containers) {
    const namePath = childPath(path, "name");
    for (const reason of dns1123LabelErrors(container.name)) errors.push(invalidError(namePath, container.name, reason));
    if (seen.has(container.name)) errors.push(duplicateError(namePath, container.name));
    seen.add(container.name);
    if (container.image === undefined || container.image.trim() === "") errors.push(requiredError(childPath(path, "image")));
    errors.push(...validateEnv(container.env ?? [], childPath(path, "env")));
    errors.push(...validateVolumeMounts(container.volumeMounts ?? [], childPath(path, "volumeMounts")));
  }
  return errors;
}

export function validateEnv(env: readonly EnvVar[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  env.forEach((variable, index) => {
    const variablePath = indexPath(path, index);
    if (variable.name === "") errors.push(requiredError(childPath(variablePath, "name")));
    if (variable.value !== undefined && variable.value !== "" && variable.valueFrom !== undefined) {
      errors.push(forbiddenError(childPath(variablePath, "valueFrom"), "may not be specified when `value` is not empty"));
    }
  });
  return errors;
}

export function validateVolumeMounts(mounts: readonly VolumeMount[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  const mountPaths = new Set<string>();
  mounts.forEach((mount, index) => {
    const mountPath = indexPath(path, index);
    if (mount.name === "") errors.push(requiredError(childPath(mountPath, "name")));
    if (mount.mountPath === "") errors.push(requiredError(childPath(mountPath, "mountPath")));
    else if (mountPaths.has(mount.mountPath)) errors.push(duplicateError(childPath(mountPath, "mountPath"), mount.mountPath));
    mountPaths.add(mount.mountPath);
    if (mount.subPath !== undefined && mount.subPathExpr !== undefined && mount.subPath !== "" && mount.subPathExpr !== "") {
      errors.push(forbiddenError(childPath(mountPath, "subPathExpr"), "subPathExpr and subPath are mutually exclusive"));
    }
  });
  return errors;
}

export function validateVolumes(volumes: readonly Volume[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  volumes.forEach((volume, index) => {
    const namePath = childPath(indexPath(path, index), "name");
    for (const reason of dns1123LabelErrors(volume.name)) errors.push(invalidError(namePath, volume.name, reason));
    if (names.has(volume.name)) errors.push(duplicateError(namePath, volume.name));
    names.add(volume.name);
    // Every field but the name is a volume source; the API server defaults none to emptyDir.
    const sources = Object.entries(volume).filter(([key, value]) => key !== "name" && typeof value === "object" && value !== null).map(([key]) => key);
    if (sources.length > 1) errors.push(forbiddenError(indexPath(path, index), `may not specify more than 1 volume type (found ${sources.join(", ")})`));
  });
  return errors;
}

export function validateTolerations(tolerations: readonly Toleration[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  tolerations.forEach((toleration, index) => {
    const tolerationPath = indexPath(path, index);
    const key = toleration.key ?? "";
    const operator = toleration.operator === undefined || toleration.operator === "" ? "Equal" : toleration.operator;
    if (key !== "") for (const reason of qualifiedNameErrors(key)) errors.push(invalidError(childPath(tolerationPath, "key"), key, reason));
    if (key === "" && operator !== "Exists") {
      errors.push(invalidError(childPath(tolerationPath, "operator"), operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""));
    }
    if (operator === "Exists" && toleration.value !== undefined && toleration.value !== "") {
      errors.push(invalidError(childPath(tolerationPath, "value"), toleration.value, "value must be empty when `operator` is 'Exists'"));
    }
    if (operator === "Equal" && toleration.value !== undefined && toleration.value !== "") {
      for (const reason of labelValueErrors(toleration.value)) errors.push(invalidError(childPath(tolerationPath, "value"), toleration.value, reason));
    }
    if (toleration.tolerationSeconds !== undefined && toleration.effect !== "NoExecute") {
      errors.push(invalidError(childPath(tolerationPath, "effect"), toleration.effect ?? "", "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
  });
  return errors;
}

export function validateNodeSelectorTerm(term: NodeSelectorTerm, path: string): FieldError[] {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  // An empty term matches no node; ANDed into a pod it would silently make the pod unschedulable.
  if (expressions.length === 0 && fields.length === 0) return [requiredError(path, "a node selector term needs at least one matchExpressions or matchFields requirement")];
  return [
    ...expressions.flatMap((requirement, index) => validateNodeSelectorRequirement(requirement, indexPath(childPath(path, "matchExpressions"), index))),
    ...fields.flatMap((requirement, index) => validateNodeSelectorRequirement(requirement, indexPath(childPath(path, "matchFields"), index))),
  ];
}

function validateNodeSelectorRequirement(requirement: NodeSelectorRequirement, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (requirement.key === "") errors.push(requiredError(childPath(path, "key")));
  const values = requirement.values ?? [];
  const valuesPath = childPath(path, "values");
  const setErrors = setOperatorValuesErrors(requirement.operator, values, valuesPath);
  if (setErrors !== undefined) errors.push(...setErrors);
  else if ((requirement.operator === "Gt" || requirement.operator === "Lt") && (values.length !== 1 || !/^-?\d+$/.test(values[0] ?? ""))) {
    errors.push(invalidError(valuesPath, values, "must be a single integer when `operator` is 'Gt' or 'Lt'"));
  }
  return errors;
}
