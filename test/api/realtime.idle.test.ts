/**
 * The server's idle ping and timeout (Pusher protocol v7): a socket that says nothing for
 * `REALTIME_ACTIVITY_TIMEOUT_S` gets `pusher:ping`; one that does not answer `pusher:pong`
 * within `REALTIME_PONG_TIMEOUT_S` is closed with 4201, one that answers stays connected.
 * Both intervals are set to one second here; the waits are behaviour (frames and closes
 * observed), with generous guards only against hanging. How soon the server pings and closes
 * is checked against lower bounds that follow from the order of events (a ping comes more than
 * the activity timeout after the server read the client's last frame, which the client sent
 * after noting the time), so a loaded machine can make them later, never sooner.
 */
import t from "tap";
import { WebSocket } from "ws";
import { closeCodes } from "../../api/realtime/protocol.ts";
import { startTestApp } from "../support/app.ts";
import { rawSocket } from "../support/pusher.ts";
import { until } from "../support/wait.ts";

const KEY = "test-app-key";
/** A guard against hanging only: the ping and the close come within a few seconds. */
const guardMs = 20_000;

t.test("idle sockets are pinged, and closed only when they do not answer", async (t) => {
  const app = await startTestApp(t, { env: { REALTIME_ACTIVITY_TIMEOUT_S: "1", REALTIME_PONG_TIMEOUT_S: "1" } });

  t.test("the connection tells the client the activity timeout", async (t) => {
    const socket = await rawSocket(t, app.url, KEY);
    t.match(await socket.waitFor("pusher:connection_established"), { data: { activity_timeout: 1 } });
  });

  t.test("a silent socket gets pusher:ping, then is closed with 4201 when it sends no pong", async (t) => {
    const socket = await rawSocket(t, app.url, KEY);
    await socket.waitFor("pusher:connection_established");
    let closedAt = 0;
    socket.ws.on("close", () => (closedAt = Date.now()));
    // Its last frame: the server reads it after this moment, pings more than the activity
    // timeout after reading it, and closes more than the pong timeout after the ping.
    const spoke = Date.now();
    socket.send("pusher:ping", {});
    await socket.waitFor("pusher:ping", guardMs);
    await until(() => closedAt > 0, { message: "the close", timeoutMs: guardMs });
    const closed = await socket.closed;
    t.equal(closed.code, closeCodes.pongNotReceived);
    t.match(closed.reason, /Pong/);
    t.equal(socket.frames.filter((f) => f.event === "pusher:ping").length, 1, "one ping, then the close: no second chance");
    t.ok(closedAt - spoke >= 2000, `closed no sooner than both timeouts after its last frame (${closedAt - spoke} ms)`);
  });

  t.test("a socket that answers every ping with pusher:pong stays connected", async (t) => {
    const socket = await rawSocket(t, app.url, KEY);
    await socket.waitFor("pusher:connection_established");
    let closedCode: number | undefined;
    void socket.closed.then(({ code }) => (closedCode = code));
    const pings: number[] = [];
    socket.ws.on("message", (raw) => {
      const { event } = JSON.parse((raw as Buffer).toString("utf8")) as { event: string };
      if (event === "pusher:ping") {
        pings.push(Date.now());
        socket.send("pusher:pong", {});
      }
    });
    // A second ping is only sent once the pong has cleared the first one, and an unanswered
    // ping closes the socket instead: three pings are three answered timeouts survived.
    await until(() => closedCode !== undefined || socket.frames.filter((f) => f.event === "pusher:ping").length >= 3, {
      timeoutMs: 60_000,
      message: "three pings or a close",
    });
    t.equal(closedCode, undefined, "not closed");
    t.equal(socket.ws.readyState, WebSocket.OPEN);
    // The server reads each pong after the ping before it arrived here, and pings again only
    // more than the activity timeout after that.
    const gaps = pings.slice(1).map((at, i) => at - pings[i]!);
    t.ok(gaps.every((gap) => gap >= 1000), `each ping at least the activity timeout after the one before (${gaps.join(", ")} ms)`);
    // …and it still works as a socket after the idle periods.
    socket.send("pusher:ping", {});
    await until(() => socket.frames.some((f) => f.event === "pusher:pong"), { timeoutMs: 60_000, message: "pusher:pong" });
    t.equal(closedCode, undefined);
  });
});
