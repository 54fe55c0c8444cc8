// What the controllers' pod cache keeps of a pod: at 100,000 pods the cache is most of the
// controller's memory, and most of a pod (managedFields, probes, env, resources, tolerations,
// affinity, IPs) is read by no controller. Kept, because a reader needs it:
//   metadata       all but managedFields (labels, annotations, finalizers, ownerReferences,
//                  deletionTimestamp, resourceVersion, generation...)
//   spec           containers and initContainers by position with name, image, restartPolicy
//                  and volumeMounts (in-place updates patch /spec/containers/N/image; template
//                  validation's sample pod), and a fingerprint of their env in place of it
//                  (env-fingerprint.ts: what a pod runs is judged by it); volumes;
//                  readinessGates; nodeName, serviceAccountName (a PodTransitionRule webhook's
//                  parameters, with hostIP and podIP)
//   status         phase, reason, conditions (with lastTransitionTime), containerStatuses,
//                  initContainerStatuses, hostIP, podIP
// test/controller/pod-cache.test.ts checks each reader answers the same on the kept pod.
import type { Pod } from "../kube/objects.ts";
import { rememberEnvFingerprint } from "../decoration/env-fingerprint.ts";

type Container = NonNullable<NonNullable<Pod["spec"]>["containers"]>[number];

function keptContainer(container: Container): Container {
  const { name, image, restartPolicy, volumeMounts } = container;
  const kept = { name, ...(image === undefined ? {} : { image }), ...(restartPolicy === undefined ? {} : { restartPolicy }), ...(volumeMounts === undefined ? {} : { volumeMounts }) };
  rememberEnvFingerprint(kept, container.env);
  return kept;
}

/** The part of a pod the controllers read (a new object; the input is not changed). */
export function podCacheProjection(pod: Pod): Pod {
  const { managedFields: _managedFields, ...metadata } = pod.metadata ?? {};
  const spec = pod.spec;
  const status = pod.status;
  const projected: Pod = { ...(pod.apiVersion === undefined ? {} : { apiVersion: pod.apiVersion }), ...(pod.kind === undefined ? {} : { kind: pod.kind }), metadata };
  if (spec !== undefined) {
    projected.spec = {
      containers: (spec.containers ?? []).map(keptContainer),
      ...(spec.initContainers === undefined ? {} : { initContainers: spec.initContainers.map(keptContainer) }),
      ...(spec.volumes === undefined ? {} : { volumes: spec.volumes }),
      ...(spec.readinessGates === undefined ? {} : { readinessGates: spec.readinessGates }),
      ...(spec.nodeName === undefined ? {} : { nodeName: spec.nodeName }),
      ...(spec.serviceAccountName === undefined ? {} : { serviceAccountName: spec.serviceAccountName }),
    };
  }
  if (status !== undefined) {
    const { phase, reason, conditions, containerStatuses, initContainerStatuses, hostIP, podIP } = status;
    projected.status = {
      ...(phase === undefined ? {} : { phase }),
      ...(hostIP === undefined ? {} : { hostIP }),
      ...(podIP === undefined ? {} : { podIP }),
      ...(reason === undefined ? {} : { reason }),
      ...(conditions === undefined ? {} : { conditions }),
      ...(containerStatuses === undefined ? {} : { containerStatuses }),
      ...(initContainerStatuses === undefined ? {} : { initContainerStatuses }),
    };
  }
  return projected;
}
