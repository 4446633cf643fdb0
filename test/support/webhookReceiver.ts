/**
 * A webhook receiver on loopback: records every request (headers and raw body) and answers
 * with the status the test sets, so outages and recoveries can be staged: an error answer
 * (`status`), or no server at all (`stop`, then `start` again on the same port).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Test } from "tap";

export interface ReceivedHook {
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedHook[];
  /** Status of the next answers (200 by default). */
  status: number;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedHook[]>;
  /** Closes the port: connections are refused until `start`. */
  stop(): Promise<void>;
  /** Listens on the same port again. */
  start(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1; closed in teardown. */
export async function startWebhookReceiver(t: Test): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const receiver = { url: "", port: 0, received, status: 200 } as WebhookReceiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(receiver.status, { "content-type": "text/plain" });
      res.end(receiver.status < 300 ? "ok" : "unavailable");
    });
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", () => (server.off("error", reject), resolve())));
  const close = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  await listen(0);
  t.teardown(close);
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  receiver.stop = close;
  receiver.start = () => listen(receiver.port);
  receiver.waitFor = async (count, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (received.length < count) {
      if (Date.now() > deadline) throw new Error(`only ${received.length} of ${count} webhook requests within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return received.slice(0, count);
  };
  return receiver;
}
