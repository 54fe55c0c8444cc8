import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { isAlreadyExists, isConflict, isGone, isJsonPatchNotApplied, isNotFound, statusCode, statusMessage, statusReason } from "../../src/kube/errors.ts";

const status = (code: number, reason: string, message = `${reason} happened`) =>
  new ApiException(code, "HTTP error", JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message }), {});

describe("API error helpers", () => {
  it("read the reason and message from ApiException's raw body", () => {
    const error = status(404, "NotFound", 'pods "x" not found');
    expect(statusCode(error)).toBe(404);
    expect(statusReason(error)).toBe("NotFound");
    expect(statusMessage(error)).toBe('pods "x" not found');
  });

  it("tell NotFound, Conflict, AlreadyExists and Gone apart", () => {
    const cases = [status(404, "NotFound"), status(409, "Conflict"), status(409, "AlreadyExists"), status(410, "Expired"), status(500, "InternalError")];
    expect(cases.map((error) => [isNotFound(error), isConflict(error), isAlreadyExists(error), isGone(error)])).toEqual([
      [true, false, false, false],
      [false, true, false, false],
      [false, false, true, false],
      [false, false, false, true],
      [false, false, false, false],
    ]);
  });

  it("cope with bodies that are objects, missing or not JSON", () => {
    expect(statusReason(new ApiException(409, "x", { reason: "Conflict" }, {}))).toBe("Conflict");
    expect(isConflict(new ApiException(409, "x", undefined, {}))).toBe(true);
    expect(statusReason(new ApiException(500, "x", "<html>", {}))).toBeUndefined();
    expect(statusMessage(new Error("socket hang up"))).toBe("socket hang up");
    expect(isNotFound("nope")).toBe(false);
    expect(isGone({ statusCode: 410 })).toBe(true);
  });

  it("tell a JSON Patch that did not apply from a validation error", () => {
    // What kube-apiserver answers for a failed `test` operation, byte for byte.
    const notApplied = new ApiException(422, "HTTP error", '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422}', {});
    const invalid = new ApiException(422, "HTTP error", JSON.stringify({
      kind: "Status", code: 422, reason: "Invalid", message: 'Pod "web-1" is invalid: spec.containers[0].image: Required value',
      details: { name: "web-1", kind: "Pod", causes: [{ reason: "FieldValueRequired", message: "Required value", field: "spec.containers[0].image" }] },
    }), {});
    expect([isJsonPatchNotApplied(notApplied), isJsonPatchNotApplied(invalid), isJsonPatchNotApplied(status(409, "Conflict"))]).toEqual([true, false, false]);
  });
});
