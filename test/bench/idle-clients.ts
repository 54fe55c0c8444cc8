// Idle clients on the webhook's HTTPS port (bench and e2e, issue 29): connections that send the
// headers of an AdmissionReview declaring a large body and then nothing, each reopened as soon as
// the server closes it, as an attacker would keep them. Written as raw TLS: Node's own client
// would not send the headers at all before the first byte of the body (it buffers them).
import { connect, type TLSSocket } from "node:tls";

const MiB = 1024 * 1024;

/**
 * Issue 29's probe, repeated: 3 + 3 + 3 + 1 MiB filled the former budget (10 MiB, charged from
 * declared lengths) exactly, so that every real review got 429 until those requests' deadline.
 */
export function declaredSizes(clients: number): number[] {
  return Array.from({ length: clients }, (_, index) => (index % 4 === 3 ? MiB : 3 * MiB));
}

export interface IdleClients {
  /** Connections whose headers are sent and that the server has not closed. */
  open(): number;
  /** Connections made so far. */
  opened(): number;
  /** How the server ended the connections it closed, by the first line of its answer ("" for none). */
  endings(): Record<string, number>;
  stop(): void;
}

/** Keeps one connection per declared size open; resolves once every one has sent its headers. */
export async function idleClients(port: number, declared: readonly number[]): Promise<IdleClients> {
  const sockets = new Set<TLSSocket>();
  const endings: Record<string, number> = {};
  let opened = 0;
  let open = 0;
  let stopped = false;
  const connectOne = (bytes: number): Promise<void> => new Promise((ready) => {
    const socket = connect({ host: "127.0.0.1", port, rejectUnauthorized: false });
    sockets.add(socket);
    let answer = "";
    let sent = false;
    socket.on("secureConnect", () => {
      socket.write(`POST /mutate-pods?timeout=10s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n`);
      sent = true;
      opened++;
      open++;
      ready();
    });
    socket.setEncoding("utf8").on("data", (text: string) => (answer += text));
    socket.on("error", () => undefined);
    socket.once("close", () => {
      sockets.delete(socket);
      if (sent) open--;
      if (stopped) return;
      const ending = answer.split("\r\n")[0] ?? "";
      endings[ending] = (endings[ending] ?? 0) + 1;
      if (!sent) ready();
      void connectOne(bytes);
    });
  });
  await Promise.all(declared.map(connectOne));
  return {
    open: () => open,
    opened: () => opened,
    endings: () => ({ ...endings }),
    stop: () => {
      stopped = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}
