// `make demo`: a canary rollout of a sidecar, narrated, on a local cluster built from Go modules,
// with `pod-decorator serve` as a child process. When this machine can host a real node (root,
// cgroups: e2e/node) the pods run in real containers (kubelet, containerd, runc) and the in-place
// update is seen in the kubelet's restart counts; otherwise on the control plane alone with a
// simulated kubelet, and the demo says so. Everything is stopped at the end, or if the demo
// fails or is killed.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { parse, stringify } from "yaml";
import { startControlPlane, stopControlPlane, type ControlPlane } from "./controlplane/controlplane.ts";
import { startCluster, stopCluster } from "./node/cluster.ts";
import { nodeHostingProblems } from "./node/node.ts";
import { testImage } from "./node/test-images.ts";
import { startNodeSimulator } from "./support/node-simulator.ts";
import { eventually } from "./support/polling.ts";
import { loadKubeConfigFile, startServeProcess } from "./support/serve-process.ts";

const NAMESPACE = "demo";
const INSTANCE_ID = "collaset.kusionstack.io/instance-id";
const samples = fileURLToPath(new URL("../config/samples/", import.meta.url));
const crds = fileURLToPath(new URL("../config/crd/", import.meta.url));

const bold = (text: string) => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[0m` : text);
const say = (text: string) => process.stdout.write(`\n${bold(`==> ${text}`)}\n`);
const note = (text: string) => process.stdout.write(`    ${text}\n`);

function kubectl(plane: ControlPlane, args: readonly string[], input?: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = execFile(plane.kubectl, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) done(stdout);
      else fail(new Error(`kubectl ${args.join(" ")}: ${stderr || error.message}`));
    });
    child.stdin?.end(input ?? "");
  });
}

/** Runs kubectl and shows the command and its output, as a person would type it. */
async function show(plane: ControlPlane, args: readonly string[]): Promise<void> {
  process.stdout.write(`\n$ kubectl ${args.join(" ")}\n${await kubectl(plane, args)}`);
}

const main = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));

/** Runs `pod-decorator explain` against the demo cluster and shows it as a person would type it. */
async function explain(plane: ControlPlane, args: readonly string[]): Promise<void> {
  const output = await new Promise<string>((done, fail) => {
    execFile(process.execPath, [main, "explain", ...args, `--kubeconfig=${plane.kubeconfig}`], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) done(stdout);
      else fail(new Error(`pod-decorator explain ${args.join(" ")}: ${stderr || error.message}`));
    });
  });
  process.stdout.write(`\n$ pod-decorator explain ${args.join(" ")}\n${output}`);
}

const podColumns = [
  "NAME:.metadata.name",
  `ID:.metadata.labels.${INSTANCE_ID.replaceAll(".", "\\.")}`,
  "UID:.metadata.uid",
  "CONTAINERS:.spec.containers[*].name",
  "IMAGES:.spec.containers[*].image",
  "RESTARTS:.status.containerStatuses[*].restartCount",
].join(",");

async function pods(core: CoreV1Api): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: "app=demo" })).items;
}

/** Waits until the CollaSet's pods are all there, Ready, running their spec images, and `check` holds. */
async function settled(core: CoreV1Api, what: string, check: (items: V1Pod[]) => boolean): Promise<V1Pod[]> {
  note(`waiting for ${what} ...`);
  return eventually(async () => {
    const items = await pods(core);
    const steady = items.length === 3 && items.every((pod) =>
      pod.metadata?.deletionTimestamp === undefined &&
      pod.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true &&
      pod.spec!.containers.every((container) => pod.status?.containerStatuses?.find((status) => status.name === container.name)?.image === container.image));
    return steady && check(items) ? items : undefined;
  }, 120_000, what);
}

const sidecarCount = (items: V1Pod[]) => items.filter((pod) => pod.spec!.containers.some((container) => container.name === "log-shipper")).length;

/** The samples run the local test images (e2e/node/test-images.ts): nothing is pulled. */
const APP_IMAGE = testImage("app");
const SIDECAR_IMAGES = [testImage("sidecar", "1"), testImage("sidecar", "2")] as const;

async function collaSetSample(): Promise<string> {
  const manifest = parse(await readFile(join(samples, "collaset.yaml"), "utf8")) as { spec: { template: { spec: { containers: { image: string }[] } } } };
  manifest.spec.template.spec.containers[0]!.image = APP_IMAGE;
  return stringify(manifest);
}

async function logging(partition: number, image: string = SIDECAR_IMAGES[0]): Promise<string> {
  const manifest = parse(await readFile(join(samples, "poddecoration-logging.yaml"), "utf8")) as {
    metadata: Record<string, unknown>;
    spec: { updateStrategy?: unknown; template: { containers: { image: string }[] } };
  };
  manifest.metadata.namespace = NAMESPACE;
  manifest.spec.updateStrategy = { rollingUpdate: { partition } };
  manifest.spec.template.containers[0]!.image = image;
  return stringify(manifest);
}

async function demo(plane: ControlPlane, realNode: boolean): Promise<void> {
  const config = loadKubeConfigFile(plane.kubeconfig);
  const core = config.makeApiClient(CoreV1Api);

  say(`Starting pod-decorator serve (webhook + controllers)${realNode ? "" : " and a simulated kubelet"}`);
  const serve = await startServeProcess({ kubeconfig: plane.kubeconfig });
  const kubelet = realNode ? undefined : await startNodeSimulator({ config, namespace: NAMESPACE, restartDelayMs: 500 });
  note(`serve is listening on https://127.0.0.1:${serve.port}; the API server calls it for every new pod`);
  try {
    await kubectl(plane, ["create", "namespace", NAMESPACE]);

    say(`A CollaSet of three pods (config/samples/collaset.yaml, running ${APP_IMAGE})`);
    await kubectl(plane, ["apply", "-n", NAMESPACE, "-f", "-"], await collaSetSample());
    await settled(core, "three ready pods", () => true);
    await show(plane, ["get", "cls", "-n", NAMESPACE]);
    await show(plane, ["get", "pods", "-n", NAMESPACE, "-o", `custom-columns=${podColumns}`]);

    say("The SRE team adds a logging sidecar as a PodDecoration, as a canary: partition 2");
    note("partition 2 keeps two of the three matched pods on what they have; one gets the sidecar");
    await kubectl(plane, ["apply", "-f", "-"], await logging(2));
    await settled(core, "one pod with the sidecar", (items) => sidecarCount(items) === 1);
    await show(plane, ["get", "pd,cls", "-n", NAMESPACE]);
    await show(plane, ["get", "pods", "-n", NAMESPACE, "-o", `custom-columns=${podColumns}`]);
    note("adding a container cannot be done to a live pod: instance 0 was recreated (new UID, same instance id)");
    note("explain tells which pods have which revision, and why the others do not:");
    await explain(plane, ["pd", "logging", "-n", NAMESPACE]);

    say("The canary looks good: partition 0 rolls it out to every pod");
    await kubectl(plane, ["apply", "-f", "-"], await logging(0));
    const decorated = await settled(core, "the sidecar on all three pods", (items) => sidecarCount(items) === 3);
    await show(plane, ["get", "pd,cls", "-n", NAMESPACE]);
    await show(plane, ["get", "pods", "-n", NAMESPACE, "-o", `custom-columns=${podColumns}`]);

    say("A new sidecar image: an image change is done in place");
    await kubectl(plane, ["apply", "-f", "-"], await logging(0, SIDECAR_IMAGES[1]));
    const updated = await settled(core, "the new image on all three pods", (items) =>
      items.every((pod) => pod.spec!.containers.some((container) => container.image === SIDECAR_IMAGES[1])));
    await show(plane, ["get", "pd,cls", "-n", NAMESPACE]);
    await show(plane, ["get", "pods", "-n", NAMESPACE, "-o", `custom-columns=${podColumns}`]);
    const uids = (items: V1Pod[]) => items.map((pod) => pod.metadata!.uid).sort().join();
    note(uids(updated) === uids(decorated) ? "same pod UIDs as before: updated in place" : "pods were recreated");
    if (realNode) note("RESTARTS is the kubelet's count per container (app, log-shipper): only the sidecar was restarted, with its new image");
    note("each pod records the decoration revisions it carries, as a label per decoration and in an annotation:");
    await show(plane, ["get", "pods", "-n", NAMESPACE, "-L", "poddecoration.kusionstack.io/pd-logging", "-L", "controller-revision-hash"]);
    note("and every revision is a ControllerRevision, kept up to the decoration's historyLimit:");
    await show(plane, ["get", "controllerrevisions", "-n", NAMESPACE]);

    say(`Done: stopping serve and the ${realNode ? "cluster" : "simulated kubelet and the control plane"}`);
  } finally {
    await kubelet?.stop();
    const code = await serve.stop();
    if (code !== 0) process.stdout.write(`serve exited with ${String(code)}:\n${serve.logs().slice(-4000)}\n`);
  }
}

const dir = await mkdtemp(join(tmpdir(), "pod-decorator-demo-"));
const problems = nodeHostingProblems();
const realNode = problems.length === 0;
if (realNode) {
  say("Starting a local cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and one real node (kubelet, containerd, runc)");
} else {
  say("Starting a local control plane: etcd, kube-apiserver, kube-controller-manager (loopback only)");
  note(`no real node: ${problems.join("; ")}; pods get a simulated kubelet instead (no container runs)`);
}
const started = Date.now();
const log = (line: string) => note(line);
const plane = realNode
  ? (await startCluster(dir, { ownerPid: process.pid, crds: [crds], log })).plane
  : await startControlPlane(dir, { ownerPid: process.pid, crds: [crds], log });
note(`ready in ${((Date.now() - started) / 1000).toFixed(1)}s; kubectl: ${plane.kubectl}`);
let failed = false;
try {
  await demo(plane, realNode);
} catch (error) {
  failed = true;
  process.stderr.write(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`);
} finally {
  if (realNode) await stopCluster(dir);
  else await stopControlPlane(dir);
  await rm(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
