// `pod-decorator crds [--output-dir DIR]`: the CRDs generated from src/api, printed as one
// YAML stream, or written one file per CRD (what `make crds` does into config/crd/).
import { join } from "node:path";
import { parseArgs } from "node:util";
import { customResourceDefinitions } from "../api/crd.ts";
import type { Command } from "./command.ts";
import { toYaml } from "./yaml-output.ts";
import { UsageError } from "./usage-error.ts";

export const CRDS_USAGE = "usage: pod-decorator crds [--output-dir DIR]";

const HEADER = "# Generated from src/api by `make crds` (pod-decorator crds); do not edit.\n";

/** Each CRD's file name (`<group>_<plural>.yaml`) and content, as committed under config/crd/. */
export function crdFiles(): { fileName: string; text: string }[] {
  return customResourceDefinitions().map((crd) => ({
    fileName: `${crd.spec.group}_${crd.spec.names.plural}.yaml`,
    text: HEADER + toYaml(crd),
  }));
}

export const crds: Command = async (args, io) => {
  let outputDir: string | undefined;
  try {
    outputDir = parseArgs({ args: [...args], options: { "output-dir": { type: "string" } }, strict: true }).values["output-dir"];
  } catch (error) {
    throw new UsageError([error instanceof Error ? error.message : String(error), CRDS_USAGE]);
  }
  const files = crdFiles();
  if (outputDir === undefined) {
    io.stdout(files.map((file) => file.text).join("---\n"));
    return 0;
  }
  for (const file of files) {
    const path = join(outputDir, file.fileName);
    await io.writeFile(path, file.text);
    io.stdout(`${path}\n`);
  }
  return 0;
};
