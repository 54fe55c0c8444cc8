// The Pod Security Standards held against a decoration's template: Pod Security Admission's
// rules and wording, at the level and version a namespace's labels ask for.
import { describe, expect, it } from "vitest";
import type { PodDecorationTemplate } from "../../src/api/poddecoration.ts";
import { namespacePolicy, templateViolations, type PodSecurityPolicy } from "../../src/decoration/pod-security-standards.ts";

const policy = (level: string, version = "latest"): PodSecurityPolicy => namespacePolicy({ "pod-security.kubernetes.io/enforce": level, "pod-security.kubernetes.io/enforce-version": version }, "enforce")!;

/** A sidecar that every level admits. */
const hardened = {
  name: "proxy",
  image: "proxy:1",
  securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ["ALL"] }, seccompProfile: { type: "RuntimeDefault" } },
};

function found(template: PodDecorationTemplate, level: string, version?: string): string[] {
  return templateViolations(template, policy(level, version)).map((violation) => `${violation.definite ? "refused" : "depends on the pod"} ${violation.path}: ${violation.rule} (${violation.detail})`);
}

describe("namespacePolicy", () => {
  it("reads the level and version as Pod Security Admission does, invalid enforce levels as restricted", () => {
    expect(policy("baseline")).toEqual({ level: "baseline", minor: Infinity, label: "baseline:latest" });
    expect(policy("restricted", "v1.24")).toEqual({ level: "restricted", minor: 24, label: "restricted:v1.24" });
    expect(policy("strict")).toMatchObject({ level: "restricted" });
    expect(policy("baseline", "1.24")).toMatchObject({ label: "baseline:latest" });
    expect(namespacePolicy({ "pod-security.kubernetes.io/warn": "strict" }, "warn")).toMatchObject({ level: "privileged" });
    expect(namespacePolicy({}, "enforce")).toBeUndefined();
  });
});

describe("templateViolations", () => {
  it("admits anything at privileged, and a hardened sidecar at every level", () => {
    expect(found({ containers: [{ name: "x", image: "x", securityContext: { privileged: true } }] }, "privileged")).toEqual([]);
    expect(found({ containers: [hardened], initContainers: [{ ...hardened, name: "init" }], volumes: [{ name: "v", emptyDir: {} }] }, "restricted")).toEqual([]);
  });

  it("refuses at baseline what no pod can make admissible, naming the field and the rule", () => {
    const template = {
      initContainers: [{ name: "setup", image: "x", securityContext: { privileged: true, capabilities: { add: ["NET_ADMIN", "CHOWN"] } } }],
      containers: [{
        name: "agent",
        image: "x",
        ports: [{ containerPort: 80, hostPort: 8080 }],
        livenessProbe: { httpGet: { host: "10.0.0.1", port: 80 } },
        securityContext: { seLinuxOptions: { type: "spc_t", user: "root" }, seccompProfile: { type: "Unconfined" }, appArmorProfile: { type: "Unconfined" }, windowsOptions: { hostProcess: true } },
      }],
      volumes: [{ name: "root", hostPath: { path: "/" } }],
      metadata: [{ annotations: { "container.apparmor.security.beta.kubernetes.io/agent": "unconfined" } }],
    } as PodDecorationTemplate;
    expect(found(template, "baseline")).toEqual([
      'refused spec.template.initContainers[0].securityContext.privileged: privileged (container "setup" must not set securityContext.privileged=true)',
      'refused spec.template.initContainers[0].securityContext.capabilities.add: non-default capabilities (container "setup" must not include "NET_ADMIN" in securityContext.capabilities.add)',
      'refused spec.template.containers[0].ports[0].hostPort: hostPort (container "agent" uses hostPort 8080)',
      'refused spec.template.containers[0].livenessProbe.httpGet.host: probe or lifecycle host (container "agent" uses probe or lifecycle host "10.0.0.1")',
      'refused spec.template.containers[0].securityContext.seLinuxOptions: seLinuxOptions (container "agent" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)',
      'refused spec.template.containers[0].securityContext.seccompProfile.type: seccompProfile (container "agent" must not set securityContext.seccompProfile.type to "Unconfined")',
      'refused spec.template.containers[0].securityContext.windowsOptions.hostProcess: hostProcess (container "agent" must not set securityContext.windowsOptions.hostProcess=true)',
      'refused spec.template.containers[0].securityContext.appArmorProfile.type: forbidden AppArmor profile (container "agent" must not set AppArmor profile type to "Unconfined")',
      'refused spec.template.volumes[0].hostPath: hostPath volumes (volume "root")',
      'refused spec.template.metadata[0].annotations[container.apparmor.security.beta.kubernetes.io/agent]: forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/agent=\\"unconfined\\"")',
    ]);
  });

  it("at restricted, also refuses what a container gets wrong itself, and reports what the pod's own settings decide", () => {
    const template = { containers: [{ name: "sidecar", image: "x", securityContext: { runAsUser: 0, capabilities: { add: ["NET_BIND_SERVICE", "SYS_TIME"] } } }], volumes: [{ name: "nfs", nfs: { server: "s", path: "/" } }] } as PodDecorationTemplate;
    expect(found(template, "restricted", "v1.34")).toEqual([
      'refused spec.template.containers[0].securityContext.capabilities.drop: unrestricted capabilities (container "sidecar" must set securityContext.capabilities.drop=["ALL"])',
      'refused spec.template.containers[0].securityContext.capabilities.add: unrestricted capabilities (container "sidecar" must not include "SYS_TIME" in securityContext.capabilities.add)',
      'depends on the pod spec.template.containers[0].securityContext.seccompProfile.type: seccompProfile (pod or container "sidecar" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
      'refused spec.template.containers[0].securityContext.allowPrivilegeEscalation: allowPrivilegeEscalation != false (container "sidecar" must set securityContext.allowPrivilegeEscalation=false)',
      'depends on the pod spec.template.containers[0].securityContext.runAsNonRoot: runAsNonRoot != true (pod or container "sidecar" must set securityContext.runAsNonRoot=true)',
      'refused spec.template.containers[0].securityContext.runAsUser: runAsUser=0 (container "sidecar" must not set runAsUser=0)',
      'refused spec.template.volumes[0].nfs: restricted volume types (volume "nfs" uses restricted volume type "nfs")',
    ]);
    // From 1.35 a pod in a user namespace may run as root: the pod decides.
    expect(found(template, "restricted").filter((line) => line.includes("runAsUser"))).toEqual([
      'depends on the pod spec.template.containers[0].securityContext.runAsUser: runAsUser=0 (container "sidecar" must not set runAsUser=0 (unless the pod sets hostUsers: false))',
    ]);
  });

  it("applies a rule only from the version that introduced it", () => {
    const probeHost = { containers: [{ ...hardened, readinessProbe: { tcpSocket: { host: "example.com", port: 1 } } }] } as PodDecorationTemplate;
    expect(found(probeHost, "baseline", "v1.33")).toEqual([]);
    expect(found(probeHost, "baseline", "v1.34")).toHaveLength(1);
    const capabilities = { containers: [{ name: "c", image: "x", securityContext: { ...hardened.securityContext, capabilities: { add: ["CHOWN"] } } }] } as PodDecorationTemplate;
    // Before 1.22 restricted held capabilities to baseline's rule, which allows CHOWN.
    expect(found(capabilities, "restricted", "v1.21")).toEqual([]);
    expect(found(capabilities, "restricted", "v1.22")).toHaveLength(2);
  });
});
