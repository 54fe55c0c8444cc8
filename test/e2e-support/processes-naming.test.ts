// `make cluster-down DIR=D` must not count itself as left behind: its make and shell processes
// name D too. processesNaming skips the process that asks and its ancestors, and only them.
import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const nodeTs = fileURLToPath(new URL("../../e2e/node/node.ts", import.meta.url));

describe("processesNaming", () => {
  it("leaves out the asking process and the shell that started it, not another process naming the same text", async () => {
    const marker = `pd-marker-${process.pid}-${Date.now()}`;
    // A bystander that names the marker and outlives the check.
    const bystander = spawn("sh", ["-c", `sleep 30; : ${marker}`], { stdio: "ignore" });
    try {
      const script = `import { processesNaming } from ${JSON.stringify(nodeTs)}; console.log(JSON.stringify(processesNaming(${JSON.stringify(marker)})));`;
      // The asking node process is started by a shell whose command line names the marker, as make's does.
      const output = await new Promise<string>((resolve, reject) => {
        execFile("sh", ["-c", `${JSON.stringify(process.execPath)} --input-type=module -e '${script}' ${marker}; : ${marker}`], (error, stdout) => (error === null ? resolve(stdout) : reject(new Error(error.message))));
      });
      const found = JSON.parse(output.trim().split("\n").at(-1)!) as string[];
      expect(found.map((line) => Number(line.split(":")[0]))).toEqual([bystander.pid]);
    } finally {
      bystander.kill();
    }
  });
});
