// Captures the realistic pod the controller benchmarks are built from, as a real API server
// returns it: the typical workload pod decorated by the pod webhook's engine, created by the
// ReplicaSet controller's field manager, bound by the scheduler's binding subresource, its
// status written by the kubelet's field manager, read back raw (the wire shape informers get).
// Run once; the result is committed as test/bench/fixtures/pod.json.
//   node test/bench/capture-pod-fixture.ts
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decoratePod, liveRevision } from "../../src/decoration/decorate.ts";
import { startControlPlane, stopControlPlane } from "../../e2e/controlplane/controlplane.ts";
import { NAMESPACE, typicalDecorations, typicalPod } from "./typical-workload.ts";

const fixturePath = fileURLToPath(new URL("./fixtures/pod.json", import.meta.url));

const dir = await mkdtemp(join(tmpdir(), "pod-decorator-capture-"));
const plane = await startControlPlane(dir, { ownerPid: process.pid, log: (line) => console.error(line) });
const kubectl = (args: readonly string[], input?: string): string =>
  execFileSync(plane.kubectl, args, { encoding: "utf8", ...(input === undefined ? {} : { input }) });

try {
  kubectl(["create", "namespace", NAMESPACE]);
  const replicaSet = JSON.parse(kubectl(["create", "-o", "json", "--field-manager=kube-controller-manager", "-f", "-"], JSON.stringify({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web-6f9c8d7b5", namespace: NAMESPACE, labels: { app: "web", tier: "frontend", "pod-template-hash": "6f9c8d7b5" } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: "web", "pod-template-hash": "6f9c8d7b5" } },
      template: { metadata: { labels: { app: "web", tier: "frontend", "pod-template-hash": "6f9c8d7b5" } }, spec: typicalPod().spec },
    },
  }))) as { metadata: { uid: string } };

  const decorated = decoratePod(typicalPod(), typicalDecorations(), liveRevision).pod;
  // What the ServiceAccount admission plugin adds (it is disabled on this control plane).
  const serviceAccountVolume = {
    name: "kube-api-access-7qm2x",
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
      ],
    },
  };
  const serviceAccountMount = { name: serviceAccountVolume.name, readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" };
  const spec = decorated.spec!;
  const pod = {
    ...decorated,
    metadata: {
      ...decorated.metadata,
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-6f9c8d7b5", uid: replicaSet.metadata.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      ...spec,
      containers: spec.containers.map((container) => ({ ...container, volumeMounts: [...(container.volumeMounts ?? []), serviceAccountMount] })),
      initContainers: (spec.initContainers ?? []).map((container) => ({ ...container, volumeMounts: [...(container.volumeMounts ?? []), serviceAccountMount] })),
      volumes: [...(spec.volumes ?? []), serviceAccountVolume],
    },
  };
  const created = JSON.parse(kubectl(["create", "-o", "json", "--field-manager=kube-controller-manager", "-f", "-"], JSON.stringify(pod))) as { metadata: { name: string } };
  const name = created.metadata.name;
  const podPath = `/api/v1/namespaces/${NAMESPACE}/pods/${name}`;

  kubectl(["create", "--raw", `${podPath}/binding`, "-f", "-"], JSON.stringify({
    apiVersion: "v1", kind: "Binding", metadata: { name }, target: { apiVersion: "v1", kind: "Node", name: "worker-a-7" },
  }));

  const started = "2026-03-02T09:14:07Z";
  const running = (container: { name: string; image?: string }, index: number) => ({
    name: container.name,
    image: container.image,
    imageID: `${container.image?.split(":")[0] ?? ""}@sha256:${String(index).repeat(64).slice(0, 64)}`,
    containerID: `containerd://${(index + 10).toString(16).repeat(64).slice(0, 64)}`,
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt: started } },
  });
  const status = {
    phase: "Running",
    conditions: [
      { type: "PodReadyToStartContainers", status: "True", lastProbeTime: null, lastTransitionTime: "2026-03-02T09:14:05Z" },
      { type: "Initialized", status: "True", lastProbeTime: null, lastTransitionTime: "2026-03-02T09:14:06Z" },
      { type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: "2026-03-02T09:14:12Z" },
      { type: "ContainersReady", status: "True", lastProbeTime: null, lastTransitionTime: "2026-03-02T09:14:12Z" },
      { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: "2026-03-02T09:14:03Z" },
    ],
    hostIP: "10.20.3.17",
    hostIPs: [{ ip: "10.20.3.17" }],
    podIP: "10.244.3.41",
    podIPs: [{ ip: "10.244.3.41" }],
    startTime: "2026-03-02T09:14:03Z",
    initContainerStatuses: (spec.initContainers ?? []).map((container, index) => ({
      ...running(container, index + 5),
      ready: true,
      started: false,
      state: { terminated: { exitCode: 0, reason: "Completed", startedAt: "2026-03-02T09:14:05Z", finishedAt: "2026-03-02T09:14:06Z", containerID: running(container, index + 5).containerID } },
    })),
    containerStatuses: spec.containers.map((container, index) => running(container, index)),
  };
  kubectl(["patch", "pod", name, "-n", NAMESPACE, "--subresource=status", "--type=strategic", "--field-manager=kubelet", "-p", JSON.stringify({ status })]);

  const wire = kubectl(["get", "--raw", podPath]);
  await writeFile(fixturePath, `${JSON.stringify(JSON.parse(wire), null, 2)}\n`);
  console.error(`wrote ${fixturePath} (${Buffer.byteLength(wire)} bytes on the wire)`);
} finally {
  await stopControlPlane(dir);
  await rm(dir, { recursive: true, force: true });
}
