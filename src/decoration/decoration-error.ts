// A decoration that cannot be rendered: its spec is invalid (stored while no validating
// webhook ran), its revision is unusable, or rendering it into this pod would make a pod the
// API server refuses. The message names the decoration; the pod webhook admits or refuses
// the pod as `onDecorationError` says, the controllers report it.
export class DecorationError extends Error {
  /** `namespace/name` of the decoration. */
  readonly decoration: string;
  constructor(decoration: { namespace?: string | undefined; name?: string | undefined }, reason: string) {
    const name = `${decoration.namespace ?? ""}/${decoration.name ?? ""}`;
    super(`PodDecoration ${name}: ${reason}`);
    this.decoration = name;
  }
}
