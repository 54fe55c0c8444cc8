// Kubernetes' name grammars (apimachinery/pkg/util/validation), used to validate label
// keys, label values and object names, and by the engine to check the labels it records.

// The grammars as patterns, for the CRD schemas (src/api/openapi.ts) so the API server checks
// the same; here the scanners below read them, in one pass whatever the length: a backtracking
// engine is linear on these too, but an order of magnitude slower on a 3 MiB name
// (test/api/names.test.ts checks that scanner and pattern agree).
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const HYPHEN = 0x2d;
const DOT = 0x2e;
const UNDERSCORE = 0x5f;

function isLowerAlphanumeric(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x7a);
}

function isAlphanumeric(code: number): boolean {
  return isLowerAlphanumeric(code) || (code >= 0x41 && code <= 0x5a);
}

/** DNS1123_LABEL.test(value), in one pass: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`. */
export function matchesDns1123Label(value: string): boolean {
  if (value.length === 0 || !isLowerAlphanumeric(value.charCodeAt(0)) || !isLowerAlphanumeric(value.charCodeAt(value.length - 1))) return false;
  for (let at = 1; at < value.length - 1; at++) {
    const code = value.charCodeAt(at);
    if (!isLowerAlphanumeric(code) && code !== HYPHEN) return false;
  }
  return true;
}

/**
 * DNS1123_SUBDOMAIN.test(value), in one pass: labels separated by single dots, each starting
 * and ending with an alphanumeric character.
 */
export function matchesDns1123Subdomain(value: string): boolean {
  // What came before each character: a dot stands for the start, so a label cannot start with '-'.
  let previous = DOT;
  for (let at = 0; at < value.length; at++) {
    const code = value.charCodeAt(at);
    if (code === HYPHEN) {
      if (previous === DOT) return false;
    } else if (code === DOT) {
      if (previous === DOT || previous === HYPHEN) return false;
    } else if (!isLowerAlphanumeric(code)) {
      return false;
    }
    previous = code;
  }
  return previous !== DOT && previous !== HYPHEN;
}

/** A qualified name's name part: `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, in one pass. */
function matchesQualifiedNamePart(value: string): boolean {
  if (value.length === 0 || !isAlphanumeric(value.charCodeAt(0)) || !isAlphanumeric(value.charCodeAt(value.length - 1))) return false;
  for (let at = 1; at < value.length - 1; at++) {
    const code = value.charCodeAt(at);
    if (!isAlphanumeric(code) && code !== HYPHEN && code !== UNDERSCORE && code !== DOT) return false;
  }
  return true;
}

/** LABEL_VALUE.test(value), in one pass: empty, or a qualified name's name part. */
export function matchesLabelValue(value: string): boolean {
  return value === "" || matchesQualifiedNamePart(value);
}

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const LABEL_VALUE_MAX_LENGTH = 63;
const QUALIFIED_NAME_MAX_LENGTH = 63;

/** Reasons `value` is not a DNS-1123 label (container, volume names); empty when it is one. */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > DNS1123_LABEL_MAX_LENGTH) errors.push(`must be no more than ${DNS1123_LABEL_MAX_LENGTH} characters`);
  if (!matchesDns1123Label(value)) {
    errors.push("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character");
  }
  return errors;
}

/** Reasons `value` is not a DNS-1123 subdomain (object names); empty when it is one. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX_LENGTH) errors.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`);
  if (!matchesDns1123Subdomain(value)) {
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
  if (name.length > 0 && !matchesQualifiedNamePart(name)) {
    errors.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
  }
  return errors;
}

/** Reasons `value` is not a valid label value; empty when it is one (the empty string is valid). */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > LABEL_VALUE_MAX_LENGTH) errors.push(`must be no more than ${LABEL_VALUE_MAX_LENGTH} characters`);
  if (!matchesLabelValue(value)) {
    errors.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
  }
  return errors;
}

export function isQualifiedName(value: string): boolean {
  return qualifiedNameErrors(value).length === 0;
}

export function isLabelValue(value: string): boolean {
  return value.length <= LABEL_VALUE_MAX_LENGTH && matchesLabelValue(value);
}

export function isDns1123Label(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX_LENGTH && matchesDns1123Label(value);
}

export function isDns1123Subdomain(value: string): boolean {
  return value.length <= DNS1123_SUBDOMAIN_MAX_LENGTH && matchesDns1123Subdomain(value);
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
