// The rules of Kubernetes' pod validation (pkg/apis/core/validation, 1.37) that tie one part
// of a pod to another, and so can be broken by putting a valid template into a valid pod: a
// mount needs the volume it names, host ports may not collide, a sleep hook must end within
// the pod's grace period, annotations must fit… The template alone was checked at
// admission; these are checked on the rendered pod, so that no decoration ever renders a pod
// the API server refuses (DESIGN §10). Pure; messages name containers and volumes, not list
// positions, so that a problem the pod had before rendering is recognised after it.
import { ANNOTATIONS_SIZE_LIMIT, annotationsTooLong } from "../api/annotations.ts";
import { hostPortId, isPrivileged } from "../api/container-rules.ts";
import { asList, asRecord, asString, isInteger, type JsonRecord } from "../api/json-shape.ts";
import type { Pod } from "../api/pod.ts";
import { addQuantities, compareQuantities, parseQuantity, type Quantity } from "../api/quantity.ts";

const DEFAULT_GRACE_PERIOD_SECONDS = 30;

/** What the API server would refuse in this pod for how its parts fit together; empty when nothing. */
export function podConsistencyProblems(pod: Pod): string[] {
  // Run on every pod the webhook renders: the walk writes a container's path only into a
  // problem found, and builds no intermediate lists.
  const problems: string[] = [];
  const spec = (pod.spec ?? {}) as JsonRecord;
  const volumes = new Map<string, JsonRecord>();
  for (const volume of asList(spec.volumes)) {
    const record = asRecord(volume);
    const name = asString(record?.name);
    if (record !== undefined && name !== undefined) volumes.set(name, record);
  }
  const initContainers = records(spec.initContainers);
  const containers = records(spec.containers);
  const grace = isInteger(spec.terminationGracePeriodSeconds) ? spec.terminationGracePeriodSeconds : DEFAULT_GRACE_PERIOD_SECONDS;
  const hostUsers = asRecord(spec.securityContext)?.hostUsers;
  let claims: Set<string | undefined> | undefined;

  const names = new Set<string>();
  for (const [list, members] of [["initContainers", initContainers], ["containers", containers]] as const) {
    for (const container of members) {
      const name = asString(container.name) ?? "";
      if (names.has(name)) problems.push(`${containerPath(list, name)}: Duplicate value: container name ${JSON.stringify(name)}`);
      names.add(name);
      volumeReferenceProblems(container, volumes, list, name, problems);
      for (const claim of asList(asRecord(container.resources)?.claims)) {
        const claimName = asString(asRecord(claim)?.name);
        if (claimName === undefined || claimName === "") continue;
        claims ??= new Set(asList(spec.resourceClaims).map((podClaim) => asString(asRecord(podClaim)?.name)));
        if (!claims.has(claimName)) problems.push(`${containerPath(list, name)}.resources.claims: Not found: ${JSON.stringify(claimName)} is not one of the pod's resourceClaims`);
      }
      const lifecycle = asRecord(container.lifecycle);
      if (lifecycle !== undefined) {
        for (const hook of LIFECYCLE_HOOKS) {
          const seconds = asRecord(asRecord(lifecycle[hook])?.sleep)?.seconds;
          if (isInteger(seconds) && seconds > grace) problems.push(`${containerPath(list, name)}.lifecycle.${hook}.sleep: Invalid value: ${seconds}: must be less than terminationGracePeriodSeconds (${grace})`);
        }
      }
      if (asRecord(container.securityContext)?.procMount === "Unmasked" && hostUsers !== false) {
        problems.push(`${containerPath(list, name)}.securityContext.procMount: Invalid value: "Unmasked": \`hostUsers\` must be false to use \`Unmasked\``);
      }
      if (spec.restartPolicy === "Never") {
        for (const policy of asList(container.resizePolicy)) {
          const restart = asRecord(policy)?.restartPolicy;
          if (restart !== undefined && restart !== "NotRequired") problems.push(`${containerPath(list, name)}.resizePolicy: Invalid value: ${JSON.stringify(restart)}: must be 'NotRequired' when pod \`restartPolicy\` is 'Never'`);
        }
      }
    }
  }

  // Host ports: regular containers share them; init containers run one at a time, so each is
  // alone. On the host network every container port is a host port (the API server defaults it).
  const hostNetwork = spec.hostNetwork === true;
  const hostPorts = new Set<string>();
  for (const container of containers) hostPortProblems(container, hostPorts, "containers", hostNetwork, problems);
  for (const container of initContainers) hostPortProblems(container, new Set(), "initContainers", hostNetwork, problems);
  if (hostNetwork) {
    for (const container of containers) {
      for (const port of asList(container.ports).map(asRecord)) {
        if (port === undefined) continue;
        if (isInteger(port.hostPort) && port.hostPort !== 0 && port.hostPort !== port.containerPort) {
          problems.push(`spec.containers[${asString(container.name) ?? ""}].ports: Invalid value: ${port.hostPort}: hostPort must match \`containerPort\` when \`hostNetwork\` is true`);
        }
      }
    }
  }

  problems.push(...podLevelRequestProblems(spec, initContainers, containers));

  const annotations = asRecord(pod.metadata?.annotations);
  if (annotations !== undefined && annotationsTooLong(annotations)) problems.push(`metadata.annotations: Too long: may not be more than ${ANNOTATIONS_SIZE_LIMIT} bytes`);
  return problems;
}

type ContainerList = "initContainers" | "containers";
const LIFECYCLE_HOOKS = ["postStart", "preStop"] as const;

/** How a problem names a container: by name, so that it is recognised in the pod before and after rendering. */
function containerPath(list: ContainerList, name: string): string {
  return `spec.${list}[${name}]`;
}

function mountAt(list: ContainerList, containerName: string, mountPath: string): string {
  return `${containerPath(list, containerName)}.volumeMounts[${mountPath}]`;
}

/** The items of a list that are objects (anything else is the API server's to refuse). */
function records(value: unknown): JsonRecord[] {
  const result: JsonRecord[] = [];
  for (const item of asList(value)) {
    const record = asRecord(item);
    if (record !== undefined) result.push(record);
  }
  return result;
}

const NO_NAMES: ReadonlySet<string | undefined> = new Set();

/** Mounts and devices name a volume of the pod (devices a claim), and do not overlap; env files come from an emptyDir. */
function volumeReferenceProblems(container: JsonRecord, volumes: ReadonlyMap<string, JsonRecord>, list: ContainerList, containerName: string, problems: string[]): void {
  const mounts = asList(container.volumeMounts);
  const devices = records(container.volumeDevices);
  const deviceNames = devices.length === 0 ? NO_NAMES : new Set(devices.map((device) => asString(device.name)));
  const devicePaths = devices.length === 0 ? NO_NAMES : new Set(devices.map((device) => asString(device.devicePath)));
  const mountPaths = mounts.length < 2 ? undefined : new Set<string>();
  for (const item of mounts) {
    const mount = asRecord(item);
    if (mount === undefined) continue;
    const name = asString(mount.name) ?? "";
    const mountPath = asString(mount.mountPath) ?? "";
    if (!volumes.has(name)) problems.push(`${mountAt(list, containerName, mountPath)}.name: Not found: volume ${JSON.stringify(name)}`);
    if (mountPaths?.has(mountPath) === true) problems.push(`${mountAt(list, containerName, mountPath)}.mountPath: Invalid value: ${JSON.stringify(mountPath)}: must be unique`);
    mountPaths?.add(mountPath);
    if (deviceNames.has(name)) problems.push(`${mountAt(list, containerName, mountPath)}.name: Invalid value: ${JSON.stringify(name)}: must not already exist in volumeDevices`);
    if (devicePaths.has(mountPath)) problems.push(`${mountAt(list, containerName, mountPath)}.mountPath: Invalid value: ${JSON.stringify(mountPath)}: must not already exist as a path in volumeDevices`);
    if (mount.mountPropagation === "Bidirectional" && !isPrivileged(container)) problems.push(`${mountAt(list, containerName, mountPath)}.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers`);
  }
  for (const device of devices) {
    const name = asString(device.name) ?? "";
    const volume = volumes.get(name);
    const at = `${containerPath(list, containerName)}.volumeDevices[${asString(device.devicePath) ?? ""}]`;
    if (volume === undefined) problems.push(`${at}.name: Not found: volume ${JSON.stringify(name)}`);
    else if (volume.persistentVolumeClaim === undefined && volume.ephemeral === undefined) problems.push(`${at}.name: Invalid value: ${JSON.stringify(name)}: can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode`);
  }
  for (const variable of asList(container.env)) {
    const volumeName = asString(asRecord(asRecord(asRecord(variable)?.valueFrom)?.fileKeyRef)?.volumeName);
    if (volumeName === undefined) continue;
    const volume = volumes.get(volumeName);
    const where = containerPath(list, containerName);
    if (volume === undefined) problems.push(`${where}.env.valueFrom.fileKeyRef.volumeName: Not found: volume ${JSON.stringify(volumeName)}`);
    else if (volume.emptyDir === undefined) problems.push(`${where}.env.valueFrom.fileKeyRef.volumeName: Invalid value: ${JSON.stringify(volumeName)}: referenced volume must be of type emptyDir`);
  }
}

/**
 * Pod-level requests (PodLevelResources, on by default since Kubernetes 1.34) must cover what
 * the containers request together: regular containers and sidecars add up, a regular init
 * container runs alongside the sidecars started before it (AggregateContainerRequests).
 */
function podLevelRequestProblems(spec: JsonRecord, initContainers: readonly JsonRecord[], containers: readonly JsonRecord[]): string[] {
  const podRequests = asRecord(asRecord(spec.resources)?.requests);
  if (podRequests === undefined) return [];
  const problems: string[] = [];
  for (const [resource, value] of Object.entries(podRequests)) {
    const podRequest = parseQuantity(value);
    if (podRequest === undefined) continue;
    let sidecars: Quantity = ZERO;
    let initPeak: Quantity = ZERO;
    for (const container of initContainers) {
      const request = containerRequest(container, resource);
      if (container.restartPolicy === "Always") sidecars = addQuantities(sidecars, request);
      else initPeak = max(initPeak, addQuantities(request, sidecars));
    }
    const running = containers.reduce((total, container) => addQuantities(total, containerRequest(container, resource)), sidecars);
    const aggregate = max(running, initPeak);
    if (compareQuantities(aggregate, podRequest) > 0) problems.push(`spec.resources.requests[${resource}]: Invalid value: ${JSON.stringify(value)}: must be greater than or equal to the containers' aggregate requests`);
  }
  return problems;
}

const ZERO: Quantity = { numerator: 0n, denominator: 1n };

/** A container's request, defaulted to its limit as the API server does. */
function containerRequest(container: JsonRecord, resource: string): Quantity {
  const resources = asRecord(container.resources);
  const value = asRecord(resources?.requests)?.[resource] ?? asRecord(resources?.limits)?.[resource];
  return parseQuantity(value) ?? ZERO;
}

function max(a: Quantity, b: Quantity): Quantity {
  return compareQuantities(a, b) >= 0 ? a : b;
}

function hostPortProblems(container: JsonRecord, seen: Set<string>, list: ContainerList, hostNetwork: boolean, problems: string[]): void {
  for (const item of asList(container.ports)) {
    const declared = asRecord(item);
    if (declared === undefined) continue;
    const unset = declared.hostPort === undefined || declared.hostPort === 0;
    const port = hostNetwork && unset ? { ...declared, hostPort: declared.containerPort } : declared;
    if (!isInteger(port.hostPort) || port.hostPort === 0) continue;
    const id = hostPortId(port);
    if (seen.has(id)) problems.push(`${containerPath(list, asString(container.name) ?? "")}.ports: Duplicate value: host port ${id}`);
    seen.add(id);
  }
}
