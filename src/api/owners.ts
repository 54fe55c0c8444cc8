// Which of our objects controls another: the controller ownerReference (metav1.GetControllerOf)
// of our group and a given kind. The one definition of "owned by a CollaSet" / "a PodDecoration's".
import { COLLASET_KIND, isOurGroup, POD_DECORATION_KIND } from "./group.ts";

interface OwnerReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

interface Owned<R extends OwnerReference> {
  metadata?: { ownerReferences?: readonly R[] };
}

/** The controller ownerReference, when it names one of our objects of `kind`. */
function controllerOfKind<R extends OwnerReference>(object: Owned<R>, kind: string): R | undefined {
  const owner = object.metadata?.ownerReferences?.find((reference) => reference.controller === true);
  return owner?.kind === kind && isOurGroup(owner.apiVersion) ? owner : undefined;
}

/** The CollaSet controlling a pod or a template revision, if one does. */
export function collaSetOwnerOf<R extends OwnerReference>(object: Owned<R>): R | undefined {
  return controllerOfKind(object, COLLASET_KIND);
}

/** The PodDecoration controlling a revision, if one does. */
export function podDecorationOwnerOf<R extends OwnerReference>(object: Owned<R>): R | undefined {
  return controllerOfKind(object, POD_DECORATION_KIND);
}
