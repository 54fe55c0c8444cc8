// At most `max` connections open at once from one source address (DESIGN §10): one client
// cannot take the sockets and memory the API server's calls need by opening connections and
// holding them. A connection beyond the cap is closed as it comes, before a TLS handshake or a
// byte of it is read, which costs the server next to nothing.
import type { Server, Socket } from "node:net";

export function limitConnectionsPerSource(server: Server, max: number, onRefused: (source: string) => void = () => undefined): void {
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    // undefined only for a socket already gone; they all count as one source.
    const source = socket.remoteAddress ?? "";
    const count = open.get(source) ?? 0;
    if (count >= max) {
      socket.destroy();
      onRefused(source);
      return;
    }
    open.set(source, count + 1);
    socket.once("close", () => {
      const left = open.get(source)! - 1;
      if (left === 0) open.delete(source);
      else open.set(source, left);
    });
  });
}
