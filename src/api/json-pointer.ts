// JSON Pointer (RFC 6901), as JSON Patch paths are written: shared by the webhook's patches and
// the controllers' writes, and free of the API client, so that the webhook's code loads none of it.

/** The keys a JSON Pointer names, in order, unescaped; "" (the whole document) names none. */
export function pointerKeys(pointer: string): string[] {
  return pointer === "" ? [] : pointer.slice(1).split("/").map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** A key as one segment of a JSON Pointer (RFC 6901): `~` and `/` escaped. */
export function pointerSegment(key: string): string {
  return key.includes("~") || key.includes("/") ? key.replaceAll("~", "~0").replaceAll("/", "~1") : key;
}
