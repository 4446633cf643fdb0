/**
 * The socket server's protocol edges, with raw WebSockets against the running app: which
 * protocol versions connect, what each kind of client frame gets back, the size limit of a
 * client frame, the channels a socket may hold, unsubscribing, the connection count, the cap
 * on what may wait for a socket that stops reading, and the cap on events held back while a
 * subscription's access is checked.
 *
 * "No further frame" is decided by order: a frame the server sends after another one (a pong
 * after an error, a marker event after a channel event) arrives after it.
 */
import { readFile } from "node:fs/promises";
import { connect } from "node:net";
import pg from "pg";
import t from "tap";
import { z } from "zod";
import { createPersonalToken } from "../../shared/auth/personalTokens.ts";
import { sql } from "../../shared/db/pool.ts";
import { publish } from "../../shared/events/publish.ts";
import { closeCodes } from "../../api/realtime/protocol.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { rawSocket, type RawSocket } from "../support/pusher.ts";
import { until } from "../support/wait.ts";

const KEY = "test-app-key";
const none = z.object({});
/** A guard against hanging only; each wait here is for a frame already on its way. */
const timeoutMs = 20_000;

/** The frames after the `n`th, without the marker channel's. */
const since = (socket: RawSocket, n: number) => socket.frames.slice(n).filter((f) => f.channel !== "public-marker");

/** Sends pusher:ping and waits for the pong: every frame the server sent before it has arrived. */
async function roundTrip(socket: RawSocket): Promise<void> {
  const pongs = socket.frames.filter((f) => f.event === "pusher:pong").length;
  socket.send("pusher:ping", {});
  await until(() => socket.frames.filter((f) => f.event === "pusher:pong").length > pongs, { message: "pusher:pong", timeoutMs });
}

/** The socket's close code and reason, waited for with the guard. */
const closeOf = (socket: RawSocket) =>
  until(async () => socket.ws.readyState === socket.ws.CLOSED && (await socket.closed), { message: "the socket closed", timeoutMs });

/** Subscribes and resolves with the answer (subscription_succeeded or subscription_error). */
async function subscribe(socket: RawSocket, channel: string, extra: Record<string, unknown> = {}) {
  const from = socket.frames.length;
  socket.send("pusher:subscribe", { channel, ...extra });
  const answer = () => socket.frames.slice(from).find((f) => f.channel === channel && f.event.startsWith("pusher"));
  return until(answer, { message: `an answer on ${channel}`, timeoutMs });
}

t.test("realtime socket server", async (t) => {
  const app = await startTestApp(t);
  const api = client(app.url);

  t.test("the health endpoint counts open sockets (first: no other subtest's sockets are still closing)", async (t) => {
    const count = async () => {
      const counted = (await api.get("/api/health")).body.realtime.connections as number;
      t.equal(app.web.realtime.connectionCount, counted, "the server's own count agrees");
      return counted;
    };
    const start = await count();
    const sockets = [await rawSocket(t, app.url, KEY), await rawSocket(t, app.url, KEY)];
    for (const socket of sockets) await socket.waitFor("pusher:connection_established", timeoutMs);
    t.equal(await count(), start + 2);
    sockets[0]!.ws.close();
    await closeOf(sockets[0]!);
    await until(async () => (await count()) === start + 1, { message: "one fewer", timeoutMs });
    const refused = await rawSocket(t, app.url, "wrong-key");
    t.same(await closeOf(refused), { code: 4001, reason: "Application does not exist" });
    t.same(refused.frames.map((f) => f.data), [{ message: "Could not find app by key wrong-key", code: 4001 }], "one error frame naming the key");
    t.equal(await count(), start + 1, "a refused socket was never counted");
  });

  t.test("protocol versions 5 to 7 connect (7 when none is named); others are closed with 4007", async (t) => {
    for (const query of ["protocol=5", "protocol=7", "client=js"]) {
      const socket = await rawSocket(t, app.url, KEY, query);
      t.ok(await socket.waitFor("pusher:connection_established", timeoutMs), query);
    }
    for (const query of ["protocol=4", "protocol=8", "protocol=6.5", "protocol=seven"]) {
      const socket = await rawSocket(t, app.url, KEY, query);
      const version = query.slice("protocol=".length);
      t.same((await socket.waitFor("pusher:error", timeoutMs)).data, { message: `Unsupported protocol version ${Number(version)}`, code: 4007 }, query);
      t.same(await closeOf(socket), { code: closeCodes.unsupportedProtocol, reason: "Unsupported protocol version" }, query);
    }
  });

  t.test("sockets connect at /app/{key} only (the key percent-decoded); other paths get 404", async (t) => {
    const encoded = await rawSocket(t, app.url, encodeURIComponent(KEY).replace(/-/g, "%2D"));
    t.ok(await encoded.waitFor("pusher:connection_established", timeoutMs));
    for (const [base, key] of [[`${app.url}/x`, KEY], [app.url, `${KEY}/extra`]] as const) {
      await t.rejects(rawSocket(t, base, key), /404/, `${base} ${key}`);
    }
  });

  t.test("an upgrade whose target is no URL path, or whose key is malformed, gets 404, and the server carries on", async (t) => {
    const { port } = new URL(app.url);
    for (const target of ["//[", "//a:b", "/app/%E0", "/app/%"]) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), "127.0.0.1");
        let text = "";
        socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
        socket.on("close", () => resolve(text));
        socket.on("error", reject);
        socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer to ${target}`)));
        socket.write(
          `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
            `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${Buffer.alloc(16).toString("base64")}\r\n\r\n`,
        );
      });
      t.match(answer, /^HTTP\/1\.1 404 /, target);
    }
    t.equal((await api.get("/api/health")).status, 200, "still serving");
  });

  t.test("each client frame gets its answer, and the socket carries on", async (t) => {
    const socket = await rawSocket(t, app.url, KEY);
    await socket.waitFor("pusher:connection_established", timeoutMs);
    const errors = () => socket.frames.filter((f) => f.event === "pusher:error").map((f) => f.data);
    socket.ws.send(Buffer.from(JSON.stringify({ event: "pusher:ping", data: {} })), { binary: true });
    socket.send("client-typing", { channel: "private-job.1" });
    socket.send("pusher:unknown", {});
    socket.ws.send("[1]");
    socket.ws.send('{"data":{}}');
    socket.send("pusher:pong", {});
    await roundTrip(socket);
    t.same(errors(), [
      { message: "Binary frames are not supported", code: null },
      { message: "Client events are not enabled for this app", code: 4301 },
      { message: "Unknown event pusher:unknown", code: null },
      { message: "Malformed frame: expected JSON {event, data}", code: null },
      { message: "Malformed frame: expected JSON {event, data}", code: null },
    ]);
    t.same(
      socket.frames.map((f) => f.event),
      ["pusher:connection_established", ...errors().map(() => "pusher:error"), "pusher:pong"],
      "a pong is not answered; one pong for the one ping",
    );
  });

  t.test("a client frame over 16 KiB closes the socket with 1009; one just under it is read", async (t) => {
    const socket = await rawSocket(t, app.url, KEY);
    await socket.waitFor("pusher:connection_established", timeoutMs);
    const frame = (size: number) => {
      const shell = JSON.stringify({ event: "pusher:ping", data: { pad: "" } });
      return JSON.stringify({ event: "pusher:ping", data: { pad: "x".repeat(size - shell.length) } });
    };
    socket.ws.send(frame(16 * 1024));
    await until(() => socket.frames.some((f) => f.event === "pusher:pong"), { message: "the pong of a 16 KiB frame", timeoutMs });
    socket.ws.send(frame(16 * 1024 + 1));
    t.equal((await closeOf(socket)).code, 1009);
  });

  t.test("channels: presence and encrypted refused, at most 100 per socket, unsubscribing stops the events", async (t) => {
    const socket = await rawSocket(t, app.url, KEY);
    await socket.waitFor("pusher:connection_established", timeoutMs);
    for (const channel of ["presence-room.1", "private-encrypted-room.1"]) {
      t.match(await subscribe(socket, channel), { event: "pusher:subscription_error", data: { status: 400, error: /not supported/ } }, channel);
    }
    for (let i = 1; i <= 100; i += 1) socket.send("pusher:subscribe", { channel: `public-room.${i}` });
    t.match(await subscribe(socket, "public-room.101"), { event: "pusher:subscription_error", data: { status: 429 } }, "the 101st channel");
    await until(() => socket.frames.filter((f) => f.event === "pusher_internal:subscription_succeeded").length === 100, { message: "100 subscribed", timeoutMs });
    // Subscribing again to a channel the socket holds is no new channel.
    const count = socket.frames.length;
    socket.send("pusher:subscribe", { channel: "public-room.100" });
    await roundTrip(socket);
    t.same(since(socket, count).map((f) => `${f.event} ${f.channel ?? ""}`.trim()), ["pusher_internal:subscription_succeeded public-room.100", "pusher:pong"]);

    const other = await rawSocket(t, app.url, KEY);
    await other.waitFor("pusher:connection_established", timeoutMs);
    await subscribe(other, "public-room.1");
    socket.send("pusher:unsubscribe", { channel: "public-room.1" });
    socket.send("pusher:unsubscribe", { channel: 7 });
    socket.send("pusher:unsubscribe", { channel: "public-never-joined" });
    await roundTrip(socket);
    const before = socket.frames.length;
    await publish(app.pool, { channel: "public-room.1", event: "Left", data: {} });
    await publish(app.pool, { channel: "public-room.2", event: "Stayed", data: {} });
    await until(() => socket.frames.some((f) => f.event === "Stayed") && other.frames.some((f) => f.event === "Left"), { message: "the events", timeoutMs });
    t.same(since(socket, before).map((f) => f.event), ["Stayed"], "nothing on the channel it left");
    // Its place is free again.
    t.match(await subscribe(socket, "public-room.101"), { event: "pusher_internal:subscription_succeeded" });
    other.ws.close();
    await until(() => app.deps.hub.handlerCount("public-room.1").channel === 0, { message: "the last member gone, the channel's handler goes", timeoutMs });
    t.equal(app.deps.hub.handlerCount("public-room.2").channel, 1, "a channel still held keeps its one handler");
  });

  t.test("a web process that stops tells its sockets to reconnect elsewhere (4200)", async (t) => {
    const second = await startTestApp(t, { db: app.db });
    const socket = await rawSocket(t, second.url, KEY);
    await socket.waitFor("pusher:connection_established", timeoutMs);
    await subscribe(socket, "public-room.1");
    const { hub } = second.deps;
    const reconnectCallbacks = hub.handlerCount("public-room.1").reconnect;
    t.equal(hub.handlerCount("public-room.1").channel, 1);
    let stopped = false;
    const stopping = second.web.stop().then(() => (stopped = true));
    t.same(await closeOf(socket), { code: closeCodes.genericReconnect, reason: "Server shutting down" });
    await until(() => stopped, { message: "the stop to finish", timeoutMs });
    await stopping;
    // The process's hub outlives its web server (a worker may run beside it): nothing of the
    // socket server stays registered on it.
    t.equal(hub.handlerCount("public-room.1").channel, 0, "the channel's handler is gone");
    t.equal(hub.handlerCount("public-room.1").reconnect, reconnectCallbacks - 2, "the re-authorizer's and the missed-events notice's reconnect callbacks are gone");
  });

  t.test("a socket that stops reading keeps every event up to 4 MiB waiting for it, and is closed with 4100 past it", async (t) => {
    const channel = "public-slow";
    const slow = await rawSocket(t, app.url, KEY);
    const reader = await rawSocket(t, app.url, KEY);
    for (const socket of [slow, reader]) {
      await socket.waitFor("pusher:connection_established", timeoutMs);
      await subscribe(socket, channel);
    }
    const numbers = (socket: RawSocket, round: number) =>
      socket.frames.filter((f) => f.event === `Round${round}`).map((f) => (f.data as { n: number }).n);
    // The slow socket stops reading while `count` events of `size` bytes are sent; the reading
    // one has the last only after the server wrote every one to both (one write loop per event).
    const sendWhilePaused = async (round: number, count: number, size: number) => {
      slow.ws.pause();
      for (let n = 1; n <= count; n += 1) await publish(app.pool, { channel, event: `Round${round}`, data: { n, pad: "x".repeat(size) } });
      await until(() => numbers(reader, round).length === count, { message: `round ${round} on the reading socket`, timeoutMs });
      slow.ws.resume();
    };
    // Round 1: 3 MiB in all. Less than 4 MiB can never be waiting, so the socket stays. (Whether
    // any of it waits in the server's queue at all depends on how much the kernel takes: a
    // loopback whose send buffer grows to 4 MiB takes all of it, so no lower cap shows here.)
    await sendWhilePaused(1, 12, 256 * 1024);
    await until(() => numbers(slow, 1).length === 12 || slow.ws.readyState !== slow.ws.OPEN, { message: "round 1 read, or a close", timeoutMs });
    t.same(numbers(slow, 1), Array.from({ length: 12 }, (_, i) => i + 1), "all of round 1, in order");
    await roundTrip(slow);
    t.equal(slow.ws.readyState, slow.ws.OPEN, "still open after reading 3 MiB late");

    // Round 2: the kernel holds at most its largest receive and send buffers for the socket, so
    // past 4 MiB more than that the server's own queue passes 4 MiB and it gives up.
    const largest = async (file: string) => Number((await readFile(file, "utf8").catch(() => "0 0 33554432")).trim().split(/\s+/)[2]);
    const kernel = (await largest("/proc/sys/net/ipv4/tcp_rmem")) + (await largest("/proc/sys/net/ipv4/tcp_wmem"));
    const size = 512 * 1024;
    const count = Math.ceil((4 * 1024 * 1024 + kernel) / size) + 2;
    await sendWhilePaused(2, count, size);
    // Ends on the close, or on the last event read (then no close is coming).
    await until(() => slow.ws.readyState === slow.ws.CLOSED || numbers(slow, 2).length === count, { message: "round 2 read, or a close", timeoutMs });
    t.equal(slow.ws.readyState, slow.ws.CLOSED, "closed");
    t.same(await slow.closed, { code: closeCodes.overCapacity, reason: "Client is not reading fast enough" });
    const got = numbers(slow, 2);
    t.ok(got.length < count, `the events after the close were not sent (${got.length} of ${count} arrived)`);
    t.same(got, Array.from({ length: got.length }, (_, i) => i + 1), "those sent before it arrived in order");
  });

  t.test("a socket with more than 1000 events held back while its access is checked is closed with 4100", async (t) => {
    const admin = await buildUserWithToken(app.pool);
    await app.pool.query(sql.type(none)`insert into user_roles (user_id, role) values (${admin.user.id}, 'admin')`);
    const other = await createPersonalToken(app.pool, admin.user.id, "other");
    const channel = "private-admin.jobs";
    const socket = await rawSocket(t, app.url, KEY);
    const socketId = ((await socket.waitFor("pusher:connection_established", timeoutMs)).data as { socket_id: string }).socket_id;
    const granted = await client(app.url, admin.token).post("/api/broadcasting/auth", { socket_id: socketId, channel_name: channel });
    t.equal(granted.status, 200, granted.text);
    t.match(await subscribe(socket, channel, { auth: granted.body.auth, channel_data: granted.body.channel_data }), { event: "pusher_internal:subscription_succeeded" });
    const held = () => socket.frames.filter((f) => f.event === "Held").map((f) => (f.data as { n: number }).n);
    // `count` events for the admin's subscription while its check waits on a lock on users.
    const locker = new pg.Client({ connectionString: app.db.url });
    await locker.connect();
    t.teardown(() => locker.end());
    const holdBack = async (count: number, expiry: string) => {
      await locker.query("begin; lock table users in access exclusive mode");
      await app.pool.transaction(async (tx) => {
        // Announces user:<admin>: the subscription is held and checked.
        await tx.query(sql.type(none)`update personal_access_tokens set expires_at = now() + ${expiry}::interval where id = ${other.token.id}`);
        for (let n = 1; n <= count; n += 1) await publish(tx, { channel, event: "Held", data: { n } });
      });
    };
    await holdBack(1000, "1 day");
    await locker.query("commit");
    await until(() => held().length === 1000, { message: "1000 held events delivered", timeoutMs });
    t.same(held(), Array.from({ length: 1000 }, (_, i) => i + 1), "1000 held, then delivered in order");

    await holdBack(1001, "2 days");
    const closed = await closeOf(socket);
    await locker.query("commit");
    t.equal(closed.code, closeCodes.overCapacity);
    t.match(closed.reason, /Too many events/);
    t.equal(held().length, 1000, "nothing of the second round was delivered");
  });
});
