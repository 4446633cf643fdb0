/**
 * A TCP proxy in front of an FTP server that delays every chunk by a fixed time in each
 * direction, on the control connection and on every passive data connection: a server
 * `delayMs` away (a round trip of twice that) on a machine where the real one is on
 * loopback. Passive replies (`227 …(h1,h2,h3,h4,p1,p2)` and `229 …(|||port|)`) are
 * rewritten to a data listener of the proxy's, which forwards to the server's port with the
 * same delay. Used by the FTP benchmark: a sequential upload waits out several round trips
 * per file, which is what a connection pool exists to overlap.
 */
import net from "node:net";

export interface LatencyProxy {
  host: string;
  port: number;
  close(): Promise<void>;
}

type Rewrite = (lines: string) => Promise<string>;

/**
 * Forwards `from` to `to`, each chunk `delayMs` late and in order. With `rewrite`, only whole
 * lines are forwarded, each batch after the rewrite has settled (control replies).
 */
function delayedPipe(from: net.Socket, to: net.Socket, delayMs: number, rewrite?: Rewrite): void {
  let queue = Promise.resolve();
  let pending = "";
  const send = (out: Buffer | string) => setTimeout(() => to.destroyed || to.write(out), delayMs);
  from.on("data", (chunk: Buffer) => {
    if (!rewrite) return send(chunk);
    pending += chunk.toString("latin1");
    const end = pending.lastIndexOf("\n");
    if (end < 0) return;
    const lines = pending.slice(0, end + 1);
    pending = pending.slice(end + 1);
    queue = queue.then(async () => {
      send(Buffer.from(await rewrite(lines), "latin1"));
    });
  });
  const finish = (how: "end" | "destroy") => {
    queue = queue.then(() => {
      setTimeout(() => (how === "end" ? to.end() : to.destroy()), delayMs);
    });
  };
  from.on("end", () => finish("end"));
  from.on("error", () => finish("destroy"));
}

/** Connects `client` to `target`, delaying both directions; `rewrite` edits server → client lines. */
function link(client: net.Socket, target: { host: string; port: number }, delayMs: number, rewrite?: Rewrite): net.Socket {
  client.setNoDelay(true);
  const server = net.connect(target.port, target.host);
  server.setNoDelay(true);
  delayedPipe(client, server, delayMs);
  delayedPipe(server, client, delayMs, rewrite);
  return server;
}

/** Starts a proxy on 127.0.0.1 in front of the FTP server at `target`. */
export async function startFtpLatencyProxy(target: { host: string; port: number }, delayMs: number): Promise<LatencyProxy> {
  const sockets = new Set<net.Socket>();
  const listeners = new Set<net.Server>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  };

  /** A one-connection listener forwarding to the server's passive port `serverPort`; resolves to its own port. */
  const dataListener = (serverPort: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const listener = net.createServer((socket) => {
        listener.close();
        listeners.delete(listener);
        track(socket);
        track(link(socket, { host: target.host, port: serverPort }, delayMs));
      });
      listeners.add(listener);
      listener.once("error", reject);
      listener.listen(0, "127.0.0.1", () => resolve((listener.address() as net.AddressInfo).port));
    });

  const rewrite: Rewrite = async (lines) => {
    const out: string[] = [];
    for (const line of lines.split(/(?<=\n)/)) {
      const pasv = /^227 (.*)\(\d+,\d+,\d+,\d+,(\d+),(\d+)\)(.*)$/s.exec(line);
      const epsv = /^229 (.*)\(\|\|\|(\d+)\|\)(.*)$/s.exec(line);
      if (pasv) {
        const port = await dataListener(Number(pasv[2]) * 256 + Number(pasv[3]));
        out.push(`227 ${pasv[1]}(127,0,0,1,${Math.floor(port / 256)},${port % 256})${pasv[4]}`);
      } else if (epsv) {
        out.push(`229 ${epsv[1]}(|||${await dataListener(Number(epsv[2]))}|)${epsv[3]}`);
      } else {
        out.push(line);
      }
    }
    return out.join("");
  };

  const control = net.createServer((socket) => {
    track(socket);
    track(link(socket, target, delayMs, rewrite));
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
  return {
    host: "127.0.0.1",
    port: (control.address() as net.AddressInfo).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      for (const listener of listeners) listener.close();
      await new Promise((resolve) => control.close(resolve));
    },
  };
}
