import { describe, expect, it } from "vitest";
import { replicaIdentity, TOKEN_VOLUME_PLACEHOLDER } from "../../src/webhook/replica-identity.ts";
import { replica } from "./replica-fixture.ts";

describe("a pod's identity as a replica of its template", () => {
  it("is the same for replicas that differ in their token volume's name and their managed fields' time", () => {
    const first = replicaIdentity(replica("kube-api-access-7qm2x"));
    const second = replicaIdentity(replica("kube-api-access-b4k9z", "2026-11-24T21:00:01Z"));
    expect(first.text).toBe(second.text);
    expect([first.tokenVolume, second.tokenVolume]).toEqual(["kube-api-access-7qm2x", "kube-api-access-b4k9z"]);
    expect(first.text).not.toContain("kube-api-access");
    expect(first.text.split(TOKEN_VOLUME_PLACEHOLDER)).toHaveLength(4);
    expect(first.text).not.toContain("managedFields");
  });

  it("tells pods apart by anything else", () => {
    expect(replicaIdentity(replica("kube-api-access-7qm2x", undefined, { track: "canary" })).text).not.toBe(replicaIdentity(replica("kube-api-access-7qm2x")).text);
  });

  it("keeps the name when the pod mentions another token volume name, or has two of them", () => {
    const mentioning = replica("kube-api-access-7qm2x", undefined, { note: "kube-api-access-b4k9z" });
    expect(replicaIdentity(mentioning)).toMatchObject({ tokenVolume: undefined });
    expect(replicaIdentity(mentioning).text).toContain("kube-api-access-7qm2x");
    const two = replica("kube-api-access-7qm2x");
    two.spec.volumes.push({ ...two.spec.volumes[0]!, name: "kube-api-access-b4k9z" });
    expect(replicaIdentity(two).tokenVolume).toBeUndefined();
  });

  it("leaves a volume of a user's own choosing alone", () => {
    expect(replicaIdentity(replica("kube-api-access-custom")).tokenVolume).toBeUndefined();
  });
});
