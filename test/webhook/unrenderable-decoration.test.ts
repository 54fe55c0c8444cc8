// A decoration that would make the pod one the API server refuses (here: a mount of a volume
// the pod must provide and does not) is never rendered: the pod webhook refuses the pod, or
// admits it undecorated with a warning, as onDecorationError says — never an invalid pod.
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustNobody } from "../../src/webhook/requester-trust.ts";
import type { DecorationSource } from "../../src/decoration/updated-revisions.ts";

const decoration: PodDecoration = {
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "PodDecoration",
  metadata: { name: "certs", namespace: "team-a", uid: "uid-certs", creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: { selector: {}, template: { primaryContainers: [{ volumeMounts: [{ name: "tls", mountPath: "/etc/tls" }] }] } },
};

const source: DecorationSource = { decorations: () => [decoration], revisionData: () => undefined };

function request(volumes: unknown[]): AdmissionRequest {
  return {
    uid: "u1",
    kind: { group: "", version: "v1", kind: "Pod" },
    operation: "CREATE",
    namespace: "team-a",
    object: { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { containers: [{ name: "app", image: "web:1" }], volumes } },
  };
}

describe("a decoration that cannot be rendered into the pod", () => {
  it("is refused with the reason, under onDecorationError=reject", () => {
    const { response, result } = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody })(request([]));
    expect(result).toBe("error");
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toMatch(/PodDecoration team-a\/certs: rendering revision \S+ into this pod would make a pod the API server refuses: spec\.containers\[app\]\.volumeMounts\[\/etc\/tls\]\.name: Not found: volume "tls"/);
  });

  it("leaves the pod undecorated, with a warning, under onDecorationError=admit", () => {
    const { response } = podMutation({ source, onDecorationError: "admit", trustRequester: trustNobody })(request([]));
    expect(response.allowed).toBe(true);
    expect(response.patch).toBeUndefined();
    expect(response.warnings).toEqual([expect.stringMatching(/volume "tls".*; the pod was admitted undecorated$/)]);
  });

  it("is rendered into a pod that provides the volume", () => {
    const { response, result } = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody })(request([{ name: "tls", secret: { secretName: "tls" } }]));
    expect(result).toBe("injected");
    expect(response.allowed).toBe(true);
  });
});
