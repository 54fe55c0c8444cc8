// Reading API errors the way apimachinery's errors.IsNotFound & co. do: by the HTTP code
// and the Status `reason` in the raw body of @kubernetes/client-node's ApiException.

interface StatusBody {
  reason?: string;
  message?: string;
  code?: number;
  details?: { causes?: readonly unknown[] };
}

function statusBody(error: unknown): StatusBody | undefined {
  if (error === null || typeof error !== "object") return undefined;
  const body = (error as { body?: unknown }).body;
  if (typeof body === "string") {
    try {
      const parsed: unknown = JSON.parse(body);
      return parsed !== null && typeof parsed === "object" ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  return body !== null && typeof body === "object" ? body : undefined;
}

/** The HTTP status code of an API error (ApiException `.code`, a watch `statusCode`), if any. */
export function statusCode(error: unknown): number | undefined {
  if (error === null || typeof error !== "object") return undefined;
  const { code, statusCode: watchCode } = error as { code?: unknown; statusCode?: unknown };
  if (typeof code === "number") return code;
  if (typeof watchCode === "number") return watchCode;
  return statusBody(error)?.code;
}

/** The metav1.Status reason (NotFound, Conflict, AlreadyExists, Expired, …), if the body has one. */
export function statusReason(error: unknown): string | undefined {
  return statusBody(error)?.reason;
}

/** The API server's own message when there is one, else the error's. */
export function statusMessage(error: unknown): string {
  const message = statusBody(error)?.message;
  if (message !== undefined) return message;
  return error instanceof Error ? error.message : String(error);
}

export function isNotFound(error: unknown): boolean {
  return statusCode(error) === 404 || statusReason(error) === "NotFound";
}

export function isConflict(error: unknown): boolean {
  return statusCode(error) === 409 && statusReason(error) !== "AlreadyExists";
}

export function isAlreadyExists(error: unknown): boolean {
  return statusReason(error) === "AlreadyExists";
}

/** 410: the resourceVersion is too old (watch) or the continue token expired (list). */
export function isGone(error: unknown): boolean {
  const reason = statusReason(error);
  return statusCode(error) === 410 || reason === "Expired" || reason === "Gone";
}

/**
 * A JSON Patch that did not apply to the stored object (a `test` that no longer holds, a path
 * that is gone): the API server answers 422 without causes, where a validation error lists
 * them. The object is not what the patch was computed from.
 */
export function isJsonPatchNotApplied(error: unknown): boolean {
  return statusCode(error) === 422 && (statusBody(error)?.details?.causes ?? []).length === 0;
}

/**
 * A write that lost a race: the object changed since the cache showed it (a guarding `test`
 * no longer holds, a precondition conflicts). The change that won shows in the cache and
 * requeues the object; it is neither a failure nor worth an event.
 */
export function isLostRace(error: unknown): boolean {
  return isConflict(error) || isJsonPatchNotApplied(error);
}
