/**
 * A webhook receiver on loopback: records every request (headers and raw body) and answers
 * with the status the test sets, so outages and recoveries can be staged.
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
  received: ReceivedHook[];
  /** Status of the next answers (200 by default). */
  status: number;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedHook[]>;
}

/** Starts a receiver on 127.0.0.1; closed in teardown. */
export async function startWebhookReceiver(t: Test): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const receiver = { url: "", received, status: 200 } as WebhookReceiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(receiver.status, { "content-type": "text/plain" });
      res.end(receiver.status < 300 ? "ok" : "unavailable");
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
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.waitFor = async (count, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (received.length < count) {
      if (Date.now() > deadline) throw new Error(`only ${received.length} of ${count} webhook requests within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return received.slice(0, count);
  };
  return receiver;
}
