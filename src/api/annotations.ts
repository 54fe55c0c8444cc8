// The limit Kubernetes puts on an object's annotations (apimachinery's ValidateAnnotations):
// keys and values together at most 256 KiB, counted in bytes.
export const ANNOTATIONS_SIZE_LIMIT = 256 * 1024;

function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** The size Kubernetes counts for a set of annotations. */
export function annotationsSize(annotations: Readonly<Record<string, unknown>>): number {
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) size += utf8Length(key) + (typeof value === "string" ? utf8Length(value) : 0);
  return size;
}
