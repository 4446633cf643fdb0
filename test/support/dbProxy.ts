/**
 * A loopback TCP proxy in front of the test database server, for outages as a restart or a
 * fail-over makes them: `cut()` ends every connection through it and refuses new ones
 * (ECONNREFUSED), `restore()` accepts again on the same port. Connect through `url(database)`.
 */
import net from "node:net";
import type { Test } from "tap";
import { withDatabase } from "./cluster.ts";
import { clusterEnv } from "./db.ts";

export interface DbProxy {
  /** The database `name` through the proxy. */
  url(name: string): string;
  cut(): Promise<void>;
  restore(): Promise<void>;
}

export async function startDbProxy(t: Test): Promise<DbProxy> {
  const { adminUrl } = clusterEnv();
  const target = new URL(adminUrl);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const through = new URL(adminUrl);
  through.hostname = "127.0.0.1";
  through.port = String(port);
  const close = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  const cut = async () => {
    const closed = close();
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  t.teardown(cut);
  return {
    url: (name) => withDatabase(through.toString(), name),
    cut,
    restore: () => listen(port),
  };
}
