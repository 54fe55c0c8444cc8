// Stops a control plane or a node when the process that started it dies without stopping it
// (a crashed or killed test run), so nothing it started outlives its owner.
import { setTimeout as sleep } from "node:timers/promises";

const [ownerArgument, kind, dir] = process.argv.slice(2);
const owner = Number(ownerArgument);
if (!Number.isInteger(owner) || owner <= 0 || (kind !== "controlplane" && kind !== "node") || dir === undefined) {
  console.error("usage: reaper.ts OWNER_PID controlplane|node DIR");
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
console.error(`owner ${owner} is gone: stopping the ${kind} in ${dir}`);
if (kind === "node") await (await import("../node/node.ts")).stopNode(dir);
else await (await import("./controlplane.ts")).stopControlPlane(dir);
