// Where the API server sends our admission requests, changed under a running serve: every
// webhook of both configurations pointed at another base URL (a black hole, a closed port) and
// back. serve keeps the caBundles right but never the URLs, so a redirect holds until undone.
import { createServer, type Server, type Socket } from "node:net";
import type { V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from "@kubernetes/client-node";
import { clients, eventually } from "./cluster.ts";

type Configuration = V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration;

/** Points every webhook at `baseUrl` + its path; returns what undoes it. */
export async function redirectWebhooks(baseUrl: string): Promise<() => Promise<void>> {
  const { admission } = clients();
  const previous: { kind: "mutating" | "validating"; index: number; name: string; url: string }[] = [];
  const edit = async (kind: "mutating" | "validating", read: () => Promise<Configuration>, patch: (body: object[]) => Promise<unknown>) => {
    const configuration = await read();
    const operations = (configuration.webhooks ?? []).flatMap((webhook, index) => {
      const url = webhook.clientConfig.url;
      if (url === undefined) throw new Error(`${webhook.name} has no URL to redirect`);
      previous.push({ kind, index, name: webhook.name, url });
      return [
        { op: "test", path: `/webhooks/${index}/name`, value: webhook.name },
        { op: "replace", path: `/webhooks/${index}/clientConfig/url`, value: `${baseUrl}${new URL(url).pathname}` },
      ];
    });
    await patch(operations);
  };
  await edit("mutating", () => admission.readMutatingWebhookConfiguration({ name: "pod-decorator" }), (body) => admission.patchMutatingWebhookConfiguration({ name: "pod-decorator", body }));
  await edit("validating", () => admission.readValidatingWebhookConfiguration({ name: "pod-decorator" }), (body) => admission.patchValidatingWebhookConfiguration({ name: "pod-decorator", body }));
  return async () => {
    for (const kind of ["mutating", "validating"] as const) {
      const body = previous.filter((entry) => entry.kind === kind).flatMap(({ index, name, url }) => [
        { op: "test", path: `/webhooks/${index}/name`, value: name },
        { op: "replace", path: `/webhooks/${index}/clientConfig/url`, value: url },
      ]);
      if (kind === "mutating") await admission.patchMutatingWebhookConfiguration({ name: "pod-decorator", body });
      else await admission.patchValidatingWebhookConfiguration({ name: "pod-decorator", body });
    }
  };
}

/** A port that accepts connections and never answers: not a byte, not a TLS handshake. */
export async function blackHole(): Promise<{ url: string; connections(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    connections: () => accepted,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the API server does with a pod at admission right now (it picks up configuration changes after a delay). */
export async function admissionOf(namespace: string, labels: Record<string, string>, sidecar: string): Promise<"decorated" | "undecorated" | "refused"> {
  try {
    const pod = await clients().core.createNamespacedPod({ namespace, dryRun: "All", body: { metadata: { generateName: "probe-", labels }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } } });
    return pod.spec?.containers.some((container) => container.name === sidecar) === true ? "decorated" : "undecorated";
  } catch (error) {
    if (/failed calling webhook/.test(String((error as { body?: unknown }).body ?? error))) return "refused";
    throw error;
  }
}

export async function waitForAdmission(namespace: string, labels: Record<string, string>, sidecar: string, wanted: Awaited<ReturnType<typeof admissionOf>>, timeoutMs = 60_000): Promise<void> {
  await eventually(async () => ((await admissionOf(namespace, labels, sidecar)) === wanted ? true : undefined), timeoutMs, `pods to be ${wanted} at admission`);
}
