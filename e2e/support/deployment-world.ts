// A Deployment `web` on the real node whose pods a decoration updates after creation (pods not
// owned by a CollaSet: the PodDecoration controller's rollout), and what the tests read off it:
// its pods, the decoration's status for it, the decoration's Events.
import type { CoreV1Event } from "@kubernetes/client-node";
import type { Pod } from "../../src/kube/objects.ts";
import { testImage } from "../node/test-images.ts";
import { readDecoration, type DecorationObject, type WorkloadStatus } from "./collaset-world.ts";
import { clients, eventually } from "./cluster.ts";
import { SERVICE_READY_GATE } from "./traffic.ts";

export function deploymentYaml(namespace: string, options: { replicas: number; podOpsLifecycle?: boolean }): string {
  const lifecycle = options.podOpsLifecycle === true;
  return `
apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: ${namespace} }
spec:
  replicas: ${options.replicas}
  selector: { matchLabels: { app: web } }
  template:
    metadata:
      labels: { app: web${lifecycle ? `, kusionstack.io/control: "true"` : ""} }
    spec:
      terminationGracePeriodSeconds: 2
      automountServiceAccountToken: false
${lifecycle ? `      readinessGates: [{ conditionType: ${SERVICE_READY_GATE} }]\n` : ""}      containers:
        - name: app
          image: ${testImage("app")}
`;
}

/** A pod of Deployment `web`: controlled by one of its ReplicaSets (`web-<hash>`). */
export function isDeploymentPod(pod: Pod): boolean {
  return pod.metadata?.ownerReferences?.some((owner) => owner.controller === true && owner.kind === "ReplicaSet" && /^web-[a-z0-9]+$/.test(owner.name)) === true;
}

export function byName(a: Pod, b: Pod): number {
  const [x, y] = [a.metadata?.name ?? "", b.metadata?.name ?? ""];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The decoration's status entry for one workload, if it reports one. */
export function workloadStatus(decoration: DecorationObject, kind: string, name: string): WorkloadStatus | undefined {
  return decoration.status?.workloads?.find((workload) => workload.kind === kind && workload.name === name);
}

/** What the workload's status says about why its pods do not move: its reason, and each blocked pod's. */
export function whyNotMoving(workload: WorkloadStatus | undefined): string {
  return [workload?.reason, ...(workload?.blocked ?? []).map((entry) => `${entry.pod}: ${entry.reason}: ${entry.message}`)].filter((text) => text !== undefined && text !== "").join("; ");
}

/** Waits until the `logging` decoration's status is of its current generation and `check` finds what it wants there. */
export function decorationStatus<T>(namespace: string, check: (decoration: DecorationObject) => T | undefined, what: string, timeoutMs = 60_000): Promise<T> {
  let last: DecorationObject["status"];
  return eventually(async () => {
    const decoration = await readDecoration(namespace);
    last = decoration.status;
    return decoration.status?.observedGeneration === decoration.metadata.generation ? check(decoration) : undefined;
  }, timeoutMs, what).catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nthe decoration's last status: ${JSON.stringify(last)}`);
  });
}

/** Events on the `logging` PodDecoration with this reason. */
export async function decorationEvents(namespace: string, reason: string): Promise<CoreV1Event[]> {
  const list = await clients().core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.kind=PodDecoration,involvedObject.name=logging,reason=${reason}` });
  return list.items;
}

/** Waits until an Event with this reason whose message passes `check` is on the decoration. */
export function decorationEvent(namespace: string, reason: string, check: (message: string) => boolean = () => true, timeoutMs = 60_000): Promise<CoreV1Event> {
  return eventually(async () => (await decorationEvents(namespace, reason)).find((event) => check(event.message ?? "")), timeoutMs, `a ${reason} Event on the decoration`);
}
