// make controlplane-up DIR=D / make controlplane-down DIR=D
import { controlPlaneMemory, startControlPlane, stopControlPlane } from "./controlplane.ts";

const [command, dir, ...crds] = process.argv.slice(2);
if ((command !== "up" && command !== "down" && command !== "memory") || dir === undefined) {
  console.error("usage: cli.ts up DIR [CRD_PATH...] | down DIR | memory DIR");
  process.exit(2);
}

try {
  if (command === "up") {
    const started = Date.now();
    const plane = await startControlPlane(dir, { crds, log: (line) => console.error(line) });
    console.error(`control plane ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    console.log(`kubeconfig: ${plane.kubeconfig}\nkubectl:    ${plane.kubectl}\nserver:     ${plane.server}\nversion:    Kubernetes ${plane.version}`);
  } else if (command === "down") {
    await stopControlPlane(dir);
  } else {
    console.log(JSON.stringify(await controlPlaneMemory(dir)));
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
