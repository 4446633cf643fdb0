/**
 * A proxy in front of a host stand-in that forwards everything but never answers the first
 * request matching a pattern: the host did the work, the client never learns it (a worker
 * killed at that moment, or a connection lost after the fact).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Test } from "tap";

/** Answer headers the proxy does not pass on (it sends the decoded body with its own length). */
const hopHeaders = new Set(["connection", "content-length", "content-encoding", "transfer-encoding", "keep-alive"]);

/** Forwards to `target`; the answer to the first request matching `hold` is never sent. */
export async function holdingProxy(t: Test, target: string, hold: RegExp) {
  let held: () => void = () => {};
  const heldRequest = new Promise<void>((resolve) => (held = resolve));
  let holding = true;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name))) as Record<string, string>;
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      void fetch(`${target}${req.url}`, { method: req.method, headers, ...(body ? { body } : {}) }).then(async (answer) => {
        const text = Buffer.from(await answer.arrayBuffer());
        if (holding && hold.test(`${req.method} ${req.url}`)) {
          holding = false;
          held();
          return; // the work is done upstream; the client never learns it
        }
        // Link headers (GitLab's pagination) point at the stand-in itself, which is fine.
        res.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => !hopHeaders.has(name))));
        res.end(text);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, heldRequest };
}

