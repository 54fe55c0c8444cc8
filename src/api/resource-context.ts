// ResourceContext (apps.kusionstack.io/v1alpha1, kube-api's resourcecontext_types.go): where
// kuperator records the instance ids of a CollaSet's pods, one entry per id with string data
// (the owner's name under "Owner", the revision, replace pairs). A CollaSet's context is named
// after it, or after scaleStrategy.context, which CollaSets share to take ids from one pool. No
// status, as in kuperator's CRD. The schema is the type and the CRD schema.
import Type, { type Static } from "typebox";
import { StringMap } from "./openapi.ts";

export const RESOURCE_CONTEXT_PLURAL = "resourcecontexts";

export const ContextDetailSchema = Type.Object({
  id: Type.Integer({ description: "An instance id (the pod label collaset.kusionstack.io/instance-id)." }),
  data: Type.Optional(StringMap({ description: "What is recorded of the id: its owner (Owner), revision, replace pair." })),
});
export type ContextDetail = Static<typeof ContextDetailSchema>;

export const ResourceContextSpecSchema = Type.Object({
  contexts: Type.Optional(Type.Array(ContextDetailSchema)),
});
export type ResourceContextSpec = Static<typeof ResourceContextSpecSchema>;
