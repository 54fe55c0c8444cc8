// Asking the API server who someone is and what they may do: SelfSubjectReview (our own
// identity, which every authenticated user may ask for) and SubjectAccessReview (whether a
// requester may do something; needs `create subjectaccessreviews`).
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { apiClient } from "./api-client.ts";

/** The username this client's credentials authenticate as (e.g. system:serviceaccount:NS:NAME). */
export async function whoAmI(config: KubeConfig): Promise<string> {
  const review = await apiClient(config, AuthenticationV1Api).createSelfSubjectReview({
    body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  });
  const username = review.status?.userInfo?.username;
  if (username === undefined || username === "") throw new Error("the API server's SelfSubjectReview named no user");
  return username;
}

/** A user as an AdmissionRequest names them. */
export interface Subject {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ResourceAction {
  namespace: string;
  verb: string;
  group: string;
  resource: string;
  /** One object by name; absent for any object of the resource. */
  name?: string;
}

export interface AccessDecision {
  allowed: boolean;
  /** The authorizer's reason, when it gave one. */
  reason?: string;
}

export type AccessReviewer = (subject: Subject, action: ResourceAction) => Promise<AccessDecision>;

export function subjectAccessReviewer(config: KubeConfig): AccessReviewer {
  const api = apiClient(config, AuthorizationV1Api);
  return async (subject, action) => {
    const review = await api.createSubjectAccessReview({
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user: subject.username,
          ...(subject.uid === undefined ? {} : { uid: subject.uid }),
          ...(subject.groups === undefined ? {} : { groups: subject.groups }),
          ...(subject.extra === undefined ? {} : { extra: subject.extra }),
          resourceAttributes: {
            namespace: action.namespace,
            verb: action.verb,
            group: action.group,
            resource: action.resource,
            ...(action.name === undefined ? {} : { name: action.name }),
          },
        },
      },
    });
    const reason = review.status?.reason;
    return { allowed: review.status?.allowed === true, ...(reason === undefined || reason === "" ? {} : { reason }) };
  };
}
