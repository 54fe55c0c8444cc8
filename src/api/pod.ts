// The Pod as the engine sees it: the fields it renders into are typed, every other field is
// carried through untouched. Not a CRD; the schema exists to type pods and to check the pods
// the CLI reads before rendering them.
import Type, { type Static } from "typebox";
import { childPath, duplicateError, type FieldError, indexPath, invalidError, notSupportedError, requiredError } from "./field-errors.ts";
import { ObjectMetaSchema, PodSpecSchema } from "./kubernetes.ts";
import { dns1123LabelErrors } from "./names.ts";
import { nestingErrors } from "./nesting.ts";
import { OpenObject, OpenObjectOf } from "./openapi.ts";
import { schemaChecker } from "./schema-validation.ts";

export const PodSchema = OpenObjectOf({
  apiVersion: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: Type.Optional(PodSpecSchema),
  status: Type.Optional(OpenObject()),
});
export type Pod = Static<typeof PodSchema>;

const checker = schemaChecker(PodSchema);

/**
 * The checks an offline render needs to trust a pod: its shape, `kind: Pod`, and containers
 * with unique valid names. The API server validates the rest when the pod is created.
 */
export function validatePod(value: unknown): FieldError[] {
  const tooDeep = nestingErrors(value, "");
  if (tooDeep.length > 0) return tooDeep;
  const errors = checker.errors(value, "");
  if (errors.length > 0) return errors;
  const pod = value as Pod;
  if (pod.apiVersion !== undefined && pod.apiVersion !== "v1") errors.push(notSupportedError("apiVersion", pod.apiVersion, ["v1"]));
  if (pod.kind !== undefined && pod.kind !== "Pod") errors.push(notSupportedError("kind", pod.kind, ["Pod"]));
  if (pod.spec === undefined) return [...errors, requiredError("spec")];
  if (pod.spec.containers.length === 0) errors.push(requiredError("spec.containers", "a pod needs at least one container"));
  const seen = new Set<string>();
  for (const [list, containers] of [["initContainers", pod.spec.initContainers ?? []], ["containers", pod.spec.containers]] as const) {
    containers.forEach((container, index) => {
      const path = childPath(indexPath(childPath("spec", list), index), "name");
      for (const reason of dns1123LabelErrors(container.name)) errors.push(invalidError(path, container.name, reason));
      if (seen.has(container.name)) errors.push(duplicateError(path, container.name));
      seen.add(container.name);
    });
  }
  return errors;
}
