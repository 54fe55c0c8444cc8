// The rules of Kubernetes' volume source validation (pkg/apis/core/validation, 1.37:
// validateVolumeSource and the per-source functions) for the sources a decoration's volumes
// most often use (CHECKED_VOLUME_SOURCES). The name and the
// one-source rule are pod-validation.ts's; other sources pass through to the API server,
// which judges them in the controller's server-side dry run (TemplateValid).
import { childPath, type FieldError, indexPath, invalidError, notSupportedError, requiredError, tooLongError } from "./field-errors.ts";
import { fieldRefRules, localDescendingPathErrors, noBackstepErrors, resourceFieldRefRules } from "./container-rules.ts";
import { asList, asRecord, asString, isInteger, isSet, type JsonRecord } from "./json-shape.ts";
import type { Volume } from "./kubernetes.ts";
import { dns1123SubdomainErrors } from "./names.ts";
import { isNegative, isOverlongQuantity, parseQuantity, QUANTITY_MAX_LENGTH } from "./quantity.ts";

/** The volume sources whose rules admission checks; the others get a warning saying they are not. */
export const CHECKED_VOLUME_SOURCES = ["emptyDir", "hostPath", "configMap", "secret", "persistentVolumeClaim", "downwardAPI", "projected", "csi", "nfs"] as const;

const HOST_PATH_TYPES = ["", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"];
// The fields a downward API volume file may name (env has its own list).
const VOLUME_FIELD_PATHS = ["metadata.name", "metadata.namespace", "metadata.uid"];

export function volumeSourceRules(volume: Volume, path: string): FieldError[] {
  const raw = volume as JsonRecord;
  const errors: FieldError[] = [];
  const source = (name: string): JsonRecord | undefined => asRecord(raw[name]);

  const emptyDir = source("emptyDir");
  if (emptyDir !== undefined && isSet(emptyDir.sizeLimit)) {
    const limit = parseQuantity(emptyDir.sizeLimit);
    const sizeLimitPath = childPath(childPath(path, "emptyDir"), "sizeLimit");
    if (isOverlongQuantity(emptyDir.sizeLimit)) errors.push(tooLongError(sizeLimitPath, QUANTITY_MAX_LENGTH));
    else if (limit === undefined || isNegative(limit)) errors.push(invalidError(sizeLimitPath, emptyDir.sizeLimit, "must be a non-negative quantity"));
  }
  const hostPath = source("hostPath");
  if (hostPath !== undefined) {
    const hostPathPath = childPath(path, "hostPath");
    const target = asString(hostPath.path) ?? "";
    if (target === "") errors.push(requiredError(childPath(hostPathPath, "path")));
    else errors.push(...noBackstepErrors(target, childPath(hostPathPath, "path")));
    if (isSet(hostPath.type) && !HOST_PATH_TYPES.includes(hostPath.type as string)) errors.push(notSupportedError(childPath(hostPathPath, "type"), hostPath.type, HOST_PATH_TYPES));
  }
  const configMap = source("configMap");
  if (configMap !== undefined) errors.push(...projectionRules(configMap, childPath(path, "configMap"), "name", true));
  const secret = source("secret");
  if (secret !== undefined) errors.push(...projectionRules(secret, childPath(path, "secret"), "secretName", true));
  const claim = source("persistentVolumeClaim");
  if (claim !== undefined && (asString(claim.claimName) ?? "") === "") errors.push(requiredError(childPath(childPath(path, "persistentVolumeClaim"), "claimName")));
  const downwardAPI = source("downwardAPI");
  if (downwardAPI !== undefined) {
    errors.push(...modeErrors(downwardAPI.defaultMode, childPath(childPath(path, "downwardAPI"), "defaultMode")));
    errors.push(...downwardApiItemRules(asList(downwardAPI.items), childPath(path, "downwardAPI")));
  }
  const projected = source("projected");
  if (projected !== undefined) errors.push(...projectedRules(projected, childPath(path, "projected")));
  const nfs = source("nfs");
  if (nfs !== undefined) {
    const nfsPath = childPath(path, "nfs");
    if ((asString(nfs.server) ?? "") === "") errors.push(requiredError(childPath(nfsPath, "server")));
    const target = asString(nfs.path) ?? "";
    if (target === "") errors.push(requiredError(childPath(nfsPath, "path")));
    if (!target.startsWith("/")) errors.push(invalidError(childPath(nfsPath, "path"), target, "must be an absolute path"));
  }
  const csi = source("csi");
  if (csi !== undefined) {
    const driver = asString(csi.driver) ?? "";
    if (driver === "") errors.push(requiredError(childPath(childPath(path, "csi"), "driver")));
    else for (const reason of dns1123SubdomainErrors(driver.toLowerCase())) errors.push(invalidError(childPath(childPath(path, "csi"), "driver"), driver, reason));
  }
  return errors;
}

/** configMap and secret sources: the name, the default mode and the items. */
function projectionRules(source: JsonRecord, path: string, nameField: string, required: boolean): FieldError[] {
  const errors: FieldError[] = [];
  if (required && (asString(source[nameField]) ?? "") === "") errors.push(requiredError(childPath(path, nameField)));
  errors.push(...modeErrors(source.defaultMode, childPath(path, "defaultMode")));
  asList(source.items).forEach((value, index) => errors.push(...keyToPathRules(asRecord(value) ?? {}, indexPath(childPath(path, "items"), index))));
  return errors;
}

function keyToPathRules(item: JsonRecord, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if ((asString(item.key) ?? "") === "") errors.push(requiredError(childPath(path, "key")));
  errors.push(...itemPathRules(item.path, childPath(path, "path")));
  errors.push(...modeErrors(item.mode, childPath(path, "mode")));
  return errors;
}

/** A file path inside a volume: required, relative, no `..` elements and not starting with `..`. */
function itemPathRules(value: unknown, path: string): FieldError[] {
  const target = asString(value) ?? "";
  if (target === "") return [requiredError(path)];
  const errors = localDescendingPathErrors(target, path);
  if (target.startsWith("..") && !target.startsWith("../")) errors.push(invalidError(path, target, "must not start with '..'"));
  return errors;
}

function downwardApiItemRules(items: readonly unknown[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const value of items) {
    const item = asRecord(value) ?? {};
    errors.push(...itemPathRules(item.path, childPath(path, "path")));
    const fieldRef = asRecord(item.fieldRef);
    const resourceFieldRef = asRecord(item.resourceFieldRef);
    if (fieldRef !== undefined) {
      if (resourceFieldRef !== undefined) errors.push(invalidError(path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"));
      errors.push(...volumeFieldRefRules(fieldRef, childPath(path, "fieldRef")));
    } else if (resourceFieldRef !== undefined) {
      errors.push(...resourceFieldRefRules(resourceFieldRef, childPath(path, "resourceFieldRef"), true));
    } else {
      errors.push(requiredError(path, "one of fieldRef and resourceFieldRef is required"));
    }
    errors.push(...modeErrors(item.mode, childPath(path, "mode")));
  }
  return errors;
}

function volumeFieldRefRules(selector: JsonRecord, path: string): FieldError[] {
  const fieldPath = asString(selector.fieldPath) ?? "";
  // Labels and annotations, whole or by key, are allowed in volumes as in env.
  if (VOLUME_FIELD_PATHS.includes(fieldPath) || fieldPath.startsWith("metadata.labels") || fieldPath.startsWith("metadata.annotations")) return fieldRefRules(selector, path);
  if (fieldPath === "") return [requiredError(childPath(path, "fieldPath"))];
  return [notSupportedError(childPath(path, "fieldPath"), fieldPath, [...VOLUME_FIELD_PATHS, "metadata.labels", "metadata.annotations"])];
}

function projectedRules(projected: JsonRecord, path: string): FieldError[] {
  const errors = modeErrors(projected.defaultMode, childPath(path, "defaultMode"));
  const paths = new Set<string>();
  asList(projected.sources).forEach((value, index) => {
    const sourcePath = indexPath(childPath(path, "sources"), index);
    const source = asRecord(value) ?? {};
    const kinds = ["secret", "configMap", "downwardAPI", "serviceAccountToken", "clusterTrustBundle", "podCertificate"].filter((kind) => isSet(source[kind]));
    if (kinds.length !== 1) {
      errors.push(invalidError(sourcePath, "", kinds.length === 0 ? "must specify exactly 1 source type" : "may not specify more than 1 source type"));
      return;
    }
    const kind = kinds[0]!;
    const detail = asRecord(source[kind]) ?? {};
    if (kind === "secret" || kind === "configMap") {
      errors.push(...projectionRules(detail, childPath(sourcePath, kind), "name", true));
      for (const item of asList(detail.items)) {
        const itemPath = asString(asRecord(item)?.path);
        if (itemPath === undefined || itemPath === "") continue;
        if (paths.has(itemPath)) errors.push(invalidError(path, detail.name, "conflicting duplicate paths"));
        paths.add(itemPath);
      }
    } else if (kind === "downwardAPI") {
      errors.push(...downwardApiItemRules(asList(detail.items), childPath(sourcePath, kind)));
    }
  });
  return errors;
}

function modeErrors(value: unknown, path: string): FieldError[] {
  if (!isSet(value)) return [];
  return isInteger(value) && value >= 0 && value <= 0o777 ? [] : [invalidError(path, value, "must be a number between 0 and 0777 (octal), both inclusive")];
}
