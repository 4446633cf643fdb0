/**
 * The realtime benchmarks' minimal WebSocket client against a real WebSocket server (ws) on
 * loopback: text both ways at every payload-length encoding, frames split across and joined
 * in TCP chunks, ping answered with pong, close seen, a refused handshake rejected.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { WebSocketServer, type WebSocket } from "ws";
import { until } from "../support/wait.ts";
import { RawWebSocket } from "./support/rawWebSocket.ts";

const server = http.createServer((_req, res) => res.writeHead(404).end());
const wss = new WebSocketServer({ server, path: "/ws" });
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
t.teardown(() => {
  wss.close();
  server.close();
});

/** The next server-side connection. */
const accepted = () => new Promise<WebSocket>((resolve) => wss.once("connection", resolve));

t.test("text both ways at every length encoding, in order", async (t) => {
  const peer = accepted();
  const received: string[] = [];
  const client = await RawWebSocket.connect(`${base}/ws?x=1`, { onText: (text) => received.push(text) });
  const ws = await peer;
  const echoed = new Promise<string[]>((resolve) => {
    const got: string[] = [];
    ws.on("message", (data: Buffer) => {
      got.push(data.toString("utf8"));
      if (got.length === 3) resolve(got);
    });
  });
  const sizes = [0, 125, 126, 65_535, 65_536, 200_000];
  const texts = sizes.map((n, i) => "é".repeat(Math.floor(n / 2)) + String(i));
  for (const text of texts) ws.send(text);
  client.send("short");
  client.send("x".repeat(300));
  client.send("y".repeat(70_000));
  t.same(await echoed, ["short", "x".repeat(300), "y".repeat(70_000)], "masked client frames are read by ws");
  await until(() => received.length === texts.length, { message: "every server frame", intervalMs: 10 });
  t.same(received, texts, "server frames of every length arrive whole and in order");
  client.terminate();
});

t.test("frames split byte by byte are joined; several in one chunk are all read", async (t) => {
  // A raw TCP peer that completes the handshake and then writes frames in awkward pieces.
  const raw = http.createServer();
  raw.on("upgrade", (_req, socket) => {
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    const frame = (text: string) => Buffer.concat([Buffer.from([0x81, text.length]), Buffer.from(text)]);
    const bytes = Buffer.concat([frame("one"), frame("two"), frame("three")]);
    let at = 0;
    const drip = setInterval(() => {
      if (at >= 6) {
        socket.write(bytes.subarray(at));
        clearInterval(drip);
        return;
      }
      socket.write(bytes.subarray(at, at + 1));
      at += 1;
    }, 5);
  });
  await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
  const received: string[] = [];
  const client = await RawWebSocket.connect(`ws://127.0.0.1:${(raw.address() as AddressInfo).port}/`, { onText: (text) => received.push(text) });
  await until(() => received.length === 3, { message: "the three dripped frames", intervalMs: 10 });
  t.same(received, ["one", "two", "three"]);
  client.terminate();
  raw.close();
});

t.test("a ping is answered with its payload; a close is seen once", async (t) => {
  const peer = accepted();
  let closes = 0;
  await RawWebSocket.connect(`${base}/ws`, { onText: () => {}, onClose: () => (closes += 1) });
  const ws = await peer;
  const pong = new Promise<string>((resolve) => ws.once("pong", (data) => resolve(data.toString())));
  ws.ping("are you there");
  t.equal(await pong, "are you there");
  ws.close(1000, "bye");
  await until(() => closes > 0, { message: "the close", intervalMs: 10 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(closes, 1);
});

t.test("a refused handshake rejects with the status line", async (t) => {
  await t.rejects(RawWebSocket.connect(`${base}/elsewhere`, { onText: () => {} }), /handshake refused: HTTP\/1\.1 400/);
  t.throws(() => RawWebSocket.connect("http://127.0.0.1:1/", { onText: () => {} }), /only ws: URLs/);
});
