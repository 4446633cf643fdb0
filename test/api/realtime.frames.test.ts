/**
 * The realtime server's frames on their own: client frames as parsed (what counts as a frame,
 * when `data` is decoded), server frames as serialised, and the prepared WebSocket frames of
 * the fan-out at each payload-length encoding, read by a real `ws` client on loopback.
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import t from "tap";
import { WebSocket, WebSocketServer } from "ws";
import { prepareTextFrame, writePrepared } from "../../api/realtime/preparedFrame.ts";
import { errorFrame, frame, parseClientFrame } from "../../api/realtime/protocol.ts";

t.test("client frames: JSON objects with a string event; data decoded only when it is a JSON object's text", async (t) => {
  for (const text of ["", "not json", "null", "5", '"text"', "[]", "{}", '{"event":5}', '{"event":null,"data":"{}"}']) {
    t.equal(parseClientFrame(text), undefined, `${JSON.stringify(text)} is not a frame`);
  }
  t.same(parseClientFrame('{"event":"pusher:ping"}'), { event: "pusher:ping", data: undefined }, "an event alone");
  t.strictSame(parseClientFrame('{"event":"e","channel":"private-a","data":"{\\"x\\":1}"}'), { event: "e", channel: "private-a", data: { x: 1 } }, "data holding an object's JSON text is decoded");
  t.strictSame(parseClientFrame('{"event":"e","data":{"x":1}}'), { event: "e", data: { x: 1 } }, "data sent as an object stays an object");
  t.strictSame(parseClientFrame('{"event":"e","data":"{broken"}'), { event: "e", data: "{broken" }, "undecodable text stays text");
  t.strictSame(parseClientFrame('{"event":"e","data":"[1,2]"}'), { event: "e", data: "[1,2]" }, "only an object's text is decoded");
  t.strictSame(parseClientFrame('{"event":"e","data":" {\\"x\\":1}"}'), { event: "e", data: ' {"x":1}' }, "text must start with the brace");
  t.strictSame(parseClientFrame('{"event":"e","channel":7,"data":"plain"}'), { event: "e", data: "plain" }, "a channel that is not a string is left out");
});

t.test("server frames: data is JSON text, the channel only when given, errors carry their code or null", async (t) => {
  t.equal(frame("pusher:connection_established", { socket_id: "1.2" }), '{"event":"pusher:connection_established","data":"{\\"socket_id\\":\\"1.2\\"}"}');
  t.equal(frame("e", [1], "private-a"), '{"event":"e","channel":"private-a","data":"[1]"}');
  t.equal(frame("e", "s", ""), '{"event":"e","channel":"","data":"\\"s\\""}', "an empty channel name is still a channel");
  t.equal(errorFrame("Bad frame"), '{"event":"pusher:error","data":{"message":"Bad frame","code":null}}');
  t.equal(errorFrame("Over", 4100), '{"event":"pusher:error","data":{"message":"Over","code":4100}}');
});

// A frame whose header promises more bytes than it holds leaves the client waiting: the
// guard turns that into a failure instead of a hang.
t.test("prepared frames reach a ws client intact at every length encoding", { timeout: 15_000 }, async (t) => {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1", perMessageDeflate: false });
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  await once(server, "listening");
  const accepted = once(server, "connection") as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`, { perMessageDeflate: false });
  t.teardown(() => client.terminate());
  const [socket] = await accepted;
  await once(client, "open");
  const received: string[] = [];
  client.on("message", (data: Buffer, isBinary: boolean) => received.push(isBinary ? "(binary)" : data.toString("utf8")));

  const lengths = [0, 1, 125, 126, 127, 65_535, 65_536, 200_000];
  const payloads = lengths.map((n, i) => Buffer.alloc(n, 97 + i));
  for (const payload of payloads) {
    const prepared = prepareTextFrame(payload);
    const header = payload.length < 126 ? 2 : payload.length < 65_536 ? 4 : 10;
    t.equal(prepared.length, header + payload.length, `${payload.length} bytes: a ${header}-byte header`);
    t.equal(prepared[0], 0x81, "FIN and the text opcode");
    writePrepared(socket, prepared, payload);
  }
  while (received.length < payloads.length) await once(client, "message");
  t.same(
    received.map((text) => text.length),
    payloads.map((p) => p.toString("utf8").length),
    "every frame arrived, in order, as text of its length",
  );
  t.ok(received.every((text, i) => text === payloads[i]!.toString("utf8")), "with its bytes");

  // Once the socket closes, a write is dropped (ws's own send, which ignores a closed socket).
  const closed = once(client, "close");
  socket.close();
  await closed;
  t.doesNotThrow(() => writePrepared(socket, prepareTextFrame(Buffer.from("late")), Buffer.from("late")), "a write after close is dropped");
  t.equal(received.length, payloads.length, "and nothing more arrived");
});
