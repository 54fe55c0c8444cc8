// The AdmissionReview text the server answers with: JSON that reads back as the review of the
// handler's response, the patch (written in without JSON.stringify) included.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { allow, allowWithPatch, deny, reviewJson, type AdmissionResponse } from "../../src/webhook/admission-review.ts";

const asReview = (response: AdmissionResponse) => ({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response });

describe("reviewJson", () => {
  it("reads back as the review of any response, with or without a patch", () => {
    const operation = fc.record({ op: fc.constant("add" as const), path: fc.string().map((path) => `/${path}`), value: fc.jsonValue() });
    fc.assert(fc.property(fc.string({ minLength: 1 }), fc.array(fc.string()), fc.array(operation), (uid, warnings, patch) => {
      for (const response of [allowWithPatch(uid, patch, warnings), allow(uid, warnings), deny(uid, 500, "a reason", warnings)]) {
        expect(JSON.parse(reviewJson(response))).toEqual(JSON.parse(JSON.stringify(asReview(response))));
      }
    }));
  });

  it("carries the patch as base64 of the JSON Patch", () => {
    const patch = [{ op: "add", path: "/metadata/labels", value: { "a/b": "\"quoted\" ünïcode" } }];
    const { response } = JSON.parse(reviewJson(allowWithPatch("uid-1", patch))) as { response: { patch: string; patchType: string } };
    expect(response.patchType).toBe("JSONPatch");
    expect(JSON.parse(Buffer.from(response.patch, "base64").toString("utf8"))).toEqual(patch);
  });
});
