// The per-source connection cap on a bare TCP server: what it counts and when a place frees up.
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { limitConnectionsPerSource } from "../../src/webhook/connections-per-source.ts";

const opened: Socket[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const socket of opened.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A server holding every connection it keeps, with the server's side of each, in order. */
async function cappedServer(max: number) {
  const server = createServer();
  servers.push(server);
  const refused: string[] = [];
  limitConnectionsPerSource(server, max, (source) => refused.push(source));
  const kept: Socket[] = [];
  const waiting: (() => void)[] = [];
  // After the cap's own listener: a socket it destroyed is not kept.
  server.on("connection", (socket: Socket) => {
    if (!socket.destroyed) kept.push(socket);
    waiting.shift()?.();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  /** Connects from `localAddress` and resolves once the server has kept or refused the connection. */
  const open = async (localAddress: string): Promise<Socket> => {
    const seen = new Promise<void>((resolve) => waiting.push(resolve));
    const socket = connect({ host: "127.0.0.1", port, localAddress });
    socket.on("error", () => undefined);
    opened.push(socket);
    await seen;
    return socket;
  };
  return { open, kept, refused };
}

describe("connections per source address", () => {
  it("closes a connection beyond the cap from one address, while other addresses connect", async () => {
    const { open, kept, refused } = await cappedServer(2);
    await open("127.0.0.2");
    await open("127.0.0.2");
    const beyond = await open("127.0.0.2");
    await once(beyond, "close");
    expect(refused).toEqual(["127.0.0.2"]);
    await open("127.0.0.3");
    expect(kept.map((socket) => socket.remoteAddress)).toEqual(["127.0.0.2", "127.0.0.2", "127.0.0.3"]);
  });

  it("gives the place of a closed connection to the next one from that address", async () => {
    const { open, kept, refused } = await cappedServer(1);
    const first = await open("127.0.0.2");
    first.destroy();
    // The server's side has seen it close: the place is free.
    await once(kept[0]!, "close");
    await open("127.0.0.2");
    expect(kept).toHaveLength(2);
    expect(kept[1]!.destroyed).toBe(false);
    expect(refused).toEqual([]);
  });
});
