// AdmissionReview v1: the request shape the API server sends, checked before any
// handler sees it, and the responses handlers return.
import Type, { type Static } from "typebox";
import { Compile } from "typebox/compile";
import { pointerKeys } from "../api/json-pointer.ts";
import type { UserInfo } from "./requester-trust.ts";

const GroupVersionKind = Type.Object({ group: Type.String(), version: Type.String(), kind: Type.String() });

export const AdmissionRequestSchema = Type.Object({
  uid: Type.String({ minLength: 1 }),
  kind: GroupVersionKind,
  resource: Type.Optional(Type.Object({ group: Type.String(), version: Type.String(), resource: Type.String() })),
  subResource: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  namespace: Type.Optional(Type.String()),
  operation: Type.Enum(["CREATE", "UPDATE", "DELETE", "CONNECT"]),
  userInfo: Type.Optional(Type.Object({})),
  object: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
  oldObject: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
  dryRun: Type.Optional(Type.Boolean()),
});

export const AdmissionReviewSchema = Type.Object({
  apiVersion: Type.Literal("admission.k8s.io/v1"),
  kind: Type.Literal("AdmissionReview"),
  request: AdmissionRequestSchema,
});

export type AdmissionRequest = Omit<Static<typeof AdmissionRequestSchema>, "userInfo"> & {
  /** Who asked; its fields are checked where they are read. */
  userInfo?: UserInfo;
  object?: Record<string, unknown> | null;
  oldObject?: Record<string, unknown> | null;
};

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  patchType?: "JSONPatch";
  /** base64 of a JSON Patch document */
  patch?: string;
  warnings?: string[];
  status?: { code: number; reason?: string; message: string };
}

export interface AdmissionReviewResponse {
  apiVersion: "admission.k8s.io/v1";
  kind: "AdmissionReview";
  response: AdmissionResponse;
}

const reviewValidator = Compile(AdmissionReviewSchema);

/** Returns the request, or a reason naming the first offending field. */
export function parseAdmissionReview(body: unknown): { request: AdmissionRequest } | { error: string } {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return { error: "body must be a JSON object (an admission.k8s.io/v1 AdmissionReview)" };
  }
  if (reviewValidator.Check(body)) return { request: body.request as AdmissionRequest };
  const first = reviewValidator.Errors(body)[0];
  if (first === undefined) return { error: "AdmissionReview: is not a valid admission.k8s.io/v1 AdmissionReview" };
  const path = jsonPointerToPath(first.instancePath);
  const reason = first.keyword === "enum" && "allowedValues" in first.params && Array.isArray(first.params.allowedValues)
    ? `must be one of ${first.params.allowedValues.map(String).join(", ")}`
    : first.message;
  return { error: `${path === "" ? "AdmissionReview" : path}: ${reason}` };
}

function jsonPointerToPath(pointer: string): string {
  return pointerKeys(pointer).join(".");
}

function review(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response };
}

/**
 * The AdmissionReview answering with `response`, as JSON text. The patch is base64, which has
 * nothing to escape, so it is written in as it is: JSON.stringify would scan its every
 * character again, and it is most of the answer (a few kilobytes for a typical pod).
 */
export function reviewJson(response: AdmissionResponse): string {
  const { patch, ...rest } = response;
  const text = JSON.stringify(review(rest));
  // The text ends with the closing braces of the response and of the review.
  return patch === undefined ? text : `${text.slice(0, -2)},"patch":"${patch}"}}`;
}

export function allow(uid: string, warnings: readonly string[] = []): AdmissionResponse {
  return warnings.length > 0 ? { uid, allowed: true, warnings: [...warnings] } : { uid, allowed: true };
}

export function allowWithPatch(uid: string, patch: readonly unknown[], warnings: readonly string[] = []): AdmissionResponse {
  if (patch.length === 0) return allow(uid, warnings);
  return {
    ...allow(uid, warnings),
    patchType: "JSONPatch",
    patch: Buffer.from(JSON.stringify(patch)).toString("base64"),
  };
}

export function deny(uid: string, code: number, message: string, warnings: readonly string[] = []): AdmissionResponse {
  const reason = code === 422 ? "Invalid" : code === 403 ? "Forbidden" : code >= 500 ? "InternalError" : "BadRequest";
  return {
    uid,
    allowed: false,
    status: { code, reason, message },
    ...(warnings.length > 0 ? { warnings: [...warnings] } : {}),
  };
}
