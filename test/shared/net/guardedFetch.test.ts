/**
 * The guarded fetch as a fetch: what it sends (method, path with query, headers, bodies small
 * and streamed past the socket buffer) and what it hands back (status, status text, headers,
 * body), an abort that ends the connection, and `close` letting go of kept-alive sockets.
 * The refusals are in networkGuard.test.ts; here every target is allowed (loopback, with
 * ALLOW_PRIVATE_NETWORK_TARGETS), so what is checked is that the guard changes nothing else.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import t, { type Test } from "tap";
import { createGuardedFetch } from "../../../shared/net/guardedFetch.ts";
import { tableResolver } from "../../support/peers/resolvers.ts";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Fails the test instead of hanging when `promise` does not settle in time. */
function within<T>(promise: Promise<T>, what: string, ms = 20_000): Promise<T> {
  return Promise.race([promise, new Promise<T>((_resolve, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref())]);
}

/** A loopback server that records each request; `handle` answers it (201 with a header and an echo by default). */
async function recordingServer(t: Test, handle?: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    if (handle) return handle(req, res);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(201, "Made It", { "x-echo-length": String(body.length), "content-type": "text/plain" }).end(`got ${body.length}`);
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  // Idle connections stay open until the client closes them (the default closes them after
  // 5 s, which would hide a dispatcher that never lets go of its sockets).
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, seen, sockets };
}

const policy = { allowPrivate: true, resolver: tableResolver({ "peer.test": ["127.0.0.1"] }) };

t.test("method, path with query, headers and bodies reach the peer unchanged; status and headers come back", async (t) => {
  const peer = await recordingServer(t);
  const guarded = createGuardedFetch(policy);
  t.teardown(() => guarded.close());
  const base = `http://peer.test:${peer.port}`;

  const got = await guarded.fetch(`${base}/hooks/1?page=2&q=a%20b`, { headers: { "x-custom": "one" } });
  t.equal(got.status, 201);
  t.equal(got.statusText, "Made It");
  t.equal(got.headers.get("x-echo-length"), "0");
  t.equal(await got.text(), "got 0");
  t.match(peer.seen[0], { method: "GET", url: "/hooks/1?page=2&q=a%20b", headers: { "x-custom": "one", host: `peer.test:${peer.port}` } });

  const posted = await guarded.fetch(`${base}/p`, { method: "POST", body: "hello", headers: { "content-type": "text/plain" } });
  t.equal(await posted.text(), "got 5");
  t.match(peer.seen[1], { method: "POST", url: "/p", headers: { "content-type": "text/plain" } });
  t.equal(peer.seen[1]!.body.toString(), "hello");

  // A streamed body well past what a socket buffers, in chunks smaller than the request's
  // buffer: the writer must wait for drain only when a write says so, and then go on.
  const chunk = Buffer.alloc(4 * 1024, 7);
  const chunks = 2048;
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === chunks) return controller.close();
      sent += 1;
      controller.enqueue(new Uint8Array(chunk));
    },
  });
  const streamed = await within(guarded.fetch(`${base}/big`, { method: "PUT", body: stream, duplex: "half" }), "the streamed upload");
  t.equal(await streamed.text(), `got ${chunk.length * chunks}`);
  t.equal(peer.seen[2]!.body.length, chunk.length * chunks);
  t.ok(peer.seen[2]!.body.every((b) => b === 7), "every byte as sent");
});

t.test("an abort mid-response ends the connection; close lets go of kept-alive sockets", async (t) => {
  let closedByClient: Promise<void> | undefined;
  const peer = await recordingServer(t, (req, res) => {
    if (req.url === "/slow") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first part ");
      closedByClient = new Promise<void>((resolve) => res.on("close", () => resolve()));
      return; // never ends on its own
    }
    if (req.url === "/large") return void res.end(Buffer.alloc(8 * 1024 * 1024, 1));
    res.end("quick");
  });
  const guarded = createGuardedFetch(policy);
  t.teardown(() => guarded.close());
  const base = `http://peer.test:${peer.port}`;

  const abort = new AbortController();
  const response = await guarded.fetch(`${base}/slow`, { signal: abort.signal });
  const reader = response.body!.getReader();
  t.equal(new TextDecoder().decode((await reader.read()).value), "first part ");
  abort.abort();
  await t.rejects(reader.read(), { name: "AbortError" });
  await within(closedByClient!, "the peer seeing the aborted connection close");

  t.equal(await (await guarded.fetch(`${base}/quick`)).text(), "quick");
  // A large answer read only after a pause: fetch stops the flow when its buffer is full and
  // resumes it as the body is read, so the whole body must still arrive.
  const large = await guarded.fetch(`${base}/large`);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal((await within(large.arrayBuffer(), "the large body")).byteLength, 8 * 1024 * 1024);
  t.ok(peer.sockets.size >= 1, "the connection is kept alive after the response");
  await guarded.close();
  await within(
    (async () => {
      while (peer.sockets.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    })(),
    "the kept-alive socket closing",
  );
  t.equal(peer.sockets.size, 0);
});

t.test("header bytes come back as sent; a peer that hangs up mid-body fails the read, not the process", async (t) => {
  const peer = await recordingServer(t, (req, res) => {
    if (req.url === "/latin1") {
      // Header values are bytes (Node writes this one as UTF-8, fetch reads each byte as a
      // Latin-1 character): the dispatcher must hand on the bytes, not re-encode them.
      res.setHeader("x-name", "caf\u00e9");
      return void res.end("ok");
    }
    res.writeHead(200, { "content-length": "1000" });
    res.write("only part of it");
    setTimeout(() => res.socket?.destroy(), 50);
  });
  const guarded = createGuardedFetch(policy);
  t.teardown(() => guarded.close());
  const base = `http://peer.test:${peer.port}`;
  const latin1 = await guarded.fetch(`${base}/latin1`);
  const unguarded = await fetch(`http://127.0.0.1:${peer.port}/latin1`);
  t.equal(latin1.headers.get("x-name"), "caf\u00c3\u00a9", "as Node's own fetch reads it");
  t.equal(unguarded.headers.get("x-name"), "caf\u00c3\u00a9");
  await unguarded.text();
  await latin1.text();
  const cut = await guarded.fetch(`${base}/cut`);
  t.equal(cut.status, 200);
  await t.rejects(within(cut.text(), "the cut body"), TypeError, "the body read fails");
  t.equal(await (await guarded.fetch(`${base}/latin1`)).text(), "ok", "and the dispatcher goes on serving");
});

t.test("https speaks TLS: a plain HTTP port fails the handshake, not the protocol check", async (t) => {
  const peer = await recordingServer(t);
  const guarded = createGuardedFetch(policy);
  t.teardown(() => guarded.close());
  const error = (await guarded.fetch(`https://peer.test:${peer.port}/`).catch((e: unknown) => e)) as Error & { cause?: { code?: string; message?: string } };
  t.type(error, TypeError);
  t.match(error.cause, { code: /^(ERR_SSL_|EPROTO$|ECONNRESET$)/ }, String(error.cause?.message));
  t.equal(peer.seen.length, 0, "no HTTP request was made");
});
