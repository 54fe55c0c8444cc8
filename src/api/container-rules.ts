// The rules of Kubernetes' container validation (pkg/apis/core/validation, 1.37:
// validateContainerCommon, validateInitContainers, validateContainers and what they call)
// that a container of a PodDecoration template can break on its own — beyond its name, image
// and the basics of env and mounts, which pod-validation.ts checks. Checked at admission with
// field paths, so that no pod rendered from the template is refused for them. What depends on
// the pod the template lands in (the volumes a mount names, host ports of other containers,
// the pod's grace period…) is checked when rendering (src/decoration/pod-consistency.ts).
import { childPath, duplicateError, type FieldError, forbiddenError, indexPath, invalidError, keyPath, notSupportedError, requiredError, tooLongError } from "./field-errors.ts";
import { asList, asRecord, asString, isInteger, isSet, type JsonRecord } from "./json-shape.ts";
import type { Container, EnvVar, VolumeMount } from "./kubernetes.ts";
import { configMapKeyErrors, dns1123LabelErrors, dns1123SubdomainErrors, envVarNameErrors, httpHeaderNameErrors, portNameErrors, qualifiedNameErrors } from "./names.ts";
import { compareQuantities, isNegative, isOverlongQuantity, isWholeNumber, parseQuantity, QUANTITY_MAX_LENGTH } from "./quantity.ts";

/** Regular init containers, native sidecars (init containers with restartPolicy Always) and regular containers differ in what they may set. */
export type ContainerRole = "init" | "container";

export function containerRules(container: Container, path: string, role: ContainerRole): FieldError[] {
  const raw = container as JsonRecord;
  const restartAlways = raw.restartPolicy === "Always";
  const errors = [
    ...envRules(container.env ?? [], childPath(path, "env")),
    ...envFromRules(asList(raw.envFrom), childPath(path, "envFrom")),
    ...mountRules(container.volumeMounts ?? [], childPath(path, "volumeMounts"), isPrivileged(raw)),
    ...deviceRules(asList(raw.volumeDevices), container.volumeMounts ?? [], childPath(path, "volumeDevices")),
    ...portRules(asList(raw.ports), childPath(path, "ports")),
    ...resourceRules(asRecord(raw.resources), childPath(path, "resources")),
    ...restartPolicyRules(raw, path),
    ...securityContextRules(asRecord(raw.securityContext), childPath(path, "securityContext")),
    ...resizePolicyRules(asList(raw.resizePolicy), childPath(path, "resizePolicy")),
  ];
  const terminationMessagePolicy = raw.terminationMessagePolicy;
  if (isSet(terminationMessagePolicy) && terminationMessagePolicy !== "File" && terminationMessagePolicy !== "FallbackToLogsOnError") {
    errors.push(notSupportedError(childPath(path, "terminationMessagePolicy"), terminationMessagePolicy, ["File", "FallbackToLogsOnError"]));
  }
  // Probes and lifecycle hooks belong to containers that keep running: not to a regular init container.
  const lifecycleAllowed = role === "container" || restartAlways;
  for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"] as const) {
    if (!isSet(raw[probe])) continue;
    if (!lifecycleAllowed) errors.push(forbiddenError(childPath(path, probe), "may not be set for init containers without restartPolicy=Always"));
    else errors.push(...probeRules(raw[probe], probe, childPath(path, probe)));
  }
  if (isSet(raw.lifecycle)) {
    if (!lifecycleAllowed) errors.push(forbiddenError(childPath(path, "lifecycle"), "may not be set for init containers without restartPolicy=Always"));
    else errors.push(...lifecycleRules(raw.lifecycle, childPath(path, "lifecycle")));
  }
  return errors;
}

/** The rules a primaryContainers entry's env and mounts must follow (the container they land in is checked when rendering). */
export function primaryPatchRules(env: readonly EnvVar[], mounts: readonly VolumeMount[], path: string): FieldError[] {
  return [...envRules(env, childPath(path, "env")), ...mountRules(mounts, childPath(path, "volumeMounts"), undefined)];
}

export function isPrivileged(container: JsonRecord): boolean {
  return asRecord(container.securityContext)?.privileged === true;
}

// --- env and envFrom ---------------------------------------------------------------------

const FIELD_PATHS = ["metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"];
const RESOURCE_FIELDS = ["limits.cpu", "limits.memory", "limits.ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage"];
const VALUE_SOURCES = ["fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef"] as const;

function envRules(env: readonly EnvVar[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  env.forEach((variable, index) => {
    const variablePath = indexPath(path, index);
    // An empty name is reported by pod-validation.ts.
    if (variable.name !== "") for (const reason of envVarNameErrors(variable.name)) errors.push(invalidError(childPath(variablePath, "name"), variable.name, reason));
    if (variable.valueFrom !== undefined) errors.push(...valueFromRules(variable, childPath(variablePath, "valueFrom")));
  });
  return errors;
}

function valueFromRules(variable: EnvVar, path: string): FieldError[] {
  const valueFrom = variable.valueFrom ?? {};
  const sources = VALUE_SOURCES.filter((source) => isSet(valueFrom[source]));
  // A value together with a source is reported by pod-validation.ts.
  if (variable.value !== undefined && variable.value !== "") return [];
  if (sources.length === 0) return [invalidError(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`")];
  if (sources.length > 1) return [invalidError(path, "", "may not have more than one field specified at a time")];
  const source = sources[0]!;
  const selector = asRecord(valueFrom[source]);
  const sourcePath = childPath(path, source);
  if (selector === undefined) return [invalidError(sourcePath, valueFrom[source], "must be an object")];
  switch (source) {
    case "fieldRef":
      return fieldRefRules(selector, sourcePath);
    case "resourceFieldRef":
      return resourceFieldRefRules(selector, sourcePath, false);
    case "configMapKeyRef":
    case "secretKeyRef":
      return keySelectorRules(selector, sourcePath);
    case "fileKeyRef":
      return fileKeyRefRules(selector, sourcePath);
  }
}

/** An ObjectFieldSelector, for env and downward API volumes. */
export function fieldRefRules(selector: JsonRecord, path: string): FieldError[] {
  // The API server defaults an unset apiVersion to v1, the only one it converts.
  const apiVersion = selector.apiVersion ?? "v1";
  if (apiVersion !== "v1") return [invalidError(childPath(path, "fieldPath"), selector.fieldPath, `error converting fieldPath: unsupported apiVersion ${JSON.stringify(apiVersion)}`)];
  const fieldPath = asString(selector.fieldPath) ?? "";
  if (fieldPath === "") return [requiredError(childPath(path, "fieldPath"))];
  const subscripted = /^(metadata\.labels|metadata\.annotations)\['(.*)'\]$/.exec(fieldPath);
  if (subscripted !== null) {
    const [, field, key = ""] = subscripted;
    return qualifiedNameErrors(field === "metadata.annotations" ? key.toLowerCase() : key).map((reason) => invalidError(path, key, reason));
  }
  if (fieldPath === "metadata.labels" || fieldPath === "metadata.annotations") return [];
  return FIELD_PATHS.includes(fieldPath) ? [] : [notSupportedError(childPath(path, "fieldPath"), fieldPath, FIELD_PATHS)];
}

/** A ResourceFieldSelector, for env (no container name) and downward API volumes (container name required). */
export function resourceFieldRefRules(selector: JsonRecord, path: string, inVolume: boolean): FieldError[] {
  const resource = asString(selector.resource) ?? "";
  if (inVolume && (asString(selector.containerName) ?? "") === "") return [requiredError(childPath(path, "containerName"))];
  if (resource === "") return [requiredError(childPath(path, "resource"))];
  const hugePages = /^(requests|limits)\.hugepages-/.test(resource);
  if (!RESOURCE_FIELDS.includes(resource) && !hugePages) return [notSupportedError(childPath(path, "resource"), resource, RESOURCE_FIELDS)];
  if (!isSet(selector.divisor)) return [];
  const divisor = String(selector.divisor);
  const divisors = resource.endsWith(".cpu") ? ["1m", "1"] : ["1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"];
  return divisors.includes(divisor) ? [] : [invalidError(childPath(path, "divisor"), resource, `only divisor's values ${divisors.join(", ")} are supported with this resource`)];
}

function keySelectorRules(selector: JsonRecord, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const name = asString(selector.name) ?? "";
  for (const reason of dns1123SubdomainErrors(name)) errors.push(invalidError(childPath(path, "name"), name, reason));
  const key = asString(selector.key) ?? "";
  if (key === "") errors.push(requiredError(childPath(path, "key")));
  else for (const reason of configMapKeyErrors(key)) errors.push(invalidError(childPath(path, "key"), key, reason));
  return errors;
}

function fileKeyRefRules(selector: JsonRecord, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const key = asString(selector.key) ?? "";
  if (key === "") errors.push(requiredError(childPath(path, "key")));
  else for (const reason of envVarNameErrors(key)) errors.push(invalidError(childPath(path, "key"), key, reason));
  const volumeName = asString(selector.volumeName) ?? "";
  if (volumeName === "") errors.push(requiredError(childPath(path, "volumeName")));
  else for (const reason of dns1123LabelErrors(volumeName)) errors.push(invalidError(childPath(path, "volumeName"), volumeName, reason));
  const filePath = asString(selector.path) ?? "";
  if (filePath === "") errors.push(requiredError(childPath(path, "path")));
  else errors.push(...noBackstepErrors(filePath, childPath(path, "path")));
  return errors;
}

function envFromRules(sources: readonly unknown[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  sources.forEach((value, index) => {
    const sourcePath = indexPath(path, index);
    const source = asRecord(value) ?? {};
    const prefix = asString(source.prefix) ?? "";
    if (prefix !== "") for (const reason of envVarNameErrors(prefix)) errors.push(invalidError(childPath(sourcePath, "prefix"), prefix, reason));
    const references = (["configMapRef", "secretRef"] as const).filter((reference) => isSet(source[reference]));
    if (references.length !== 1) {
      errors.push(invalidError(path, "", references.length === 0 ? "must specify one of: `configMapRef` or `secretRef`" : "may not have more than one field specified at a time"));
      return;
    }
    const reference = references[0]!;
    const name = asString(asRecord(source[reference])?.name) ?? "";
    const namePath = childPath(childPath(sourcePath, reference), "name");
    if (name === "") errors.push(requiredError(namePath));
    else for (const reason of dns1123SubdomainErrors(name)) errors.push(invalidError(namePath, name, reason));
  });
  return errors;
}

// --- volume mounts and devices -----------------------------------------------------------

const MOUNT_PROPAGATIONS = ["Bidirectional", "HostToContainer", "None"];
const RECURSIVE_READ_ONLY = ["Disabled", "IfPossible", "Enabled"];

/**
 * subPath and subPathExpr relative without `..`, propagation and recursiveReadOnly. `privileged`
 * is the container's, or undefined when the container is only known when rendering.
 */
function mountRules(mounts: readonly VolumeMount[], path: string, privileged: boolean | undefined): FieldError[] {
  const errors: FieldError[] = [];
  mounts.forEach((mount, index) => {
    const mountPath = indexPath(path, index);
    for (const field of ["subPath", "subPathExpr"] as const) {
      const value = mount[field];
      if (value !== undefined && value !== "") errors.push(...localDescendingPathErrors(value, childPath(mountPath, field)));
    }
    const propagation = mount.mountPropagation;
    if (propagation !== undefined) {
      if (!MOUNT_PROPAGATIONS.includes(propagation)) errors.push(notSupportedError(childPath(mountPath, "mountPropagation"), propagation, MOUNT_PROPAGATIONS));
      else if (propagation === "Bidirectional" && privileged === false) errors.push(forbiddenError(childPath(mountPath, "mountPropagation"), "Bidirectional mount propagation is available only to privileged containers"));
    }
    const recursiveReadOnly = (mount as JsonRecord).recursiveReadOnly;
    if (isSet(recursiveReadOnly)) {
      const rroPath = childPath(mountPath, "recursiveReadOnly");
      if (typeof recursiveReadOnly !== "string" || !RECURSIVE_READ_ONLY.includes(recursiveReadOnly)) errors.push(notSupportedError(rroPath, recursiveReadOnly, RECURSIVE_READ_ONLY));
      else if (recursiveReadOnly !== "Disabled") {
        if (mount.readOnly !== true) errors.push(forbiddenError(rroPath, "may only be specified when readOnly is true"));
        if (propagation !== undefined && propagation !== "None") errors.push(forbiddenError(rroPath, "may only be specified when mountPropagation is None or not specified"));
      }
    }
  });
  return errors;
}

function deviceRules(devices: readonly unknown[], mounts: readonly VolumeMount[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  const paths = new Set<string>();
  const mountNames = new Set(mounts.map((mount) => mount.name));
  const mountPaths = new Set(mounts.map((mount) => mount.mountPath));
  devices.forEach((value, index) => {
    const devicePath = indexPath(path, index);
    const device = asRecord(value) ?? {};
    const name = asString(device.name) ?? "";
    const target = asString(device.devicePath) ?? "";
    if (name === "") errors.push(requiredError(childPath(devicePath, "name")));
    else if (names.has(name)) errors.push(invalidError(childPath(devicePath, "name"), name, "must be unique"));
    if (mountNames.has(name)) errors.push(invalidError(childPath(devicePath, "name"), name, "must not already exist in volumeMounts"));
    if (target === "") errors.push(requiredError(childPath(devicePath, "devicePath")));
    else if (paths.has(target)) errors.push(invalidError(childPath(devicePath, "devicePath"), target, "must be unique"));
    else if (target.split("/").includes("..")) errors.push(invalidError(childPath(devicePath, "devicePath"), target, "can not contain backsteps ('..')"));
    if (mountPaths.has(target)) errors.push(invalidError(childPath(devicePath, "devicePath"), target, "must not already exist as a path in volumeMounts"));
    names.add(name);
    paths.add(target);
  });
  return errors;
}

/** A relative path without `..` elements (subPath, items' paths). */
export function localDescendingPathErrors(value: string, path: string): FieldError[] {
  return [...(value.startsWith("/") ? [invalidError(path, value, "must be a relative path")] : []), ...noBackstepErrors(value, path)];
}

export function noBackstepErrors(value: string, path: string): FieldError[] {
  return value.split("/").includes("..") ? [invalidError(path, value, "must not contain '..'")] : [];
}

// --- ports ---------------------------------------------------------------------------------

const PROTOCOLS = ["TCP", "UDP", "SCTP"];

function portRules(ports: readonly unknown[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  const hostPorts = new Set<string>();
  ports.forEach((value, index) => {
    const portPath = indexPath(path, index);
    const port = asRecord(value) ?? {};
    const name = port.name;
    if (isSet(name) && name !== "") {
      const reasons = typeof name === "string" ? portNameErrors(name) : ["must be a string"];
      for (const reason of reasons) errors.push(invalidError(childPath(portPath, "name"), name, reason));
      if (reasons.length === 0 && names.has(name as string)) errors.push(duplicateError(childPath(portPath, "name"), name));
      names.add(name as string);
    }
    if (!isSet(port.containerPort) || port.containerPort === 0) errors.push(requiredError(childPath(portPath, "containerPort")));
    else errors.push(...portNumberErrors(port.containerPort, childPath(portPath, "containerPort")));
    if (isSet(port.hostPort) && port.hostPort !== 0) errors.push(...portNumberErrors(port.hostPort, childPath(portPath, "hostPort")));
    // The API server defaults an unset protocol to TCP.
    const protocol = port.protocol ?? "TCP";
    if (typeof protocol !== "string" || !PROTOCOLS.includes(protocol)) errors.push(notSupportedError(childPath(portPath, "protocol"), protocol, PROTOCOLS));
    // Host ports of one container must not collide either (across containers: checked when rendering).
    if (isInteger(port.hostPort) && port.hostPort !== 0) {
      const id = hostPortId(port);
      if (hostPorts.has(id)) errors.push(duplicateError(childPath(portPath, "hostPort"), id));
      hostPorts.add(id);
    }
  });
  return errors;
}

/** What Kubernetes compares host ports by: protocol, host IP and port. */
export function hostPortId(port: JsonRecord): string {
  return `${asString(port.protocol) ?? "TCP"}/${asString(port.hostIP) ?? ""}/${String(port.hostPort)}`;
}

function portNumberErrors(value: unknown, path: string): FieldError[] {
  return isInteger(value) && value >= 1 && value <= 65535 ? [] : [invalidError(path, value, "must be between 1 and 65535, inclusive")];
}

/** A port given as a number (1–65535) or a name (IANA_SVC_NAME), as probes and hooks take it. */
function portNumberOrNameErrors(value: unknown, path: string): FieldError[] {
  if (typeof value === "string") return portNameErrors(value).map((reason) => invalidError(path, value, reason));
  return portNumberErrors(value, path);
}

// --- resources ---------------------------------------------------------------------------------

const STANDARD_CONTAINER_RESOURCES = ["cpu", "memory", "ephemeral-storage"];

function resourceRules(resources: JsonRecord | undefined, path: string): FieldError[] {
  if (resources === undefined) return [];
  const errors: FieldError[] = [];
  const limits = asRecord(resources.limits) ?? {};
  const requests = asRecord(resources.requests) ?? {};
  const parsedLimits = new Map<string, ReturnType<typeof parseQuantity>>();
  for (const [list, entries] of [["limits", limits], ["requests", requests]] as const) {
    for (const [name, value] of Object.entries(entries)) {
      const entryPath = keyPath(childPath(path, list), name);
      errors.push(...resourceNameErrors(name, entryPath));
      const quantity = parseQuantity(value);
      if (quantity === undefined) {
        errors.push(isOverlongQuantity(value) ? tooLongError(entryPath, QUANTITY_MAX_LENGTH) : invalidError(entryPath, value, "must be a quantity, like 100m, 0.5 or 64Mi"));
        continue;
      }
      if (isNegative(quantity)) errors.push(invalidError(entryPath, value, "must be greater than or equal to 0"));
      if (isExtendedResource(name) && !isWholeNumber(quantity)) errors.push(invalidError(entryPath, value, "must be an integer"));
      if (list === "limits") parsedLimits.set(name, quantity);
    }
  }
  for (const [name, value] of Object.entries(requests)) {
    const request = parseQuantity(value);
    if (request === undefined) continue;
    const limit = parsedLimits.get(name);
    if (limit === undefined) {
      if (!Object.hasOwn(limits, name) && isExtendedResource(name)) errors.push(requiredError(childPath(path, "limits"), "Limit must be set for non overcommitable resources"));
      continue;
    }
    // Extended resources cannot be overcommitted: the request must be the limit.
    if (isExtendedResource(name) && compareQuantities(request, limit) !== 0) errors.push(invalidError(childPath(path, "requests"), value, `must be equal to ${name} limit of ${String(limits[name])}`));
    else if (compareQuantities(request, limit) > 0) errors.push(invalidError(childPath(path, "requests"), value, `must be less than or equal to ${name} limit of ${String(limits[name])}`));
  }
  const names = [...Object.keys(limits), ...Object.keys(requests)];
  if (names.some((name) => name.startsWith("hugepages-")) && !names.some((name) => name === "cpu" || name === "memory")) {
    errors.push(forbiddenError(path, "HugePages require cpu or memory"));
  }
  return errors;
}

function resourceNameErrors(name: string, path: string): FieldError[] {
  const reasons = qualifiedNameErrors(name);
  if (reasons.length > 0) return reasons.map((reason) => invalidError(path, name, reason));
  if (!name.includes("/")) {
    return STANDARD_CONTAINER_RESOURCES.includes(name) || name.startsWith("hugepages-") ? [] : [invalidError(path, name, "must be a standard resource for containers")];
  }
  return isExtendedResource(name) && qualifiedNameErrors(`requests.${name}`).length > 0 ? [invalidError(path, name, "doesn't follow extended resource name standard")] : [];
}

/** A resource with a domain other than kubernetes.io's: whole units, never overcommitted. */
function isExtendedResource(name: string): boolean {
  if (!name.includes("/")) return false;
  const domain = name.slice(0, name.indexOf("/"));
  return domain !== "kubernetes.io" && !domain.endsWith(".kubernetes.io") && !name.startsWith("requests.");
}

// --- probes and lifecycle hooks --------------------------------------------------------------

function probeRules(value: unknown, kind: "livenessProbe" | "readinessProbe" | "startupProbe", path: string): FieldError[] {
  const probe = asRecord(value);
  if (probe === undefined) return [invalidError(path, value, "must be an object")];
  const errors = handlerRules(probe, ["exec", "httpGet", "tcpSocket", "grpc"], path);
  for (const field of ["initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"]) {
    const number = probe[field];
    if (!isSet(number)) continue;
    if (!isInteger(number) || number < 0) errors.push(invalidError(childPath(path, field), number, "must be greater than or equal to 0"));
  }
  // 0 and unset are defaulted to 1.
  const success = probe.successThreshold;
  if (kind !== "readinessProbe" && isInteger(success) && success > 1) errors.push(invalidError(childPath(path, "successThreshold"), success, "must be 1"));
  const grace = probe.terminationGracePeriodSeconds;
  if (isSet(grace)) {
    if (kind === "readinessProbe") errors.push(invalidError(childPath(path, "terminationGracePeriodSeconds"), grace, "must not be set for readinessProbes"));
    else if (!isInteger(grace) || grace <= 0) errors.push(invalidError(childPath(path, "terminationGracePeriodSeconds"), grace, "must be greater than 0"));
  }
  return errors;
}

function lifecycleRules(value: unknown, path: string): FieldError[] {
  const lifecycle = asRecord(value);
  if (lifecycle === undefined) return [invalidError(path, value, "must be an object")];
  const errors: FieldError[] = [];
  for (const hook of ["postStart", "preStop"]) {
    if (!isSet(lifecycle[hook])) continue;
    const handler = asRecord(lifecycle[hook]);
    if (handler === undefined) errors.push(invalidError(childPath(path, hook), lifecycle[hook], "must be an object"));
    else errors.push(...handlerRules(handler, ["exec", "httpGet", "tcpSocket", "sleep"], childPath(path, hook)));
  }
  return errors;
}

function handlerRules(handler: JsonRecord, kinds: readonly string[], path: string): FieldError[] {
  const present = kinds.filter((kind) => isSet(handler[kind]));
  if (present.length === 0) return [requiredError(path, "must specify a handler type")];
  const errors = present.slice(1).map((kind) => forbiddenError(childPath(path, kind), "may not specify more than 1 handler type"));
  const kind = present[0]!;
  const action = asRecord(handler[kind]);
  const actionPath = childPath(path, kind);
  if (action === undefined) return [...errors, invalidError(actionPath, handler[kind], "must be an object")];
  switch (kind) {
    case "exec":
      if (asList(action.command).length === 0) errors.push(requiredError(childPath(actionPath, "command")));
      break;
    case "httpGet": {
      errors.push(...portNumberOrNameErrors(action.port, childPath(actionPath, "port")));
      // An unset scheme is defaulted to HTTP, an unset path to "/".
      const scheme = action.scheme ?? "HTTP";
      if (scheme !== "HTTP" && scheme !== "HTTPS") errors.push(notSupportedError(childPath(actionPath, "scheme"), scheme, ["HTTP", "HTTPS"]));
      for (const header of asList(action.httpHeaders)) {
        const name = asString(asRecord(header)?.name) ?? "";
        for (const reason of httpHeaderNameErrors(name)) errors.push(invalidError(childPath(actionPath, "httpHeaders"), name, reason));
      }
      break;
    }
    case "tcpSocket":
      errors.push(...portNumberOrNameErrors(action.port, childPath(actionPath, "port")));
      break;
    case "grpc":
      errors.push(...portNumberErrors(action.port, childPath(actionPath, "port")));
      break;
    case "sleep":
      // Its upper bound is the pod's terminationGracePeriodSeconds, checked when rendering.
      if (!isInteger(action.seconds) || action.seconds < 0) errors.push(invalidError(childPath(actionPath, "seconds"), action.seconds, "must be non-negative"));
      break;
  }
  return errors;
}

// --- restart policy, security context, resize policy -------------------------------------------

const CONTAINER_RESTART_POLICIES = ["Always", "Never", "OnFailure"];

/** Container restart policies and rules (ContainerRestartRules, beta and on in Kubernetes 1.35+). */
function restartPolicyRules(container: JsonRecord, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const policy = container.restartPolicy;
  const rules = asList(container.restartPolicyRules);
  if (!isSet(policy)) {
    if (rules.length > 0) errors.push(requiredError(childPath(path, "restartPolicy"), "must specify restartPolicy when restart rules are used"));
    return errors;
  }
  if (typeof policy !== "string" || !CONTAINER_RESTART_POLICIES.includes(policy)) errors.push(notSupportedError(childPath(path, "restartPolicy"), policy, CONTAINER_RESTART_POLICIES));
  if (rules.length > 20) errors.push(invalidError(childPath(path, "restartPolicyRules"), rules.length, "must have at most 20 items"));
  rules.forEach((value, index) => {
    const rulePath = indexPath(childPath(path, "restartPolicyRules"), index);
    const rule = asRecord(value) ?? {};
    if (rule.action !== "Restart" && rule.action !== "RestartAllContainers") errors.push(notSupportedError(childPath(rulePath, "action"), rule.action, ["Restart", "RestartAllContainers"]));
    const exitCodes = asRecord(rule.exitCodes);
    if (exitCodes === undefined) {
      errors.push(requiredError(childPath(rulePath, "exitCodes"), "must be specified"));
      return;
    }
    if (exitCodes.operator !== "In" && exitCodes.operator !== "NotIn") errors.push(notSupportedError(childPath(childPath(rulePath, "exitCodes"), "operator"), exitCodes.operator, ["In", "NotIn"]));
    if (asList(exitCodes.values).length > 255) errors.push(invalidError(childPath(childPath(rulePath, "exitCodes"), "values"), asList(exitCodes.values).length, "must have at most 255 items"));
  });
  return errors;
}

const MAX_ID = 2147483647;

function securityContextRules(context: JsonRecord | undefined, path: string): FieldError[] {
  if (context === undefined) return [];
  const errors: FieldError[] = [];
  for (const field of ["runAsUser", "runAsGroup"]) {
    const id = context[field];
    if (isSet(id) && (!isInteger(id) || id < 0 || id > MAX_ID)) errors.push(invalidError(childPath(path, field), id, `must be between 0 and ${MAX_ID}, inclusive`));
  }
  const procMount = context.procMount;
  if (isSet(procMount) && procMount !== "Default" && procMount !== "Unmasked") errors.push(notSupportedError(childPath(path, "procMount"), procMount, ["Default", "Unmasked"]));
  if (context.allowPrivilegeEscalation === false) {
    if (context.privileged === true) errors.push(invalidError(path, "", "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"));
    if (asList(asRecord(context.capabilities)?.add).includes("CAP_SYS_ADMIN")) errors.push(invalidError(path, "", "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"));
  }
  errors.push(...profileRules(context.seccompProfile, childPath(path, "seccompProfile"), "seccomp"));
  errors.push(...profileRules(context.appArmorProfile, childPath(path, "appArmorProfile"), "AppArmor"));
  return errors;
}

const PROFILE_TYPES = ["Localhost", "RuntimeDefault", "Unconfined"];

function profileRules(value: unknown, path: string, what: string): FieldError[] {
  if (!isSet(value)) return [];
  const profile = asRecord(value) ?? {};
  const type = profile.type;
  if (!isSet(type) || type === "") return [requiredError(childPath(path, "type"), `type is required when ${what} profile is set`)];
  if (typeof type !== "string" || !PROFILE_TYPES.includes(type)) return [notSupportedError(childPath(path, "type"), type, PROFILE_TYPES)];
  const localhostProfile = profile.localhostProfile;
  if (type !== "Localhost") return isSet(localhostProfile) ? [invalidError(childPath(path, "localhostProfile"), localhostProfile, `can only be set when ${what} type is Localhost`)] : [];
  if (typeof localhostProfile !== "string" || localhostProfile.trim() === "") return [requiredError(childPath(path, "localhostProfile"), `must be set when ${what} type is Localhost`)];
  return what === "seccomp" ? localDescendingPathErrors(localhostProfile, childPath(path, "localhostProfile")) : [];
}

function resizePolicyRules(policies: readonly unknown[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<unknown>();
  policies.forEach((value, index) => {
    const policy = asRecord(value) ?? {};
    if (seen.has(policy.resourceName)) errors.push(duplicateError(indexPath(path, index), policy.resourceName));
    seen.add(policy.resourceName);
    if (policy.resourceName !== "cpu" && policy.resourceName !== "memory") errors.push(notSupportedError(path, policy.resourceName, ["cpu", "memory"]));
    if (policy.restartPolicy !== "NotRequired" && policy.restartPolicy !== "RestartContainer") errors.push(notSupportedError(path, policy.restartPolicy, ["NotRequired", "RestartContainer"]));
  });
  return errors;
}
