// make helm / make manifests
import { helmBinary } from "./helm.ts";
import { writePlainManifests } from "./manifests.ts";

const [command] = process.argv.slice(2);
try {
  if (command === "path") {
    console.log(helmBinary());
  } else if (command === "manifests") {
    for (const path of await writePlainManifests()) console.log(path);
  } else {
    console.error("usage: cli.ts path | manifests");
    process.exitCode = 2;
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
