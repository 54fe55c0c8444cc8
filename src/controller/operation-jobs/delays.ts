// The one delay an OperationJob asks for (operationDelaySeconds): a pod it replaces waits that
// long, once out of traffic, before its owner deletes it — in place of the owner's delay. Read by
// PodOpsLifecycle (update-steps.ts) from the jobs' cache.
import type { Pod } from "../../kube/objects.ts";
import { REPLACE_ACTION } from "../../api/operationjob.ts";
import type { Lister } from "../runtime/cache.ts";
import { isJobFinished } from "./plan.ts";
import type { CachedOperationJob } from "./reconciler.ts";

export function operationDelayFor(jobs: Pick<Lister<CachedOperationJob>, "list">): (pod: Pod) => number | undefined {
  return (pod) => {
    const name = pod.metadata?.name ?? "";
    const delays = jobs.list(pod.metadata?.namespace ?? "")
      .filter((job) => job.metadata.deletionTimestamp == null && job.spec.action === REPLACE_ACTION && job.spec.operationDelaySeconds !== undefined && !isJobFinished(job.status))
      .filter((job) => (job.spec.targets ?? []).some((target) => target.name === name))
      .map((job) => job.spec.operationDelaySeconds! * 1000);
    return delays.length === 0 ? undefined : Math.max(...delays);
  };
}
