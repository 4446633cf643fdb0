/**
 * Peers that hang: they accept the connection and then never answer. `startStallingPeer`
 * is a TCP server that says nothing at all, or only a greeting (an FTP `220` line, an SSH
 * version line) and then nothing more; `startSilentHttpServer` reads each request and never
 * sends a status line. What the client sent is recorded, so a test can show the peer was
 * reached. Open connections are destroyed in teardown.
 */
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import type { Test } from "tap";

export interface StallingPeer {
  host: string;
  port: number;
  /** Connections accepted so far. */
  connections: number;
  /** Everything the clients sent, per connection, as latin1 text. */
  received: string[];
}

/** A TCP server on 127.0.0.1 that sends `greeting` (if any) on each connection, then stays silent. */
export async function startStallingPeer(t: Test, greeting?: string): Promise<StallingPeer> {
  const sockets = new Set<net.Socket>();
  const peer: StallingPeer = { host: "127.0.0.1", port: 0, connections: 0, received: [] };
  const server = net.createServer((socket) => {
    const index = peer.received.push("") - 1;
    peer.connections += 1;
    sockets.add(socket);
    socket.on("data", (chunk: Buffer) => (peer.received[index] += chunk.toString("latin1")));
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    if (greeting) socket.write(greeting);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  peer.port = (server.address() as AddressInfo).port;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return peer;
}

export interface SilentHttpServer {
  url: string;
  /** Requests read in full (method, path and body), none of them ever answered. */
  received: { method: string; url: string; body: string }[];
}

/** An HTTP server on 127.0.0.1 that reads every request and never answers it. */
export async function startSilentHttpServer(t: Test): Promise<SilentHttpServer> {
  const received: SilentHttpServer["received"] = [];
  const server = http.createServer((req) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => received.push({ method: req.method ?? "", url: req.url ?? "", body: Buffer.concat(chunks).toString("utf8") }));
  });
  // No request or headers timeout: the server must outwait any client.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}
