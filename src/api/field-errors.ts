// Structural validation errors that name the field they are about, in the words the
// Kubernetes API server uses, so a message reads the same from the webhook, the CLI and
// `kubectl apply`.

/** One problem with one field: `path` is `spec.template.containers[0].name`, `reason` says what is wrong. */
export interface FieldError {
  path: string;
  reason: string;
}

/** `Kind/name: field.path: reason` (`Kind/name: reason` for the object itself). */
export function formatFieldError(kind: string, name: string | undefined, error: FieldError): string {
  const subject = `${kind}/${name === undefined || name === "" ? "<unnamed>" : name}`;
  return error.path === "" ? `${subject}: ${error.reason}` : `${subject}: ${error.path}: ${error.reason}`;
}

export function formatFieldErrors(kind: string, name: string | undefined, errors: readonly FieldError[]): string[] {
  return errors.map((error) => formatFieldError(kind, name, error));
}

// Field paths, rendered like apimachinery's field.Path: `a.b[0].c[key]`.

export function childPath(path: string, field: string): string {
  return path === "" ? field : `${path}.${field}`;
}

export function indexPath(path: string, index: number): string {
  return `${path}[${index}]`;
}

export function keyPath(path: string, key: string): string {
  return `${path}[${key}]`;
}

// Reasons, phrased like apimachinery's field.Error types.

export function requiredError(path: string, detail?: string): FieldError {
  return { path, reason: detail === undefined ? "Required value" : `Required value: ${detail}` };
}

export function invalidError(path: string, value: unknown, detail: string): FieldError {
  return { path, reason: `Invalid value: ${describeValue(value)}: ${detail}` };
}

export function notSupportedError(path: string, value: unknown, supported: readonly unknown[]): FieldError {
  return { path, reason: `Unsupported value: ${describeValue(value)}: supported values: ${supported.map(describeValue).join(", ")}` };
}

export function duplicateError(path: string, value: unknown): FieldError {
  return { path, reason: `Duplicate value: ${describeValue(value)}` };
}

export function forbiddenError(path: string, detail: string): FieldError {
  return { path, reason: `Forbidden: ${detail}` };
}

export function tooLongError(path: string, limit: number): FieldError {
  return { path, reason: `Too long: may not be more than ${limit} bytes` };
}

export function typeError(path: string, expected: string): FieldError {
  return { path, reason: `Invalid value: must be of type ${expected}` };
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  const json = JSON.stringify(value);
  return json === undefined ? "undefined" : json.length > 80 ? `${json.slice(0, 77)}...` : json;
}
