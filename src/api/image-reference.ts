// Image references as container runtimes and kubelets spell them: `nginx:1.27` is
// `docker.io/library/nginx:1.27`, a name without a tag or digest means `:latest`.

/** The fully qualified form of an image reference (`docker.io/library/` where implied, `:latest`). */
export function normalizedImageReference(image: string): string {
  let reference = image;
  const slash = reference.indexOf("/");
  const first = slash < 0 ? "" : reference.slice(0, slash);
  // A first component without '.', ':' or "localhost" is a Docker Hub path, not a registry.
  if (slash < 0 || (!first.includes(".") && !first.includes(":") && first !== "localhost")) {
    reference = `docker.io/${slash < 0 ? "library/" : ""}${reference}`;
  }
  const lastPart = reference.slice(reference.lastIndexOf("/") + 1);
  if (!lastPart.includes(":") && !lastPart.includes("@")) reference += ":latest";
  return reference;
}

/** `nginx:1.27` and `docker.io/library/nginx:1.27` name the same image, as kubelets report either. */
export function sameImage(a: string, b: string): boolean {
  return normalizedImageReference(a) === normalizedImageReference(b);
}
