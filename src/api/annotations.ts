// The limit Kubernetes puts on an object's annotations (apimachinery's ValidateAnnotations):
// keys and values together at most 256 KiB, counted in bytes.
export const ANNOTATIONS_SIZE_LIMIT = 256 * 1024;

function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** The size Kubernetes counts for a set of annotations. */
function annotationsSize(annotations: Readonly<Record<string, unknown>>): number {
  let size = 0;
  for (const key in annotations) {
    const value = annotations[key];
    size += utf8Length(key) + (typeof value === "string" ? utf8Length(value) : 0);
  }
  return size;
}

/** A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4). */
const MAX_UTF8_BYTES_PER_UNIT = 3;

/** Whether annotations are over ANNOTATIONS_SIZE_LIMIT; counted in bytes only when their length alone cannot tell. */
export function annotationsTooLong(annotations: Readonly<Record<string, unknown>>): boolean {
  let units = 0;
  for (const key in annotations) {
    const value = annotations[key];
    units += key.length + (typeof value === "string" ? value.length : 0);
  }
  return units * MAX_UTF8_BYTES_PER_UNIT > ANNOTATIONS_SIZE_LIMIT && annotationsSize(annotations) > ANNOTATIONS_SIZE_LIMIT;
}
