// A PodDecoration (or ClusterPodDecoration) whose template uses what the cluster's Kubernetes version cannot honour is
// refused, naming the field, the version it needs and the version the API server runs
// (src/api/kubernetes-versions.ts). Checked when the spec is created or changed, so that an
// object stored before stays writable (its finalizer can always be removed).
import { formatFieldErrors } from "../api/field-errors.ts";
import { versionGatedFieldErrors, type KubernetesVersion } from "../api/kubernetes-versions.ts";
import { POD_DECORATION_KIND } from "../api/group.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import { deny } from "./admission-review.ts";
import { changesSpec } from "./decoration-privilege.ts";
import type { SynchronousAdmissionHandler } from "./server.ts";

/** `version` is the API server's as last read; undefined (not read yet, or unreadable) checks nothing. */
export function withVersionGates(structural: SynchronousAdmissionHandler, version: () => KubernetesVersion | undefined, kind = POD_DECORATION_KIND): SynchronousAdmissionHandler {
  return (request) => {
    const decision = structural(request);
    const current = version();
    if (!decision.response.allowed || current === undefined || !changesSpec(request, kind)) return decision;
    const pd = request.object as PodDecoration;
    const errors = versionGatedFieldErrors(pd.spec?.template ?? undefined, "spec.template", current);
    if (errors.length === 0) return decision;
    const name = request.name ?? pd.metadata?.name;
    return { response: deny(request.uid, 422, formatFieldErrors(kind, name, errors).join("; ")), result: "rejected" };
  };
}
