// Wires the OperationJob reconciler to its informers: a job's own changes, and a pod's — to every
// job of its namespace that names it as a target, as the new pod of a target, or whose target it
// replaces (as kuperator's pod handlers map them) — enqueue the job's key.
import type { CollaSet } from "../../api/collaset.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { CustomResourceClient } from "../../kube/custom-objects.ts";
import { namespacedKey, type KubeObject, type Pod } from "../../kube/objects.ts";
import { PAIR_ORIGIN_NAME_LABEL } from "../collaset/pod-state.ts";
import { enqueueObjects, reconcilerController, type ControllerWiring } from "../reconciler-controller.ts";
import type { Controller } from "../runtime/controller.ts";
import { Expectations } from "../runtime/expectations.ts";
import type { Informer } from "../runtime/informer.ts";
import { NEW_POD_INFO } from "./plan.ts";
import { OperationJobReconciler, type CachedOperationJob } from "./reconciler.ts";

export interface OperationJobControllerOptions extends ControllerWiring {
  informers: { jobs: Informer<CachedOperationJob>; pods: Informer<Pod>; collaSets: Informer<CollaSet & KubeObject> };
  client: KubeClient;
}

export function operationJobController(options: OperationJobControllerOptions): Controller {
  const { jobs, pods, collaSets } = options.informers;
  const reconciler = new OperationJobReconciler({
    jobs: jobs.cache,
    pods: pods.cache,
    collaSets: collaSets.cache,
    // The custom objects client is untyped; the objects are OperationJobs.
    client: { jobs: options.client.kusion.operationJobs as unknown as CustomResourceClient<CachedOperationJob>, pods: options.client.core.pods },
    events: options.events,
    expectations: new Expectations({ clock: options.clock }),
    clock: options.clock,
    logger: options.logger.child({ controller: "operationjob" }),
  });
  const controller = reconcilerController({ ...options, name: "operationjob", reconcile: reconciler.reconcile, caches: [jobs, pods, collaSets] });
  enqueueObjects(controller, jobs);
  const podChanged = (pod: Pod) => {
    const namespace = pod.metadata?.namespace ?? "";
    const names = new Set([pod.metadata?.name ?? "", pod.metadata?.labels?.[PAIR_ORIGIN_NAME_LABEL] ?? ""]);
    for (const job of jobs.cache.list(namespace)) {
      const named = (job.spec.targets ?? []).some((target) => names.has(target.name ?? ""))
        || (job.status?.targetDetails ?? []).some((detail) => detail.extraInfo?.[NEW_POD_INFO] === pod.metadata?.name);
      if (named) controller.enqueue(namespacedKey(namespace, job.metadata.name ?? ""));
    }
  };
  controller.watch(pods, { onAdd: podChanged, onUpdate: (old, pod) => { podChanged(old); podChanged(pod); }, onDelete: podChanged });
  return controller;
}
