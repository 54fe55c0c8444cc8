// Decoration updates for pods of any owner (issue 17) on the real node: the PodDecoration
// controller rolls a changed decoration out to a Deployment's pods — in place when the kubelet
// can do it (a sidecar's image: same pod, only that container restarts, with the new image), by
// partition, at most maxUnavailable of the Deployment at once; a change that needs recreation is
// reported and left alone, or, with recreatePolicy Evict, evicted through the Eviction API (a
// PodDisruptionBudget holds it back) so that the Deployment recreates the pod and the webhook
// injects the new revision; with PodOpsLifecycle a pod leaves the Service before its sidecar
// restarts. Every wait is on the pod watch, the decoration's status or its Events.
import { describe, expect } from "vitest";
import { createKubeClient } from "../../src/kube/client.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { testImage } from "../node/test-images.ts";
import { allowNoDisruption, removeDisruptionBudget } from "../support/disruption-budget.ts";
import { apply, decorationYaml, readDecoration, REVISIONS, type DecorationRollout } from "../support/collaset-world.ts";
import { kubeConfig, kubectl, test } from "../support/cluster.ts";
import { byName, decorationEvent, decorationEvents, decorationStatus, deploymentYaml, isDeploymentPod, whyNotMoving, workloadStatus } from "../support/deployment-world.ts";
import { explainPodJson, verdict } from "../support/explain-cli.ts";
import { startOperator, type Operator } from "../support/operator.ts";
import { PodWatch, runsImage } from "../support/pod-watch.ts";
import { containerView } from "../support/real-pods.ts";
import { watchUnavailable, worstMoment } from "../support/rollout-invariants.ts";
import { expectOutOfTrafficAroundEachRestart, reportFigures, rolloutUnderTraffic } from "../support/traffic.ts";

const REPLICAS = 5;
const SIDECAR = "logger";
const logger = (tag: "1" | "2") => `${SIDECAR}=${testImage("logger", tag)}`;

const live = (watch: PodWatch) => watch.pods().filter((pod) => isDeploymentPod(pod) && pod.metadata?.deletionTimestamp == null).sort(byName);
const nameOf = (pod: Pod) => pod.metadata?.name ?? "";
const uidOf = (pod: Pod) => pod.metadata?.uid ?? "";
const recorded = (revision: string | undefined) => JSON.stringify([{ name: "logging", revision }]);

interface World {
  operator: Operator;
  watch: PodWatch;
  /** The Deployment's pods once settled, in update order (by name: none updated, all ready). */
  pods: Pod[];
  /** The decoration's revision they were created with. */
  revision: string;
}

/**
 * serve, then the `logging` decoration with logger:1 (`rollout` as given), then Deployment `web`
 * of `replicas` pods, each injected at admission and running it.
 */
async function deploymentWorld(namespace: string, replicas: number, rollout: DecorationRollout = {}): Promise<World> {
  const operator = await startOperator();
  const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
  try {
    await apply(decorationYaml(namespace, [logger("1")], rollout));
    const revision = await decorationStatus(namespace, (decoration) => decoration.status?.updatedRevision, "the decoration's first revision");
    await apply(deploymentYaml(namespace, { replicas }));
    const pods = await watch.waitFor(() => {
      const pods = live(watch);
      return pods.length === replicas && pods.every((pod) => runsImage(pod, SIDECAR, testImage("logger", "1")) && pod.metadata?.annotations?.[REVISIONS] === recorded(revision)) ? pods : undefined;
    }, 180_000, `${replicas} Deployment pods ready with ${logger("1")} injected`);
    return { operator, watch, pods, revision };
  } catch (error) {
    await watch.stop();
    await operator.stop();
    throw error;
  }
}

async function stopWorld(world: World): Promise<void> {
  await world.watch.stop();
  expect(await world.operator.stop()).toBe(0);
}

/** The updated revision once the decoration's status has one other than `previous`. */
function nextRevision(namespace: string, previous: string): Promise<string> {
  return decorationStatus(namespace, (decoration) => {
    const revision = decoration.status?.updatedRevision;
    return revision !== undefined && revision !== previous ? revision : undefined;
  }, `a revision after ${previous}`);
}

/** The sidecar restarted once, in place, with the new image; the app container untouched. */
function expectMovedInPlace(before: Pod, after: Pod, revision: string): void {
  const name = nameOf(before);
  expect(uidOf(after), `${name}: same pod`).toBe(uidOf(before));
  expect(after.metadata?.annotations?.[REVISIONS], `${name}: records the new revision`).toBe(recorded(revision));
  const sidecar = containerView(after, SIDECAR)!;
  expect(sidecar, `${name}: the kubelet runs the new sidecar`).toMatchObject({ image: testImage("logger", "2"), running: true, ready: true, restartCount: containerView(before, SIDECAR)!.restartCount + 1 });
  expect(sidecar.imageID, `${name}: a new image`).not.toBe(containerView(before, SIDECAR)!.imageID);
  expect(containerView(after, "app"), `${name}: the app container did not restart`).toEqual(containerView(before, "app"));
}

/** Nothing about the pod changed: same pod, same containers, same revision recorded. */
function expectUntouched(before: Pod, after: Pod | undefined): void {
  const name = nameOf(before);
  expect(after, `${name}: still there`).toBeDefined();
  expect(uidOf(after!), `${name}: same pod`).toBe(uidOf(before));
  expect(after!.metadata?.deletionTimestamp, `${name}: not being deleted`).toBeUndefined();
  expect(after!.metadata?.annotations?.[REVISIONS], `${name}: records what it had`).toBe(before.metadata?.annotations?.[REVISIONS]);
  for (const container of ["app", SIDECAR]) expect(containerView(after!, container), `${name}: ${container} untouched`).toEqual(containerView(before, container));
}

describe("decoration updates for a Deployment's pods on the real node", () => {
  test("a sidecar's new image moves all but the partition's last pods in place, at most maxUnavailable at once; partition 0 completes", async ({ namespace }) => {
    const partition = 2;
    const maxUnavailable = 2;
    const world = await deploymentWorld(namespace, REPLICAS);
    const { watch } = world;
    try {
      const moving = world.pods.slice(0, REPLICAS - partition);
      const held = world.pods.slice(REPLICAS - partition);
      const invariants = watchUnavailable(watch, REPLICAS, isDeploymentPod);
      await apply(decorationYaml(namespace, [logger("2")], { partition, maxUnavailable }));
      const revision = await nextRevision(namespace, world.revision);

      // Settled: as many pods as should move run the new image (the watch waits for at least as many, then the test says which), and the status says so.
      const onNew = await watch.waitFor(() => {
        const pods = live(watch).filter((pod) => pod.metadata?.annotations?.[REVISIONS] === recorded(revision));
        return pods.length >= REPLICAS - partition && pods.every((pod) => runsImage(pod, SIDECAR, testImage("logger", "2"))) ? pods : undefined;
      }, 120_000, `${REPLICAS - partition} pods running ${logger("2")}`);
      const status = await decorationStatus(namespace, (decoration) => (workloadStatus(decoration, "Deployment", "web")?.updatedPods === REPLICAS - partition ? decoration : undefined), `the Deployment's ${REPLICAS - partition} updated pods in the status`);
      expect(onNew.map(nameOf), "the first pods in update order moved, the partition's last ones did not").toEqual(moving.map(nameOf));
      for (const pod of moving) expectMovedInPlace(pod, watch.get(nameOf(pod))!, revision);
      for (const pod of held) expectUntouched(pod, watch.get(nameOf(pod)));
      const first = invariants.report();
      expect(first.maxUnavailable, worstMoment(first)).toBeLessThanOrEqual(maxUnavailable);
      expect(first.maxUnavailable, "the watch saw the updates make pods unavailable").toBeGreaterThan(0);
      expect(status.status?.updatedPods).toBe(REPLICAS - partition);
      expect(workloadStatus(status, "Deployment", "web")).toMatchObject({ matchedPods: REPLICAS, updatedPods: REPLICAS - partition });

      const inPlace = await decorationEvents(namespace, "UpdatedInPlace");
      for (const pod of moving) expect(inPlace.some((event) => event.message?.includes(nameOf(pod))), `an UpdatedInPlace Event names ${nameOf(pod)}`).toBe(true);
      for (const pod of held) expect(inPlace.some((event) => event.message?.includes(nameOf(pod))), `no UpdatedInPlace Event names ${nameOf(pod)}`).toBe(false);

      const movedReport = await explainPodJson(namespace, nameOf(moving[0]!));
      expect(movedReport.pod.updatedBy).toBe("poddecoration-controller");
      expect(verdict(movedReport, "logging")).toMatchObject({ state: "updated", podRevision: revision });
      const heldReport = await explainPodJson(namespace, nameOf(held[0]!));
      expect(heldReport.pod.updatedBy).toBe("poddecoration-controller");
      expect(verdict(heldReport, "logging")).toMatchObject({ state: "held", podRevision: world.revision, reasons: [{ reason: "partition" }] });

      // Partition 0: the rest follow, still in place.
      const settledPods = new Map(live(watch).map((pod) => [nameOf(pod), pod]));
      await apply(decorationYaml(namespace, [logger("2")], { partition: 0, maxUnavailable }));
      await watch.waitFor(() => {
        const pods = live(watch);
        return pods.length === REPLICAS && pods.every((pod) => runsImage(pod, SIDECAR, testImage("logger", "2")) && pod.metadata?.annotations?.[REVISIONS] === recorded(revision)) ? true : undefined;
      }, 120_000, `every pod running ${logger("2")}`);
      const done = await decorationStatus(namespace, (decoration) => (decoration.status?.updatedPods === REPLICAS && decoration.status.currentRevision === revision ? decoration : undefined), "the rollout complete in the status");
      for (const pod of held) expectMovedInPlace(pod, watch.get(nameOf(pod))!, revision);
      for (const pod of moving) expectUntouched(settledPods.get(nameOf(pod))!, watch.get(nameOf(pod)));
      expect(workloadStatus(done, "Deployment", "web")).toMatchObject({ kind: "Deployment", name: "web", matchedPods: REPLICAS, updatedPods: REPLICAS });
      expect(done.status?.workloads).toHaveLength(1);
      expect(done.status?.matchedPods).toBe(REPLICAS);

      const report = invariants.stop();
      expect(report.maxUnavailable, worstMoment(report)).toBeLessThanOrEqual(maxUnavailable);
      expect([...report.uids].sort(), "no pod was recreated").toEqual(world.pods.map(uidOf).sort());
    } finally {
      await stopWorld(world);
    }
  });

  test("a change that needs recreation is reported and left alone; with recreatePolicy Evict a PodDisruptionBudget holds it back, then the Deployment recreates the pods with the new revision", async ({ namespace }) => {
    const world = await deploymentWorld(namespace, 4);
    const { watch } = world;
    const replicas = world.pods.length;
    const env = { LOG_LEVEL: "debug" };
    try {
      // A new env var on the sidecar: the kubelet cannot do it in place; recreatePolicy is Never.
      await apply(decorationYaml(namespace, [logger("1")], { env }));
      const revision = await nextRevision(namespace, world.revision);
      const blocked = await decorationEvent(namespace, "UpdateBlocked");
      const outdated = await decorationStatus(namespace, (decoration) => (workloadStatus(decoration, "Deployment", "web")?.outdatedPods === replicas ? decoration : undefined), `${replicas} outdated pods reported for the Deployment`);
      const workload = workloadStatus(outdated, "Deployment", "web")!;
      console.log(`[decoration-rollout] needs recreation: workload ${JSON.stringify(workload)}; event: ${blocked.message ?? ""}`);
      expect(workload).toMatchObject({ matchedPods: replicas, updatedPods: 0 });
      expect(whyNotMoving(workload), "the status says why").toMatch(/recreat/i);
      expect(outdated.status?.updatedPods).toBe(0);
      for (const pod of world.pods) expectUntouched(pod, watch.get(nameOf(pod)));
      const needsRecreation = verdict(await explainPodJson(namespace, nameOf(world.pods[0]!)), "logging");
      expect(needsRecreation).toMatchObject({ state: "outdated", podRevision: world.revision, targetRevision: revision });
      expect(needsRecreation.reasons[0]?.reason).toBe("needs-recreation");
      expect(needsRecreation.reasons[0]?.detail ?? "").not.toBe("");

      // recreatePolicy Evict under a PodDisruptionBudget that allows no disruption: refused, never forced.
      await allowNoDisruption(namespace);
      const invariants = watchUnavailable(watch, replicas, isDeploymentPod);
      await apply(decorationYaml(namespace, [logger("1")], { env, recreatePolicy: "Evict" }));
      const refused = await decorationEvent(namespace, "EvictionRefused", (message) => message.includes("eviction refused"));
      const refusedStatus = await decorationStatus(namespace, (decoration) => ((workloadStatus(decoration, "Deployment", "web")?.blockedPods ?? 0) > 0 ? decoration : undefined), "blocked pods reported for the Deployment");
      console.log(`[decoration-rollout] eviction refused: workload ${JSON.stringify(workloadStatus(refusedStatus, "Deployment", "web"))}; event: ${refused.message ?? ""}`);
      expect(whyNotMoving(workloadStatus(refusedStatus, "Deployment", "web")), "the status says why").toMatch(/evict/i);
      const verdicts = await Promise.all(world.pods.map(async (pod) => verdict(await explainPodJson(namespace, nameOf(pod)), "logging")));
      expect(verdicts.map((each) => each.state)).toEqual(world.pods.map(() => "outdated"));
      expect(verdicts.some((each) => each.reasons.some((reason) => reason.reason === "update-blocked")), JSON.stringify(verdicts)).toBe(true);
      for (const pod of world.pods) expectUntouched(pod, watch.get(nameOf(pod)));

      // The budget relaxed: evicted one at a time (maxUnavailable 1), recreated by the Deployment, injected by the webhook.
      await removeDisruptionBudget(namespace);
      const oldUids = new Set(world.pods.map(uidOf));
      const replaced = await watch.waitFor(() => {
        const pods = live(watch);
        return pods.length === replicas && pods.every((pod) => !oldUids.has(uidOf(pod)) && runsImage(pod, SIDECAR, testImage("logger", "1")) && pod.metadata?.annotations?.[REVISIONS] === recorded(revision)) ? pods : undefined;
      }, 180_000, `${replicas} new pods recording ${revision}, ready`);
      // Soft: a breach fails the test, and the checks of the recreated pods below still run.
      const report = invariants.stop();
      expect.soft(report.maxUnavailable, worstMoment(report)).toBeLessThanOrEqual(1);
      expect((await decorationEvents(namespace, "Evicted")).length).toBeGreaterThan(0);
      for (const pod of replaced) {
        expect(pod.spec?.containers.find((container) => container.name === SIDECAR)?.env).toEqual([{ name: "LOG_LEVEL", value: "debug" }]);
        const printed = await kubectl(["exec", "-n", namespace, nameOf(pod), "-c", SIDECAR, "--", "env"]);
        expect(printed.code, printed.stderr).toBe(0);
        expect(printed.stdout.split("\n"), `${nameOf(pod)}: the sidecar runs with the new env`).toContain("LOG_LEVEL=debug");
      }
      const done = await decorationStatus(namespace, (decoration) => (decoration.status?.updatedPods === replicas && decoration.status.currentRevision === revision ? decoration : undefined), "the recreation complete in the status");
      expect(workloadStatus(done, "Deployment", "web")).toMatchObject({ matchedPods: replicas, updatedPods: replicas, outdatedPods: 0, blockedPods: 0 });
    } finally {
      await stopWorld(world);
    }
  }, 360_000);

  test("explain says needs-recreation for every pod of a workload that only recreation can change, more pods than the status lists", async ({ namespace }) => {
    const world = await deploymentWorld(namespace, 11);
    try {
      await apply(decorationYaml(namespace, [logger("1")], { env: { LOG_LEVEL: "debug" } }));
      const revision = await nextRevision(namespace, world.revision);
      const status = await decorationStatus(namespace, (decoration) => (workloadStatus(decoration, "Deployment", "web")?.outdatedPods === world.pods.length ? decoration : undefined), `${world.pods.length} outdated pods reported`);
      expect(workloadStatus(status, "Deployment", "web")?.blockedPods).toBe(world.pods.length);
      const reasons = await Promise.all(world.pods.map(async (pod) => {
        const found = verdict(await explainPodJson(namespace, nameOf(pod)), "logging");
        return `${nameOf(pod)}: ${found.state} ${found.targetRevision === revision ? "" : `(target ${String(found.targetRevision)})`}${found.reasons.map((reason) => reason.reason).join(",")}`;
      }));
      expect(reasons).toEqual(world.pods.map((pod) => `${nameOf(pod)}: outdated needs-recreation`));
    } finally {
      await stopWorld(world);
    }
  });

  test("with PodOpsLifecycle in the template, each pod leaves the Service's EndpointSlice before its sidecar restarts, returns after, and no request fails", async ({ namespace }) => {
    const replicas = 3;
    const operator = await startOperator({ args: ["--lifecycle-drain-delay=2s"] });
    try {
      const figures = await rolloutUnderTraffic(namespace, replicas, () => apply(deploymentYaml(namespace, { replicas, podOpsLifecycle: true })));
      reportFigures("decoration-rollout", "Deployment with PodOpsLifecycle", replicas, figures);
      expectOutOfTrafficAroundEachRestart(figures, replicas);
      const status = (await readDecoration(namespace, "proxy")).status;
      expect(status?.updatedPods).toBe(replicas);
    } finally {
      expect(await operator.stop()).toBe(0);
    }
  });
});
