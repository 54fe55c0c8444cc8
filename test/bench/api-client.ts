// Why src/kube/api-client.ts exists: GETs to a real API server, one after another, through the
// library's own client (`KubeConfig.makeApiClient`, a new connection per request) and through
// ours (kept connections), alternating, on one control plane. Reports the wall time and this
// process's CPU per request of each.
//   node test/bench/api-client.ts [--requests N]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { startControlPlane, stopControlPlane } from "../../e2e/controlplane/controlplane.ts";
import { loadKubeConfigFile } from "../../e2e/support/serve-process.ts";
import { apiClient, pooledAuthentication } from "../../src/kube/api-client.ts";

interface Figures {
  wallMsPerRequest: number;
  cpuMicrosPerRequest: number;
}

export interface ApiClientResult {
  requests: number;
  perRequestConnection: Figures;
  keptConnections: Figures;
  /** Wall time per request, kept connections ÷ a connection per request. */
  wallRatio: number;
  cpuRatio: number;
}

const index = process.argv.indexOf("--requests");
const requests = index < 0 ? 300 : Number(process.argv[index + 1]);
if (!Number.isInteger(requests) || requests < 1) throw new Error("--requests: expected a whole number ≥ 1");

async function measure(api: CoreV1Api): Promise<Figures> {
  for (let warm = 0; warm < 20; warm++) await api.readNamespace({ name: "default" });
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let request = 0; request < requests; request++) await api.readNamespace({ name: "default" });
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wallMsPerRequest: Math.round((wall / requests) * 100) / 100, cpuMicrosPerRequest: Math.round((used.user + used.system) / requests) };
}

/** The better of two alternating measurements each, so that a busy moment does not decide. */
function best(samples: readonly Figures[]): Figures {
  return samples.reduce((a, b) => (b.wallMsPerRequest < a.wallMsPerRequest ? b : a));
}

const dir = await mkdtemp(join(tmpdir(), "pod-decorator-bench-api-client-"));
try {
  const plane = await startControlPlane(dir, { ownerPid: process.pid, log: (line) => console.error(`api-client: ${line}`) });
  const config = loadKubeConfigFile(plane.kubeconfig);
  const library = config.makeApiClient(CoreV1Api);
  const ours = apiClient(config, CoreV1Api);
  const perRequest: Figures[] = [];
  const kept: Figures[] = [];
  for (let round = 0; round < 2; round++) {
    perRequest.push(await measure(library));
    kept.push(await measure(ours));
  }
  await pooledAuthentication(config).close();
  const perRequestConnection = best(perRequest);
  const keptConnections = best(kept);
  const result: ApiClientResult = {
    requests,
    perRequestConnection,
    keptConnections,
    wallRatio: Math.round((keptConnections.wallMsPerRequest / perRequestConnection.wallMsPerRequest) * 100) / 100,
    cpuRatio: Math.round((keptConnections.cpuMicrosPerRequest / perRequestConnection.cpuMicrosPerRequest) * 100) / 100,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await stopControlPlane(dir);
  await rm(dir, { recursive: true, force: true });
}
