// Kubernetes' name grammars (apimachinery/pkg/util/validation), used to validate label
// keys, label values and object names, and by the engine to check the labels it records.

// Exported for the CRD schemas (src/api/openapi.ts), so the API server checks the same
// grammar. Each is linear for a backtracking engine: anchored at the start, and the one star's
// class either excludes what follows it (the '.' between subdomain labels) or meets only `$`.
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const LABEL_VALUE_MAX_LENGTH = 63;
const QUALIFIED_NAME_MAX_LENGTH = 63;

/** Reasons `value` is not a DNS-1123 label (container, volume names); empty when it is one. */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > DNS1123_LABEL_MAX_LENGTH) errors.push(`must be no more than ${DNS1123_LABEL_MAX_LENGTH} characters`);
  if (!DNS1123_LABEL.test(value)) {
    errors.push("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character");
  }
  return errors;
}

/** Reasons `value` is not a DNS-1123 subdomain (object names); empty when it is one. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX_LENGTH) errors.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`);
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errors.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character");
  }
  return errors;
}

/** Reasons `value` is not a qualified name (label and annotation keys); empty when it is one. */
export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split("/");
  let name: string;
  const errors: string[] = [];
  if (parts.length === 1) {
    name = value;
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    name = parts[1] ?? "";
    if (prefix.length === 0) errors.push("prefix part must be non-empty");
    else for (const error of dns1123SubdomainErrors(prefix)) errors.push(`prefix part ${error}`);
  } else {
    return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/'"];
  }
  if (name.length === 0) errors.push("name part must be non-empty");
  else if (name.length > QUALIFIED_NAME_MAX_LENGTH) errors.push(`name part must be no more than ${QUALIFIED_NAME_MAX_LENGTH} characters`);
  if (name.length > 0 && !QUALIFIED_NAME_PART.test(name)) {
    errors.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
  }
  return errors;
}

/** Reasons `value` is not a valid label value; empty when it is one (the empty string is valid). */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > LABEL_VALUE_MAX_LENGTH) errors.push(`must be no more than ${LABEL_VALUE_MAX_LENGTH} characters`);
  if (!LABEL_VALUE.test(value)) {
    errors.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
  }
  return errors;
}

export function isQualifiedName(value: string): boolean {
  return qualifiedNameErrors(value).length === 0;
}

export function isLabelValue(value: string): boolean {
  return value.length <= LABEL_VALUE_MAX_LENGTH && LABEL_VALUE.test(value);
}

export function isDns1123Label(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX_LENGTH && DNS1123_LABEL.test(value);
}

export function isDns1123Subdomain(value: string): boolean {
  return value.length <= DNS1123_SUBDOMAIN_MAX_LENGTH && DNS1123_SUBDOMAIN.test(value);
}

/** Reasons `value` is not an environment variable name (relaxed validation, GA in Kubernetes 1.34). */
export function envVarNameErrors(value: string): string[] {
  if (value.length === 0) return ["environment variable name must be non-empty"];
  // Printable ASCII other than '='.
  return /^[\x20-\x3c\x3e-\x7e]+$/.test(value) ? [] : ["a valid environment variable name must consist only of printable ASCII characters other than '='"];
}

/** Reasons `value` is not a port name (IANA_SVC_NAME); empty when it is one. */
export function portNameErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 15) errors.push("must be no more than 15 characters");
  if (!/^[-a-z0-9]+$/.test(value)) errors.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(value)) errors.push("must contain at least one letter (a-z)");
  if (value.includes("--")) errors.push("must not contain consecutive hyphens");
  if (value.startsWith("-") || value.endsWith("-")) errors.push("must not begin or end with a hyphen");
  return errors;
}

/** Reasons `value` is not a ConfigMap or Secret key; empty when it is one. */
export function configMapKeyErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX_LENGTH) errors.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`);
  if (!/^[-._a-zA-Z0-9]+$/.test(value)) errors.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.'");
  errors.push(...chDirPrefixErrors(value));
  return errors;
}

/** Reasons `value` is not an HTTP header name as Go's HTTP library reads one. */
export function httpHeaderNameErrors(value: string): string[] {
  return /^[-A-Za-z0-9]+$/.test(value) ? [] : ["a valid HTTP header must consist of alphanumeric characters or '-'"];
}

function chDirPrefixErrors(value: string): string[] {
  if (value === ".") return ["must not be '.'"];
  if (value === "..") return ["must not be '..'"];
  return value.startsWith("..") ? ["must not start with '..'"] : [];
}
