// The Pod Security Standards a PodDecoration's template is held to at admission (DESIGN §10): the
// namespace's `pod-security.kubernetes.io/enforce` level, at its `enforce-version`. Pod
// Security Admission checks each pod after every webhook has run, so a decoration that injects
// a privileged sidecar into a restricted namespace makes every pod it selects inadmissible; this
// finds that up front, with the rule broken and the field that breaks it.
//
// The rules, their names and their detail messages are those of k8s.io/pod-security-admission
// (policy/check_*.go), applied to what a template can add to a pod: init containers, sidecars,
// volumes and annotations. A rule the pod's own settings can satisfy (a pod-level runAsNonRoot
// or seccompProfile) cannot be decided here: it is reported, not refused.
import { childPath, forbiddenError, formatFieldError, indexPath } from "../api/field-errors.ts";
import type { PodDecorationTemplate } from "../api/poddecoration.ts";

export type PodSecurityLevel = "privileged" | "baseline" | "restricted";

/** A level at a version: `v1.X` as minor X, "latest" as Infinity. */
export interface PodSecurityPolicy {
  level: PodSecurityLevel;
  minor: number;
  /** As Pod Security Admission prints it, e.g. "restricted:latest". */
  label: string;
}

export const ENFORCE_LABEL = "pod-security.kubernetes.io/enforce";
export const WARN_LABEL = "pod-security.kubernetes.io/warn";

/**
 * The policy a namespace's labels ask for at `mode` (enforce or warn), or undefined when they
 * ask for none. As Pod Security Admission reads them: an unknown enforce level means
 * restricted, an unknown warn level privileged, an unknown version latest.
 */
export function namespacePolicy(labels: Readonly<Record<string, string>>, mode: "enforce" | "warn"): PodSecurityPolicy | undefined {
  const levelText = labels[`pod-security.kubernetes.io/${mode}`];
  if (levelText === undefined) return undefined;
  const known = levelText === "privileged" || levelText === "baseline" || levelText === "restricted";
  const level: PodSecurityLevel = known ? levelText : mode === "enforce" ? "restricted" : "privileged";
  const versionText = labels[`pod-security.kubernetes.io/${mode}-version`] ?? "latest";
  const match = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(versionText);
  const minor = match === null ? Infinity : Number(match[1]);
  return { level, minor, label: `${level}:${minor === Infinity ? "latest" : `v1.${minor}`}` };
}

export interface TemplateViolation {
  /** The field of the PodDecoration that breaks the rule. */
  path: string;
  /** Pod Security Admission's name for the rule, e.g. "privileged". */
  rule: string;
  detail: string;
  /**
   * False when the pod's own settings can satisfy the rule (pod-level runAsNonRoot or
   * seccompProfile): only then are the pods inadmissible.
   */
  definite: boolean;
}

type Json = Record<string, unknown>;

const BASELINE_CAPABILITIES = new Set(["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"]);
const RESTRICTED_VOLUME_SOURCES = new Set(["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret"]);
const APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/";
const SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/";

function object(value: unknown): Json | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function quote(values: readonly string[]): string {
  return values.map((value) => JSON.stringify(value)).join(", ");
}

/** Every rule of `policy` the template breaks, in template order. */
export function templateViolations(template: PodDecorationTemplate, policy: PodSecurityPolicy): TemplateViolation[] {
  if (policy.level === "privileged") return [];
  const restricted = policy.level === "restricted";
  const since = (minor: number) => policy.minor >= minor;
  const violations: TemplateViolation[] = [];
  const add = (path: string, rule: string, detail: string, definite = true) => violations.push({ path, rule, detail, definite });

  const containers: { container: Json; path: string }[] = [
    ...(template.initContainers ?? []).map((container, index) => ({ container: container, path: indexPath("spec.template.initContainers", index) })),
    ...(template.containers ?? []).map((container, index) => ({ container: container, path: indexPath("spec.template.containers", index) })),
  ];
  for (const { container, path } of containers) {
    const name = typeof container.name === "string" ? container.name : "";
    const it = `container ${JSON.stringify(name)}`;
    const context = object(container.securityContext);
    const at = (field: string) => childPath(childPath(path, "securityContext"), field);

    if (context?.privileged === true) add(at("privileged"), "privileged", `${it} must not set securityContext.privileged=true`);
    const capabilities = object(context?.capabilities);
    const added = strings(capabilities?.add);
    if (restricted && since(22)) {
      if (!strings(capabilities?.drop).includes("ALL")) add(at("capabilities.drop"), "unrestricted capabilities", `${it} must set securityContext.capabilities.drop=["ALL"]`);
      const forbidden = added.filter((capability) => capability !== "NET_BIND_SERVICE");
      if (forbidden.length > 0) add(at("capabilities.add"), "unrestricted capabilities", `${it} must not include ${quote(forbidden)} in securityContext.capabilities.add`);
    } else {
      const forbidden = added.filter((capability) => !BASELINE_CAPABILITIES.has(capability));
      if (forbidden.length > 0) add(at("capabilities.add"), "non-default capabilities", `${it} must not include ${quote(forbidden)} in securityContext.capabilities.add`);
    }
    (Array.isArray(container.ports) ? container.ports : []).forEach((port, index) => {
      const hostPort = object(port)?.hostPort;
      if (typeof hostPort === "number" && hostPort !== 0) add(childPath(indexPath(childPath(path, "ports"), index), "hostPort"), "hostPort", `${it} uses hostPort ${hostPort}`);
    });
    if (since(34)) {
      for (const [field, handler] of [
        ["livenessProbe", container.livenessProbe], ["readinessProbe", container.readinessProbe], ["startupProbe", container.startupProbe],
        ["lifecycle.postStart", object(container.lifecycle)?.postStart], ["lifecycle.preStop", object(container.lifecycle)?.preStop],
      ] as const) {
        for (const kind of ["httpGet", "tcpSocket"]) {
          const host = object(object(handler)?.[kind])?.host;
          if (typeof host === "string" && host !== "") add(childPath(childPath(childPath(path, field), kind), "host"), "probe or lifecycle host", `${it} uses probe or lifecycle host ${JSON.stringify(host)}`);
        }
      }
    }
    const procMount = context?.procMount;
    if (typeof procMount === "string" && procMount !== "Default") {
      // Baseline allows it from 1.35 in a user namespace (hostUsers: false), which the pod decides.
      const userNamespacesHelp = !(restricted && since(35)) && since(35);
      add(at("procMount"), "procMount", `${it} must not set securityContext.procMount to ${JSON.stringify(procMount)}${userNamespacesHelp ? " (unless the pod sets hostUsers: false)" : ""}`, !userNamespacesHelp);
    }
    const seLinux = object(context?.seLinuxOptions);
    if (seLinux !== undefined) {
      const allowed = new Set(["", "container_t", "container_init_t", "container_kvm_t", ...(since(31) ? ["container_engine_t"] : [])]);
      const problems = [
        ...(typeof seLinux.type === "string" && !allowed.has(seLinux.type) ? [`type ${JSON.stringify(seLinux.type)}`] : []),
        ...(typeof seLinux.user === "string" && seLinux.user !== "" ? ["user may not be set"] : []),
        ...(typeof seLinux.role === "string" && seLinux.role !== "" ? ["role may not be set"] : []),
      ];
      if (problems.length > 0) add(at("seLinuxOptions"), "seLinuxOptions", `${it} set forbidden securityContext.seLinuxOptions: ${problems.join("; ")}`);
    }
    const seccomp = object(context?.seccompProfile)?.type;
    if (since(19)) {
      if (typeof seccomp === "string" && seccomp !== "RuntimeDefault" && seccomp !== "Localhost") add(at("seccompProfile.type"), "seccompProfile", `${it} must not set securityContext.seccompProfile.type to ${JSON.stringify(seccomp)}`);
      else if (restricted && seccomp === undefined) add(at("seccompProfile.type"), "seccompProfile", `pod or ${it} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`, false);
    }
    if (object(context?.windowsOptions)?.hostProcess === true) add(at("windowsOptions.hostProcess"), "hostProcess", `${it} must not set securityContext.windowsOptions.hostProcess=true`);
    const appArmor = object(context?.appArmorProfile)?.type;
    if (typeof appArmor === "string" && appArmor !== "RuntimeDefault" && appArmor !== "Localhost") add(at("appArmorProfile.type"), "forbidden AppArmor profile", `${it} must not set AppArmor profile type to ${JSON.stringify(appArmor)}`);

    if (restricted) {
      // From 1.35 a pod in a user namespace (hostUsers: false) may run as root; the pod decides.
      const unlessUserNamespace = since(35) ? " (unless the pod sets hostUsers: false)" : "";
      if (context?.allowPrivilegeEscalation !== false) add(at("allowPrivilegeEscalation"), "allowPrivilegeEscalation != false", `${it} must set securityContext.allowPrivilegeEscalation=false`);
      if (context?.runAsNonRoot === false) add(at("runAsNonRoot"), "runAsNonRoot != true", `${it} must not set securityContext.runAsNonRoot=false${unlessUserNamespace}`, !since(35));
      else if (context?.runAsNonRoot === undefined) add(at("runAsNonRoot"), "runAsNonRoot != true", `pod or ${it} must set securityContext.runAsNonRoot=true`, false);
      if (since(23) && context?.runAsUser === 0) add(at("runAsUser"), "runAsUser=0", `${it} must not set runAsUser=0${unlessUserNamespace}`, !since(35));
    }
  }

  (template.volumes ?? []).forEach((volume, index) => {
    const path = indexPath("spec.template.volumes", index);
    const sources = Object.keys(volume).filter((key) => key !== "name" && object((volume as Json)[key]) !== undefined);
    if (restricted) {
      const forbidden = sources.filter((source) => !RESTRICTED_VOLUME_SOURCES.has(source));
      if (forbidden.length > 0) add(childPath(path, forbidden[0]!), "restricted volume types", `volume ${JSON.stringify(volume.name)} uses restricted volume type ${quote(forbidden)}`);
    } else if (sources.includes("hostPath")) {
      add(childPath(path, "hostPath"), "hostPath volumes", `volume ${JSON.stringify(volume.name)}`);
    }
  });

  (template.metadata ?? []).forEach((patch, index) => {
    for (const [key, value] of Object.entries(patch.annotations ?? {})) {
      const path = `${childPath(indexPath("spec.template.metadata", index), "annotations")}[${key}]`;
      if (key.startsWith(APPARMOR_ANNOTATION_PREFIX) && value !== "" && value !== "runtime/default" && !value.startsWith("localhost/")) {
        add(path, "forbidden AppArmor profile", `annotation must not set AppArmor profile type to ${JSON.stringify(`${key}=${JSON.stringify(value)}`)}`);
      }
      if (!since(19) && (key === SECCOMP_POD_ANNOTATION || key.startsWith(SECCOMP_CONTAINER_ANNOTATION_PREFIX)) && value !== "runtime/default" && value !== "docker/default" && !value.startsWith("localhost/")) {
        add(path, "seccompProfile", `forbidden annotation ${key}=${JSON.stringify(value)}`);
      }
    }
  });
  return violations;
}

/**
 * What the namespace's Pod Security Standards say of a template, as `Kind/name: field: reason`:
 * refusals (a rule its `enforce` level breaks whatever the pods set) and warnings (a rule the
 * pods' own settings decide, and what its `warn` level flags).
 */
export function namespaceStandards(template: PodDecorationTemplate, namespace: string, labels: Readonly<Record<string, string>>, kind: string, name: string | undefined): { refusals: string[]; warnings: string[] } {
  const enforce = namespacePolicy(labels, "enforce");
  const warn = namespacePolicy(labels, "warn");
  const enforced = enforce === undefined ? [] : templateViolations(template, enforce);
  const describe = (policy: PodSecurityPolicy, violation: TemplateViolation) => `pods in namespace ${namespace} would violate PodSecurity "${policy.label}": ${violation.rule} (${violation.detail})`;
  const refusals = enforce === undefined ? [] : enforced.filter((violation) => violation.definite).map((violation) => formatFieldError(kind, name, forbiddenError(violation.path, describe(enforce, violation))));
  const warnings = [
    // What the selected pods' own settings decide: they are refused unless they satisfy it.
    ...(enforce === undefined ? [] : enforced.map((violation) => formatFieldError(kind, name, { path: violation.path, reason: describe(enforce, violation) }))),
    ...(warn === undefined ? [] : templateViolations(template, warn).map((violation) => formatFieldError(kind, name, { path: violation.path, reason: `pods in namespace ${namespace} would get a warning from PodSecurity "${warn.label}": ${violation.rule} (${violation.detail})` }))),
  ];
  return { refusals, warnings };
}
