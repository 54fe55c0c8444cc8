// Labels and annotations a PodDecoration may not write into pods (DESIGN §10): pod-decorator's
// own bookkeeping (the revisions annotation, the pd-<name> labels, the CollaSet's instance id
// and template revision) and the PodOpsLifecycle protocol. A decoration that wrote them could
// claim decorations the pod does not have, or move a pod between CollaSet slots.
import { childPath, type FieldError, forbiddenError, indexPath, keyPath } from "./field-errors.ts";

/** Key prefixes (`domain/`) reserved in full. */
const RESERVED_DOMAINS = ["poddecoration.kusionstack.io", "collaset.kusionstack.io", "podopslifecycle.kusionstack.io"] as const;
/** Single reserved keys. */
const RESERVED_KEYS = new Set(["kusionstack.io/control", "controller-revision-hash"]);

/** Whether a label or annotation key is one a decoration may not write. */
export function isReservedKey(key: string): boolean {
  if (RESERVED_KEYS.has(key)) return true;
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  const domain = key.slice(0, slash).toLowerCase();
  // `<id>.podopslifecycle.kusionstack.io/...` is one family per lifecycle id.
  return RESERVED_DOMAINS.some((reserved) => domain === reserved || domain.endsWith(`.${reserved}`));
}

interface MetadataPatch {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** `spec.template.metadata[i].labels[key]: Forbidden: ...` for every reserved key a template writes. */
export function reservedKeyErrors(patches: readonly MetadataPatch[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  patches.forEach((patch, index) => {
    for (const field of ["labels", "annotations"] as const) {
      for (const key of Object.keys(patch[field] ?? {})) {
        if (isReservedKey(key)) {
          errors.push(forbiddenError(keyPath(childPath(indexPath(path, index), field), key), "reserved for pod-decorator's bookkeeping and the PodOpsLifecycle protocol; a decoration may not write it"));
        }
      }
    }
  });
  return errors;
}
