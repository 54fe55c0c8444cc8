// Who may write pod-decorator's bookkeeping on a pod (DESIGN §5, §10): the revisions annotation
// and the `pd-<name>` labels say which decorations a pod already has, so whoever could write
// them could opt a pod out of every decoration. They count only when the pod is created by the
// controller's own identity (the CollaSet controller renders its pods itself); from anyone
// else they are removed before rendering, and the decorations apply.
import { CLUSTER_REVISIONS_ANNOTATION, INJECTED_CONTAINERS_ANNOTATION, isDecorationLabel, REVISIONS_ANNOTATION } from "../decoration/recording.ts";

/** authentication/v1 UserInfo as an AdmissionRequest carries it (untrusted JSON: check types). */
export interface UserInfo {
  username?: unknown;
  uid?: unknown;
  groups?: unknown;
  extra?: unknown;
}

/** Decides whether a request comes from the controller itself. */
export type RequesterTrust = (userInfo: UserInfo | undefined) => boolean;

/** Trusts exactly these usernames (the controller's, e.g. system:serviceaccount:NS:NAME). */
export function trustUsernames(usernames: Iterable<string>): RequesterTrust {
  const trusted = new Set([...usernames].filter((name) => name !== ""));
  return (userInfo) => typeof userInfo?.username === "string" && trusted.has(userInfo.username);
}

/** Trusts nobody: every pod's bookkeeping is ignored. */
export const trustNobody: RequesterTrust = () => false;

export function requesterName(userInfo: UserInfo | undefined): string {
  return typeof userInfo?.username === "string" && userInfo.username !== "" ? userInfo.username : "an unidentified requester";
}

interface Metadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The bookkeeping a pod carries: the annotations' values and the decoration labels, as `key=value`. */
export function recordingOf(metadata: Metadata | undefined): { annotation: string | undefined; cluster: string | undefined; injected: string | undefined; labels: string[] } {
  const labels = Object.entries(metadata?.labels ?? {})
    .filter(([key]) => isDecorationLabel(key))
    .map(([key, value]) => `${key}=${value}`)
    .sort();
  const annotations = metadata?.annotations;
  return { annotation: annotations?.[REVISIONS_ANNOTATION], cluster: annotations?.[CLUSTER_REVISIONS_ANNOTATION], injected: annotations?.[INJECTED_CONTAINERS_ANNOTATION], labels };
}

export function hasRecording(metadata: Metadata | undefined): boolean {
  const recording = recordingOf(metadata);
  return recording.annotation !== undefined || recording.cluster !== undefined || recording.injected !== undefined || recording.labels.length > 0;
}

/** The same metadata without the revisions and injected-containers annotations and the decoration labels (a new object). */
export function withoutRecording<M extends Metadata>(metadata: M): M {
  const result: M = { ...metadata };
  if (metadata.annotations !== undefined) {
    const { [REVISIONS_ANNOTATION]: _recorded, [CLUSTER_REVISIONS_ANNOTATION]: _cluster, [INJECTED_CONTAINERS_ANNOTATION]: _injected, ...annotations } = metadata.annotations;
    result.annotations = annotations;
  }
  if (metadata.labels !== undefined) {
    result.labels = Object.fromEntries(Object.entries(metadata.labels).filter(([key]) => !isDecorationLabel(key)));
  }
  return result;
}
