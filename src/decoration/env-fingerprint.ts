// A short fingerprint of a container's env, as the API server stores it: what tells whether a
// live pod's injected container has the env its recorded revision gives (running-revisions.ts),
// without the controllers' pod cache keeping every pod's env (pod-cache.ts keeps this instead).
// The API server defaults a fieldRef's apiVersion to v1 and writes a resourceFieldRef's omitted
// divisor as "0": both read as absent, so a template and the pod made from it agree. Pure.
import { hash } from "node:crypto";
import type { EnvVar } from "../api/kubernetes.ts";

const remembered = new WeakMap<object, string>();

/** The fingerprint of `env` ("" for none). */
export function envFingerprint(env: readonly EnvVar[] | null | undefined): string {
  if (!Array.isArray(env) || env.length === 0) return "";
  return hash("sha256", JSON.stringify(env.map(normalEnvVar)), "base64").slice(0, 16);
}

/** Records the fingerprint of the env a projected container no longer holds. */
export function rememberEnvFingerprint(container: object, env: readonly EnvVar[] | null | undefined): void {
  const fingerprint = envFingerprint(env);
  if (fingerprint !== "") remembered.set(container, fingerprint);
}

/** The fingerprint of a container's env: its own, or the one remembered when its env was left out. */
export function envFingerprintOf(container: { env?: readonly EnvVar[] | null | undefined }): string {
  return container.env !== undefined && container.env !== null ? envFingerprint(container.env) : (remembered.get(container) ?? "");
}

function normalEnvVar(variable: EnvVar): unknown[] {
  const from = variable.valueFrom as Record<string, Record<string, unknown> | undefined> | null | undefined;
  if (from == null) return [variable.name, variable.value ?? ""];
  const normal: Record<string, unknown> = { ...from };
  if (from.fieldRef != null) {
    const { apiVersion, ...rest } = from.fieldRef;
    normal.fieldRef = apiVersion === undefined || apiVersion === "v1" ? rest : from.fieldRef;
  }
  if (from.resourceFieldRef != null) {
    const { divisor, ...rest } = from.resourceFieldRef;
    normal.resourceFieldRef = divisor === undefined || divisor === "0" || divisor === 0 ? rest : from.resourceFieldRef;
  }
  return [variable.name, variable.value ?? "", sortedKeys(normal)];
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]));
}
