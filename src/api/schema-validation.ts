// Runs a TypeBox schema against untrusted JSON and reports what is wrong as FieldErrors with
// Kubernetes-style paths and reasons (the validator's own messages are JSON-Schema speak).
import type { TSchema } from "typebox";
import { Compile, type Validator } from "typebox/compile";
import type { TLocalizedValidationError } from "typebox/error";
import { pointerKeys } from "./json-pointer.ts";
import { childPath, type FieldError, indexPath, invalidError, keyPath, notSupportedError, requiredError, typeError } from "./field-errors.ts";

/** A compiled schema that reports FieldErrors rooted at `basePath`. */
export interface SchemaChecker {
  errors(value: unknown, basePath: string): FieldError[];
}

export function schemaChecker(schema: TSchema): SchemaChecker {
  let validator: Validator | undefined;
  return {
    errors(value, basePath) {
      // Compiled on first use: module load stays cheap for commands that never validate.
      validator ??= Compile(schema);
      if (validator.Check(value)) return [];
      return toFieldErrors(validator.Errors(value), value, basePath);
    },
  };
}

function toFieldErrors(raw: readonly TLocalizedValidationError[], root: unknown, basePath: string): FieldError[] {
  // A failed anyOf (int-or-string) also reports each failed branch; the anyOf error says it all.
  const anyOfPaths = raw.filter((error) => error.keyword === "anyOf").map((error) => `${error.schemaPath}/anyOf/`);
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of raw) {
    if (anyOfPaths.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    // Maps (labels, annotations) report a bad value twice: at the value, and as the map's
    // "additional property" failing; the first says which key.
    if (error.keyword === "additionalProperties") continue;
    // Names and label values carry their grammar in the schema for the API server (openapi.ts);
    // here the rules in names.ts judge them after the schema, with Kubernetes' own reasons.
    if (error.keyword === "pattern" || error.keyword === "maxLength") continue;
    for (const fieldError of translate(error, root, basePath)) {
      const id = `${fieldError.path}\u0000${fieldError.reason}`;
      if (seen.has(id)) continue;
      seen.add(id);
      errors.push(fieldError);
    }
  }
  return errors;
}

function translate(error: TLocalizedValidationError, root: unknown, basePath: string): FieldError[] {
  const { path, value } = resolve(root, error.instancePath, basePath, error.schemaPath.endsWith("/additionalProperties"));
  switch (error.keyword) {
    case "required":
      return error.params.requiredProperties.map((property) => requiredError(childPath(path, property)));
    case "type":
      return [typeError(path, typeName(error.params.type))];
    case "enum":
      return [notSupportedError(path, value, error.params.allowedValues)];
    case "minimum":
      return [invalidError(path, value, `must be greater than or equal to ${String(error.params.limit)}`)];
    case "maximum":
      return [invalidError(path, value, `must be less than or equal to ${String(error.params.limit)}`)];
    case "anyOf":
      return [invalidError(path, value, "must be an integer or a string")];
    default:
      return [invalidError(path, value, error.message)];
  }
}

function typeName(type: string | string[]): string {
  return Array.isArray(type) ? type.join(" or ") : type;
}

/**
 * Follows a JSON pointer through the value, rendering the path as `a.b[0].c`; map keys (the
 * last segment when the failing schema is a map's value schema) render as `labels[key]`.
 */
function resolve(root: unknown, pointer: string, basePath: string, lastIsMapKey: boolean): { path: string; value: unknown } {
  let path = basePath;
  let value = root;
  if (pointer === "") return { path, value };
  const segments = pointerKeys(pointer);
  segments.forEach((segment, index) => {
    if (Array.isArray(value)) {
      path = indexPath(path, Number(segment));
      value = value[Number(segment)] as unknown;
      return;
    }
    const isMapKey = (lastIsMapKey && index === segments.length - 1) || !/^[A-Za-z_$][\w$]*$/.test(segment);
    path = isMapKey ? keyPath(path, segment) : childPath(path, segment);
    value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[segment] : undefined;
  });
  return { path, value };
}
