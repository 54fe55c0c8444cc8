// What our kinds (PodDecoration, CollaSet) share around their spec and status: the object's
// schema, and its structural validation — an object, not nested too deep, null fields read as
// absent (the API server prunes them), its apiVersion and kind, metadata and spec by their
// schemas; only when all of that holds, the name and the kind's own rules for its spec. Status
// is not validated: the API server ignores it on writes.
import Type, { type TSchema } from "typebox";
import { type FieldError, invalidError, notSupportedError, requiredError } from "./field-errors.ts";
import { API_VERSION } from "./group.ts";
import { type ObjectMeta, ObjectMetaSchema } from "./kubernetes.ts";
import { nestingErrors } from "./nesting.ts";
import { withoutNullFields } from "./null-fields.ts";
import { validateObjectName } from "./pod-validation.ts";
import { schemaChecker } from "./schema-validation.ts";

/** The schema of an object of a kind with this spec and status. */
export function kindObjectSchema<Spec extends TSchema, Status extends TSchema>(spec: Spec, status: Status) {
  return Type.Object({
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: ObjectMetaSchema,
    spec,
    status: Type.Optional(status),
  });
}

export interface KindRules<Spec> {
  kind: string;
  /** The kind's apiVersion (default KusionStack's group's). */
  apiVersion?: string;
  specSchema: TSchema;
  /** What the spec's schema cannot say; called only on a spec the schema accepts. */
  validateSpec(spec: Spec): FieldError[];
}

const metadataChecker = schemaChecker(ObjectMetaSchema);

/** The validator of objects of the kind: the field errors of a value, none when it is valid. */
export function kindValidator<Spec>(rules: KindRules<Spec>): (value: unknown) => FieldError[] {
  const specChecker = schemaChecker(rules.specSchema);
  return (value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return [invalidError("", value, "must be an object")];
    const tooDeep = nestingErrors(value, "");
    if (tooDeep.length > 0) return tooDeep;
    // A null field is an absent one (the API server prunes it): never a reason to refuse.
    const object = withoutNullFields(value as Record<string, unknown>);
    const errors: FieldError[] = [];
    const apiVersion = rules.apiVersion ?? API_VERSION;
    if (object.apiVersion !== apiVersion) errors.push(notSupportedError("apiVersion", object.apiVersion, [apiVersion]));
    if (object.kind !== rules.kind) errors.push(notSupportedError("kind", object.kind, [rules.kind]));
    if (object.metadata === undefined) errors.push(requiredError("metadata"));
    else errors.push(...metadataChecker.errors(object.metadata, "metadata"));
    if (object.spec === undefined) errors.push(requiredError("spec"));
    else errors.push(...specChecker.errors(object.spec, "spec"));
    if (errors.length > 0) return errors;

    const valid = object as { metadata: ObjectMeta; spec: Spec };
    return [...validateObjectName(valid.metadata, "metadata"), ...rules.validateSpec(valid.spec)];
  };
}
