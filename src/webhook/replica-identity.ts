// What tells one replica of a pod template from another at the pod webhook, so that the answer
// for one can serve the next (decision-memo.ts). The API server sends each replica with two
// things of its own (k8s.io/apiserver's create handler, then the ServiceAccount admission plugin,
// both before any webhook is called):
//   - the managed fields it has just written, timestamped to the second. The engine neither reads
//     nor writes them, and the patch never names them: the identity leaves them out;
//   - a projected token volume named `kube-api-access-` and five random characters, mounted into
//     every container. Its name is opaque to rendering (names are only compared for equality):
//     the identity writes a placeholder in its place, and an answer is given to another replica
//     with the placeholder replaced by that replica's own name.
// Both only while nothing else in the pod mentions the prefix: otherwise the pod is itself.

/** The name prefix of the ServiceAccount admission plugin's token volume. */
export const TOKEN_VOLUME_PREFIX = "kube-api-access-";
const GENERATED_TOKEN_VOLUME = /^kube-api-access-[a-z0-9]{5}$/;

/** Stands for the token volume's name: a character JSON text never holds unescaped. */
export const TOKEN_VOLUME_PLACEHOLDER = "\u0000";

export interface ReplicaIdentity {
  /** The pod as JSON text, without its managed fields, with the placeholder for its token volume's name. */
  text: string;
  /** The token volume's name the placeholder stands for; undefined when the text has none. */
  tokenVolume: string | undefined;
}

/** `object`: a pod the engine can render (unrenderableReason found nothing). */
export function replicaIdentity(object: Record<string, unknown>): ReplicaIdentity {
  const metadata = object.metadata as Record<string, unknown> | undefined;
  const text = JSON.stringify(metadata?.managedFields === undefined ? object : { ...object, metadata: { ...metadata, managedFields: undefined } });
  const tokenVolume = generatedTokenVolume(object);
  if (tokenVolume === undefined || occurrences(text, TOKEN_VOLUME_PREFIX) !== occurrences(text, tokenVolume)) return { text, tokenVolume: undefined };
  return { text: text.replaceAll(tokenVolume, TOKEN_VOLUME_PLACEHOLDER), tokenVolume };
}

/** The one volume the ServiceAccount admission plugin named, if there is exactly one. */
function generatedTokenVolume(object: Record<string, unknown>): string | undefined {
  const spec = object.spec as { volumes?: unknown } | undefined;
  if (!Array.isArray(spec?.volumes)) return undefined;
  let found: string | undefined;
  for (const volume of spec.volumes as { name?: unknown }[]) {
    const name = volume?.name;
    if (typeof name !== "string" || !GENERATED_TOKEN_VOLUME.test(name)) continue;
    if (found !== undefined) return undefined;
    found = name;
  }
  return found;
}

/** How often `part` occurs in `text`, without overlaps. */
export function occurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count++;
  return count;
}
