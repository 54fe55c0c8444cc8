// A list item the renderer can read. The API server never sends a null item in a pod's lists,
// but a pod from a file may hold one; such an item is carried through where it is and never
// read, so rendering cannot fail on it (DESIGN §10).
export function isPresent<T>(item: T | null | undefined): item is T {
  return typeof item === "object" && item !== null;
}
