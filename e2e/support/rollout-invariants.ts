// Watches a CollaSet's pods (or another workload's) through a rollout and remembers every breach
// of what must hold at every moment, not just at the end: never two live pods with one instance
// id, never more instance slots (pods) without an available pod than maxUnavailable allows. The
// watch sees pods in the API server's order, so a controller acting on what it had seen cannot
// look worse here.
import { isAvailable, isTerminating } from "../../src/controller/pod-availability.ts";
import { inLifecycle } from "../../src/controller/lifecycle/pod-ops-lifecycle.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { INSTANCE_ID, isCollaSetPod } from "./collaset-world.ts";
import type { PodWatch } from "./pod-watch.ts";

export interface InvariantReport {
  /** "id 3: pod-a, pod-b" for each moment an instance id had two live pods. */
  duplicates: string[];
  /** The most slots (ids 0..replicas-1) seen at once without an available pod. */
  maxUnavailable: number;
  /** Those slots at that moment, as "id: pod (why)", for a failure message. */
  worstMoment: string[];
  /** Every pod uid the CollaSet had during the watch (recreations add to it). */
  uids: Set<string>;
  /** Every pod state seen, in order, up to the worst moment (for a failure message). */
  trace: string[];
}

/** The worst moment and the pod states that led to it, as an assertion message. */
export function worstMoment(report: InvariantReport): string {
  return `at worst: ${report.worstMoment.join("; ")}\nthe last pod states before it (resourceVersion, pod, …):\n${report.trace.slice(-40).join("\n")}`;
}

export function watchInvariants(watch: PodWatch, replicas: number): { report(): InvariantReport; stop(): InvariantReport } {
  return watchWorst(watch, (report) => {
    const pods = watch.pods().filter(isCollaSetPod);
    const live = new Map<string, Pod[]>();
    for (const pod of pods) {
      report.uids.add(pod.metadata?.uid ?? "");
      if (isTerminating(pod)) continue;
      const id = pod.metadata?.labels?.[INSTANCE_ID] ?? "(none)";
      live.set(id, [...(live.get(id) ?? []), pod]);
    }
    for (const [id, list] of live) {
      if (list.length > 1) report.duplicates.push(`id ${id}: ${list.map((pod) => pod.metadata?.name ?? "").sort().join(", ")}`);
    }
    const unavailable: string[] = [];
    for (let id = 0; id < replicas; id++) {
      const pods = live.get(String(id)) ?? [];
      if (!pods.some(isAvailable)) unavailable.push(`${id}: ${pods.map((pod) => `${pod.metadata?.name ?? ""} (${whyUnavailable(pod)})`).join(", ") || "no live pod"}`);
    }
    return unavailable;
  });
}

/**
 * The same watch for a workload of another kind (a Deployment's pods, a Job's): of the `replicas`
 * pods it should have, how many are not available at once — live pods that are not, and pods
 * missing (one evicted and not yet replaced). Instance ids do not apply (duplicates stay empty).
 */
export function watchUnavailable(watch: PodWatch, replicas: number, belongs: (pod: Pod) => boolean): { report(): InvariantReport; stop(): InvariantReport } {
  return watchWorst(watch, (report) => {
    const live = watch.pods().filter(belongs).filter((pod) => {
      report.uids.add(pod.metadata?.uid ?? "");
      return !isTerminating(pod);
    });
    const unavailable = live.filter((pod) => !isAvailable(pod)).map((pod) => `${pod.metadata?.name ?? ""} (${whyUnavailable(pod)})`);
    const missing = Array.from({ length: Math.max(0, replicas - live.length) }, () => "a missing pod");
    // A surge pod (more live than replicas) makes up for an unavailable one.
    return [...unavailable, ...missing].slice(0, Math.max(0, replicas - (live.length - unavailable.length)));
  });
}

/** Re-measures at every pod event and keeps the worst moment: the most unavailable, and the trace up to it. */
function watchWorst(watch: PodWatch, measure: (report: InvariantReport) => string[]): { report(): InvariantReport; stop(): InvariantReport } {
  const report: InvariantReport = { duplicates: [], maxUnavailable: 0, worstMoment: [], uids: new Set(), trace: [] };
  const trace: string[] = [];
  const check = (changed?: Pod) => {
    if (changed !== undefined) trace.push(podLine(changed));
    const unavailable = measure(report);
    if (unavailable.length > report.maxUnavailable) {
      report.maxUnavailable = unavailable.length;
      report.worstMoment = unavailable;
      report.trace = [...trace];
    }
  };
  check();
  const remove = watch.onPod((pod) => check(pod));
  return {
    report: () => report,
    stop: () => {
      remove();
      return report;
    },
  };
}

function whyUnavailable(pod: Pod): string {
  if (pod.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") !== true) return "not ready";
  if (inLifecycle(pod)) return "in a PodOpsLifecycle operation";
  return "running another image than its spec names";
}

/** One pod state: resourceVersion, name, instance id, sidecar images in the spec and running, readiness. */
function podLine(pod: Pod): string {
  const sidecars = (list: readonly { name: string; image?: string }[] | undefined) => list?.filter((container) => container.name !== "app").map((container) => container.image ?? "").join("+") ?? "-";
  const ready = pod.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;
  return `${pod.metadata?.resourceVersion ?? ""} ${pod.metadata?.name ?? ""} id=${pod.metadata?.labels?.[INSTANCE_ID] ?? ""} spec=${sidecars(pod.spec?.containers)} running=${sidecars(pod.status?.containerStatuses)}${ready ? " ready" : ""}${isTerminating(pod) ? " terminating" : ""}`;
}
