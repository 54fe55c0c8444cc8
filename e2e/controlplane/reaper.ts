// Stops a control plane when the process that started it dies without stopping it
// (a crashed or killed test run), so no etcd or kube-* process outlives its owner.
import { setTimeout as sleep } from "node:timers/promises";
import { stopControlPlane } from "./controlplane.ts";

const [ownerArgument, dir] = process.argv.slice(2);
const owner = Number(ownerArgument);
if (!Number.isInteger(owner) || owner <= 0 || dir === undefined) {
  console.error("usage: reaper.ts OWNER_PID DIR");
  process.exit(2);
}

function ownerAlive(): boolean {
  try {
    process.kill(owner, 0);
    return true;
  } catch {
    return false;
  }
}

while (ownerAlive()) await sleep(500);
console.error(`owner ${owner} is gone: stopping the control plane in ${dir}`);
await stopControlPlane(dir);
