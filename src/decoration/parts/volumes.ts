// Step 5 of rendering a decoration: volumes, by name.
import type { PodSpec, Volume } from "../../api/kubernetes.ts";
import { mergeByKey } from "./containers.ts";

export function renderVolumes(spec: PodSpec, volumes: readonly Volume[]): void {
  if (volumes.length === 0) return;
  spec.volumes = mergeByKey(spec.volumes ?? [], volumes, (volume) => volume.name);
}
