// The rules of Kubernetes' pod validation that tie the parts of a pod together, as the
// renderer checks them on a rendered pod: one case per rule, and a consistent pod.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../src/api/pod.ts";
import { podConsistencyProblems } from "../../src/decoration/pod-consistency.ts";

function podWith(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Pod {
  return { apiVersion: "v1", kind: "Pod", metadata: { name: "p", ...metadata }, spec: { containers: [{ name: "app", image: "x:1" }], ...spec } };
}

const app = (fields: Record<string, unknown>) => ({ name: "app", image: "x:1", ...fields });

describe("podConsistencyProblems", () => {
  it("counts a regular init container with the sidecars started before it, not with the containers", () => {
    expect(podConsistencyProblems(podWith({
      resources: { requests: { cpu: "1" } },
      initContainers: [{ name: "setup", image: "x:1", resources: { requests: { cpu: "700m" } } }, { name: "proxy", image: "x:1", restartPolicy: "Always", resources: { requests: { cpu: "300m" } } }],
      containers: [app({ resources: { requests: { cpu: "700m" } } })],
    }))).toEqual([]);
  });

  it("finds nothing in a consistent pod", () => {
    expect(podConsistencyProblems(podWith({
      terminationGracePeriodSeconds: 60,
      volumes: [{ name: "v", emptyDir: {} }, { name: "disk", persistentVolumeClaim: { claimName: "d" } }],
      resourceClaims: [{ name: "gpu" }],
      containers: [
        app({ volumeMounts: [{ name: "v", mountPath: "/v" }], volumeDevices: [{ name: "disk", devicePath: "/dev/d" }], ports: [{ containerPort: 80, hostPort: 80 }], resources: { claims: [{ name: "gpu" }] } }),
        { name: "b", image: "x:1", ports: [{ containerPort: 81, hostPort: 80, protocol: "UDP" }], lifecycle: { preStop: { sleep: { seconds: 60 } } }, env: [{ name: "F", valueFrom: { fileKeyRef: { volumeName: "v", key: "K", path: "f" } } }] },
      ],
      initContainers: [{ name: "i", image: "x:1", ports: [{ containerPort: 80, hostPort: 80 }] }],
    }))).toEqual([]);
  });

  it.each<[string, Pod, string]>([
    ["a mount of a missing volume", podWith({ containers: [app({ volumeMounts: [{ name: "gone", mountPath: "/g" }] })] }), 'spec.containers[app].volumeMounts[/g].name: Not found: volume "gone"'],
    ["two mounts at one path", podWith({ volumes: [{ name: "v" }], containers: [app({ volumeMounts: [{ name: "v", mountPath: "/v" }, { name: "v", mountPath: "/v" }] })] }), 'spec.containers[app].volumeMounts[/v].mountPath: Invalid value: "/v": must be unique'],
    ["a device of a volume that is not a claim", podWith({ volumes: [{ name: "v", emptyDir: {} }], containers: [app({ volumeDevices: [{ name: "v", devicePath: "/dev/v" }] })] }), 'spec.containers[app].volumeDevices[/dev/v].name: Invalid value: "v": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'],
    ["a mount and a device of one volume", podWith({ volumes: [{ name: "v", persistentVolumeClaim: { claimName: "c" } }], containers: [app({ volumeMounts: [{ name: "v", mountPath: "/v" }], volumeDevices: [{ name: "v", devicePath: "/dev/v" }] })] }), 'spec.containers[app].volumeMounts[/v].name: Invalid value: "v": must not already exist in volumeDevices'],
    ["Bidirectional propagation in an unprivileged container", podWith({ volumes: [{ name: "v" }], containers: [app({ volumeMounts: [{ name: "v", mountPath: "/v", mountPropagation: "Bidirectional" }] })] }), "spec.containers[app].volumeMounts[/v].mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers"],
    ["an env file from a volume that is not an emptyDir", podWith({ volumes: [{ name: "v", configMap: { name: "c" } }], containers: [app({ env: [{ name: "F", valueFrom: { fileKeyRef: { volumeName: "v", key: "K", path: "f" } } }] })] }), 'spec.containers[app].env.valueFrom.fileKeyRef.volumeName: Invalid value: "v": referenced volume must be of type emptyDir'],
    ["a resource claim the pod does not declare", podWith({ containers: [app({ resources: { claims: [{ name: "gpu" }] } })] }), 'spec.containers[app].resources.claims: Not found: "gpu" is not one of the pod\'s resourceClaims'],
    ["host ports that collide across containers", podWith({ containers: [app({ ports: [{ containerPort: 80, hostPort: 8080 }] }), { name: "b", image: "x:1", ports: [{ containerPort: 81, hostPort: 8080 }] }] }), "spec.containers[b].ports: Duplicate value: host port TCP//8080"],
    ["container ports that collide on the host network", podWith({ hostNetwork: true, containers: [app({ ports: [{ containerPort: 80 }] }), { name: "b", image: "x:1", ports: [{ containerPort: 80 }] }] }), "spec.containers[b].ports: Duplicate value: host port TCP//80"],
    ["a hostPort other than containerPort on the host network", podWith({ hostNetwork: true, containers: [app({ ports: [{ containerPort: 80, hostPort: 8080 }] })] }), "spec.containers[app].ports: Invalid value: 8080: hostPort must match `containerPort` when `hostNetwork` is true"],
    ["a sleep hook longer than the grace period", podWith({ terminationGracePeriodSeconds: 10, containers: [app({ lifecycle: { preStop: { sleep: { seconds: 20 } } } })] }), "spec.containers[app].lifecycle.preStop.sleep: Invalid value: 20: must be less than terminationGracePeriodSeconds (10)"],
    ["a sleep hook longer than the default grace period", podWith({ containers: [app({ lifecycle: { postStart: { sleep: { seconds: 31 } } } })] }), "spec.containers[app].lifecycle.postStart.sleep: Invalid value: 31: must be less than terminationGracePeriodSeconds (30)"],
    ["an unmasked /proc without a user namespace", podWith({ containers: [app({ securityContext: { procMount: "Unmasked" } })] }), 'spec.containers[app].securityContext.procMount: Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`'],
    ["a resize policy that restarts in a pod that never restarts", podWith({ restartPolicy: "Never", containers: [app({ resizePolicy: [{ resourceName: "cpu", restartPolicy: "RestartContainer" }] })] }), "spec.containers[app].resizePolicy: Invalid value: \"RestartContainer\": must be 'NotRequired' when pod `restartPolicy` is 'Never'"],
    ["two containers of one name", podWith({ initContainers: [{ name: "app", image: "x:1" }] }), 'spec.containers[app]: Duplicate value: container name "app"'],
    ["containers requesting more than the pod-level request", podWith({
      resources: { requests: { cpu: "1" } },
      initContainers: [{ name: "proxy", image: "x:1", restartPolicy: "Always", resources: { requests: { cpu: "300m" } } }],
      containers: [app({ resources: { limits: { cpu: "800m" } } })],
    }), 'spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to the containers\' aggregate requests'],
    ["annotations over 256 KiB", podWith({}, { annotations: { a: "x".repeat(200 * 1024), b: "y".repeat(100 * 1024) } }), "metadata.annotations: Too long: may not be more than 262144 bytes"],
  ])("finds %s", (_what, pod, problem) => {
    expect(podConsistencyProblems(pod)).toEqual([problem]);
  });
});
