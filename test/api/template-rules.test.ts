// Kubernetes' pod validation rules a PodDecoration template can break on its own, refused at
// admission with the field path and Kubernetes' reason (one case per rule), and the valid
// spellings of the same fields accepted.
import { describe, expect, it } from "vitest";
import type { PodDecoration, PodDecorationTemplate } from "../../src/api/poddecoration.ts";
import { validatePodDecoration } from "../../src/api/poddecoration.ts";

function errorsOf(template: PodDecorationTemplate): string[] {
  const pd: PodDecoration = { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "pd", namespace: "shop" }, spec: { selector: {}, template } };
  return validatePodDecoration(pd).map((error) => `${error.path}: ${error.reason}`);
}

const sidecar = (fields: Record<string, unknown>): PodDecorationTemplate => ({ containers: [{ name: "s", image: "x:1", ...fields }], volumes: [{ name: "v", emptyDir: {} }] });
const init = (fields: Record<string, unknown>): PodDecorationTemplate => ({ initContainers: [{ name: "i", image: "x:1", ...fields }] });
const volume = (fields: Record<string, unknown>): PodDecorationTemplate => ({ volumes: [{ name: "v", ...fields }] });
const override = (affinity: Record<string, unknown>): PodDecorationTemplate => ({ affinity: { overrideAffinity: affinity } });
const S = "spec.template.containers[0]";

describe("template rules refused at admission", () => {
  it.each<[string, PodDecorationTemplate, string]>([
    // volume mounts
    ["an absolute subPath", sidecar({ volumeMounts: [{ name: "v", mountPath: "/v", subPath: "/abs" }] }), `${S}.volumeMounts[0].subPath: Invalid value: "/abs": must be a relative path`],
    ["a subPath with ..", sidecar({ volumeMounts: [{ name: "v", mountPath: "/v", subPath: "a/../b" }] }), `${S}.volumeMounts[0].subPath: Invalid value: "a/../b": must not contain '..'`],
    ["a subPathExpr with ..", sidecar({ volumeMounts: [{ name: "v", mountPath: "/v", subPathExpr: "../$(POD)" }] }), `${S}.volumeMounts[0].subPathExpr: Invalid value: "../$(POD)": must not contain '..'`],
    ["an unknown mountPropagation", sidecar({ volumeMounts: [{ name: "v", mountPath: "/v", mountPropagation: "Shared" }] }), `${S}.volumeMounts[0].mountPropagation: Unsupported value: "Shared": supported values: "Bidirectional", "HostToContainer", "None"`],
    ["Bidirectional in an unprivileged container", sidecar({ volumeMounts: [{ name: "v", mountPath: "/v", mountPropagation: "Bidirectional" }] }), `${S}.volumeMounts[0].mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers`],
    ["recursiveReadOnly without readOnly", sidecar({ volumeMounts: [{ name: "v", mountPath: "/v", recursiveReadOnly: "Enabled" }] }), `${S}.volumeMounts[0].recursiveReadOnly: Forbidden: may only be specified when readOnly is true`],
    ["a device path with ..", sidecar({ volumeDevices: [{ name: "d", devicePath: "/dev/../x" }] }), `${S}.volumeDevices[0].devicePath: Invalid value: "/dev/../x": can not contain backsteps ('..')`],
    ["a device named like a mount", sidecar({ volumeMounts: [{ name: "v", mountPath: "/v" }], volumeDevices: [{ name: "v", devicePath: "/dev/v" }] }), `${S}.volumeDevices[0].name: Invalid value: "v": must not already exist in volumeMounts`],
    // env
    ["valueFrom without a source", sidecar({ env: [{ name: "A", valueFrom: {} }] }), `${S}.env[0].valueFrom: Invalid value: "": must specify one of: \`fieldRef\`, \`resourceFieldRef\`, \`configMapKeyRef\`, \`secretKeyRef\` or \`fileKeyRef\``],
    ["valueFrom with two sources", sidecar({ env: [{ name: "A", valueFrom: { fieldRef: { fieldPath: "metadata.name" }, secretKeyRef: { name: "s", key: "k" } } }] }), `${S}.env[0].valueFrom: Invalid value: "": may not have more than one field specified at a time`],
    ["an env name with =", sidecar({ env: [{ name: "A=B", value: "1" }] }), `${S}.env[0].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`],
    ["an unsupported fieldPath", sidecar({ env: [{ name: "A", valueFrom: { fieldRef: { fieldPath: "spec.hostname" } } }] }), `${S}.env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.hostname": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`],
    ["an unsupported resourceFieldRef", sidecar({ env: [{ name: "A", valueFrom: { resourceFieldRef: { resource: "limits.gpu" } } }] }), `${S}.env[0].valueFrom.resourceFieldRef.resource: Unsupported value: "limits.gpu": supported values: "limits.cpu", "limits.memory", "limits.ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage"`],
    ["a secretKeyRef without a key", sidecar({ env: [{ name: "A", valueFrom: { secretKeyRef: { name: "s" } } }] }), `${S}.env[0].valueFrom.secretKeyRef.key: Required value`],
    ["a configMapKeyRef with an invalid key", sidecar({ env: [{ name: "A", valueFrom: { configMapKeyRef: { name: "c", key: "a b" } } }] }), `${S}.env[0].valueFrom.configMapKeyRef.key: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`],
    ["envFrom with two sources", sidecar({ envFrom: [{ configMapRef: { name: "c" }, secretRef: { name: "s" } }] }), `${S}.envFrom: Invalid value: "": may not have more than one field specified at a time`],
    ["envFrom without a name", sidecar({ envFrom: [{ secretRef: {} }] }), `${S}.envFrom[0].secretRef.name: Required value`],
    // ports
    ["a missing containerPort", sidecar({ ports: [{ name: "http" }] }), `${S}.ports[0].containerPort: Required value`],
    ["a port out of range", sidecar({ ports: [{ containerPort: 70000 }] }), `${S}.ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`],
    ["an unknown protocol", sidecar({ ports: [{ containerPort: 80, protocol: "HTTP" }] }), `${S}.ports[0].protocol: Unsupported value: "HTTP": supported values: "TCP", "UDP", "SCTP"`],
    ["a port name that is not an IANA name", sidecar({ ports: [{ containerPort: 80, name: "Web" }] }), `${S}.ports[0].name: Invalid value: "Web": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`],
    ["a duplicate port name", sidecar({ ports: [{ containerPort: 80, name: "web" }, { containerPort: 81, name: "web" }] }), `${S}.ports[1].name: Duplicate value: "web"`],
    ["a duplicate host port", sidecar({ ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 81, hostPort: 8080 }] }), `${S}.ports[1].hostPort: Duplicate value: "TCP//8080"`],
    // resources
    ["a request above its limit", sidecar({ resources: { requests: { cpu: "2" }, limits: { cpu: "1500m" } } }), `${S}.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1500m`],
    ["a quantity that is not one", sidecar({ resources: { limits: { memory: "lots" } } }), `${S}.resources.limits[memory]: Invalid value: "lots": must be a quantity, like 100m, 0.5 or 64Mi`],
    ["a negative quantity", sidecar({ resources: { requests: { cpu: "-1" } } }), `${S}.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`],
    ["an unknown standard resource", sidecar({ resources: { requests: { gpu: "1" } } }), `${S}.resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers`],
    ["a fractional extended resource", sidecar({ resources: { limits: { "example.com/gpu": "0.5" } } }), `${S}.resources.limits[example.com/gpu]: Invalid value: "0.5": must be an integer`],
    ["an extended resource requested without a limit", sidecar({ resources: { requests: { "example.com/gpu": "1" } } }), `${S}.resources.limits: Required value: Limit must be set for non overcommitable resources`],
    // probes and hooks
    ["a probe without a handler", sidecar({ readinessProbe: { periodSeconds: 5 } }), `${S}.readinessProbe: Required value: must specify a handler type`],
    ["a probe with two handlers", sidecar({ livenessProbe: { exec: { command: ["true"] }, tcpSocket: { port: 80 } } }), `${S}.livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type`],
    ["an exec probe without a command", sidecar({ startupProbe: { exec: {} } }), `${S}.startupProbe.exec.command: Required value`],
    ["an httpGet probe without a port", sidecar({ livenessProbe: { httpGet: { path: "/" } } }), `${S}.livenessProbe.httpGet.port: Invalid value: undefined: must be between 1 and 65535, inclusive`],
    ["an unknown httpGet scheme", sidecar({ livenessProbe: { httpGet: { port: 80, scheme: "FTP" } } }), `${S}.livenessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"`],
    ["a negative probe period", sidecar({ readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: -1 } }), `${S}.readinessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0`],
    ["a liveness successThreshold above 1", sidecar({ livenessProbe: { tcpSocket: { port: 80 }, successThreshold: 2 } }), `${S}.livenessProbe.successThreshold: Invalid value: 2: must be 1`],
    ["a readiness probe with a grace period", sidecar({ readinessProbe: { tcpSocket: { port: 80 }, terminationGracePeriodSeconds: 5 } }), `${S}.readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes`],
    ["a hook without a handler", sidecar({ lifecycle: { preStop: {} } }), `${S}.lifecycle.preStop: Required value: must specify a handler type`],
    ["a negative sleep", sidecar({ lifecycle: { preStop: { sleep: { seconds: -1 } } } }), `${S}.lifecycle.preStop.sleep.seconds: Invalid value: -1: must be non-negative`],
    ["a probe on a regular init container", init({ readinessProbe: { tcpSocket: { port: 80 } } }), "spec.template.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always"],
    ["a hook on a regular init container", init({ lifecycle: { postStart: { exec: { command: ["true"] } } } }), "spec.template.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always"],
    // restart policy, security context, messages
    ["an unknown container restartPolicy", sidecar({ restartPolicy: "Sometimes" }), `${S}.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"`],
    ["restart rules without a policy", init({ restartPolicyRules: [{ action: "Restart", exitCodes: { operator: "In", values: [1] } }] }), "spec.template.initContainers[0].restartPolicy: Required value: must specify restartPolicy when restart rules are used"],
    ["privileged without privilege escalation", sidecar({ securityContext: { privileged: true, allowPrivilegeEscalation: false } }), `${S}.securityContext: Invalid value: "": cannot set \`allowPrivilegeEscalation\` to false and \`privileged\` to true`],
    ["a negative runAsUser", sidecar({ securityContext: { runAsUser: -1 } }), `${S}.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive`],
    ["a seccomp profile without a type", sidecar({ securityContext: { seccompProfile: {} } }), `${S}.securityContext.seccompProfile.type: Required value: type is required when seccomp profile is set`],
    ["a Localhost seccomp profile without a path", sidecar({ securityContext: { seccompProfile: { type: "Localhost" } } }), `${S}.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost`],
    ["an unknown procMount", sidecar({ securityContext: { procMount: "Open" } }), `${S}.securityContext.procMount: Unsupported value: "Open": supported values: "Default", "Unmasked"`],
    ["an unknown terminationMessagePolicy", sidecar({ terminationMessagePolicy: "Logs" }), `${S}.terminationMessagePolicy: Unsupported value: "Logs": supported values: "File", "FallbackToLogsOnError"`],
    ["an unknown resize policy", sidecar({ resizePolicy: [{ resourceName: "cpu", restartPolicy: "Later" }] }), `${S}.resizePolicy: Unsupported value: "Later": supported values: "NotRequired", "RestartContainer"`],
    // volumes
    ["a hostPath without a path", volume({ hostPath: {} }), "spec.template.volumes[0].hostPath.path: Required value"],
    ["a hostPath with ..", volume({ hostPath: { path: "/var/../etc" } }), `spec.template.volumes[0].hostPath.path: Invalid value: "/var/../etc": must not contain '..'`],
    ["an unknown hostPath type", volume({ hostPath: { path: "/x", type: "Folder" } }), `spec.template.volumes[0].hostPath.type: Unsupported value: "Folder": supported values: "", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"`],
    ["a configMap without a name", volume({ configMap: {} }), "spec.template.volumes[0].configMap.name: Required value"],
    ["a secret with a mode above 0777", volume({ secret: { secretName: "s", defaultMode: 1000 } }), "spec.template.volumes[0].secret.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive"],
    ["an item path with ..", volume({ configMap: { name: "c", items: [{ key: "k", path: "../k" }] } }), `spec.template.volumes[0].configMap.items[0].path: Invalid value: "../k": must not contain '..'`],
    ["an absolute item path", volume({ secret: { secretName: "s", items: [{ key: "k", path: "/k" }] } }), `spec.template.volumes[0].secret.items[0].path: Invalid value: "/k": must be a relative path`],
    ["a claim without a name", volume({ persistentVolumeClaim: {} }), "spec.template.volumes[0].persistentVolumeClaim.claimName: Required value"],
    ["a negative emptyDir size", volume({ emptyDir: { sizeLimit: "-1Gi" } }), `spec.template.volumes[0].emptyDir.sizeLimit: Invalid value: "-1Gi": must be a non-negative quantity`],
    ["a downward API file without a field", volume({ downwardAPI: { items: [{ path: "name" }] } }), "spec.template.volumes[0].downwardAPI: Required value: one of fieldRef and resourceFieldRef is required"],
    ["a csi volume without a driver", volume({ csi: {} }), "spec.template.volumes[0].csi.driver: Required value"],
    ["an nfs volume without a server", volume({ nfs: { path: "/exports" } }), "spec.template.volumes[0].nfs.server: Required value"],
    ["an nfs volume with a relative path", volume({ nfs: { server: "nfs.example.com", path: "exports" } }), `spec.template.volumes[0].nfs.path: Invalid value: "exports": must be an absolute path`],
    // affinity
    ["required node affinity without terms", override({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } }), "spec.template.affinity.overrideAffinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term"],
    ["a preferred weight out of range", override({ nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, preference: { matchExpressions: [{ key: "zone", operator: "Exists" }] } }] } }), "spec.template.affinity.overrideAffinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100"],
    ["a pod affinity term without a topologyKey", override({ podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: "db" } } }] } }), "spec.template.affinity.overrideAffinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty"],
    ["matchLabelKeys without a labelSelector", override({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: "zone", matchLabelKeys: ["app"] }] } }), "spec.template.affinity.overrideAffinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"],
    ["a node selector key that is not a label name", { affinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "bad key", operator: "Exists" }] }] } }, `spec.template.affinity.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`],
    ["a matchFields key other than metadata.name", { affinity: { nodeSelectorTerms: [{ matchFields: [{ key: "spec.unschedulable", operator: "In", values: ["x"] }] }] } }, `spec.template.affinity.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "spec.unschedulable": not a valid field selector key`],
    // metadata
    ["annotations over 256 KiB", { metadata: [{ annotations: { big: "x".repeat(256 * 1024) } }] }, "spec.template.metadata[0].annotations: Too long: may not be more than 262144 bytes"],
  ])("refuses %s", (_what, template, expected) => {
    expect(errorsOf(template)).toEqual([expected]);
  });

  it("accepts the valid spellings of the same fields", () => {
    expect(errorsOf({
      initContainers: [{ name: "sidecar", image: "x:1", restartPolicy: "Always", readinessProbe: { tcpSocket: { port: "web" } }, lifecycle: { preStop: { sleep: { seconds: 0 } } } }],
      containers: [{
        name: "s",
        image: "x:1",
        env: [{ name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } }, { name: "CPU", valueFrom: { resourceFieldRef: { resource: "limits.cpu", divisor: "1m" } } }, { name: "my.name-1", value: "x" }],
        envFrom: [{ prefix: "CFG_", configMapRef: { name: "config" } }],
        ports: [{ containerPort: 80, name: "web", hostPort: 8080, protocol: "UDP" }, { containerPort: 81, hostPort: 8080 }],
        resources: { requests: { cpu: 0.5, memory: "64Mi", "example.com/gpu": "1" }, limits: { cpu: "500m", memory: "0.0625Gi", "example.com/gpu": 1 } },
        livenessProbe: { httpGet: { port: 80, path: "/healthz", httpHeaders: [{ name: "X-Probe", value: "1" }] }, successThreshold: 1, terminationGracePeriodSeconds: 5 },
        securityContext: { privileged: true, runAsUser: 0, seccompProfile: { type: "Localhost", localhostProfile: "profiles/a.json" }, procMount: "Default" },
        volumeMounts: [{ name: "v", mountPath: "/v", subPath: "a/b", mountPropagation: "Bidirectional", readOnly: true }, { name: "v", mountPath: "/w", readOnly: true, recursiveReadOnly: "IfPossible" }],
        restartPolicy: "Always",
      }],
      volumes: [
        { name: "v", hostPath: { path: "/var/lib/x", type: "DirectoryOrCreate" } },
        { name: "w", configMap: { name: "c", defaultMode: 0o644, items: [{ key: "k", path: "a/k" }] } },
        { name: "d", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } },
        { name: "e", emptyDir: { sizeLimit: "1Gi" } },
      ],
      affinity: {
        overrideAffinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["node-1"] }] }] } },
          podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: { app: "web" } }, matchLabelKeys: ["pod-template-hash"] } }] },
        },
        nodeSelectorTerms: [{ matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: ["a"] }] }],
      },
    })).toEqual([]);
  });
});
