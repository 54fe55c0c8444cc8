// The body of the webhook flood (bench and e2e): a pod AdmissionReview of exactly the size
// asked for, made of what makes a real pod large (thousands of env vars on its main container),
// so that every byte is parsed, walked, rendered and diffed where a decoration matches it.
import { NAMESPACE, podAdmissionReview, typicalPod } from "./typical-workload.ts";

/** An AdmissionReview of the typical pod grown to `bytes` with env vars, as a large real pod would be. */
export function floodBody(bytes: number, namespace = NAMESPACE): Buffer {
  const pod = typicalPod();
  const app = pod.spec!.containers[0]!;
  const review = (env: { name: string; value: string }[]) =>
    podAdmissionReview({ ...pod, spec: { ...pod.spec, containers: [{ ...app, env: [...(app.env ?? []), ...env] }, ...pod.spec!.containers.slice(1)] } }, namespace);
  const one = { name: "FLOOD_VARIABLE_000000", value: "a value that a large configuration would carry, 000000" };
  const perVariable = JSON.stringify(one).length + 1;
  const count = Math.floor((bytes - review([]).length - 64) / perVariable);
  const env = Array.from({ length: count }, (_, index) => ({ name: `FLOOD_VARIABLE_${String(index).padStart(6, "0")}`, value: `a value that a large configuration would carry, ${String(index).padStart(6, "0")}` }));
  const text = review(env);
  if (text.length > bytes) throw new Error(`flood body is ${text.length} bytes, over ${bytes}`);
  return Buffer.from(text);
}
