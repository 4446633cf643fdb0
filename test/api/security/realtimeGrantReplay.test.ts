/**
 * A channel grant is checked when it is used, not only when it is signed. The signature of
 * `POST /broadcasting/auth` binds a socket, a channel and a grant, but not a moment: a client
 * keeps it as long as its socket stays open. A member removed from a team loses the board
 * channel at once (realtimeReauth.test.ts); sending the same `pusher:subscribe` again on that
 * socket, or a grant signed while still a member but first used after the removal, must not
 * bring the board's events back.
 *
 * "No event" is decided by order, as in realtimeReauth.test.ts: a marker published on a
 * public channel after the board event reaches each socket after it would have.
 */
import t, { type Test } from "tap";
import { startTestApp, type TestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { rawSocket, type RawSocket } from "../../support/pusher.ts";
import { markerChannel, passMarker, rawSocketMarkers } from "../../support/realtimeMarkers.ts";
import { until } from "../../support/wait.ts";

const KEY = "test-app-key";
const timeoutMs = 20_000;

/** A raw socket subscribed to the marker channel, with its socket id. */
async function socketOf(t: Test, app: TestApp): Promise<{ socket: RawSocket; socketId: string }> {
  const socket = await rawSocket(t, app.url, KEY);
  const socketId = ((await socket.waitFor("pusher:connection_established")).data as { socket_id: string }).socket_id;
  socket.send("pusher:subscribe", { channel: markerChannel });
  await until(() => socket.frames.some((f) => f.event === "pusher_internal:subscription_succeeded" && f.channel === markerChannel), { message: "on the marker channel", timeoutMs });
  return { socket, socketId };
}

/** The frames a socket received on `channel`, as `event` or `event:status`. */
const on = (socket: RawSocket, channel: string) =>
  socket.frames
    .filter((f) => f.channel === channel)
    .map((f) => (f.event === "pusher:subscription_error" ? `${f.event}:${(f.data as { status: number }).status}` : f.event));

t.test("a grant signed while a member subscribes nobody once membership ended", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Watched" })).body.project.id as number;
  const board = (await api.post(`/api/projects/${project}/kanban`, { name: "Live", columns: ["A"] })).body.board;
  const channel = `private-kanban-board.${board.id}`;
  const team = await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project]);

  // One socket subscribes and loses the channel; another only keeps its grant for later.
  const used = await socketOf(t, app);
  const kept = await socketOf(t, app);
  const grant = async (socketId: string) => (await client(app.url, member.token).post("/api/broadcasting/auth", { socket_id: socketId, channel_name: channel })).body;
  const usedGrant = await grant(used.socketId);
  const keptGrant = await grant(kept.socketId);
  used.socket.send("pusher:subscribe", { channel, auth: usedGrant.auth, channel_data: usedGrant.channel_data });
  await until(() => on(used.socket, channel).includes("pusher_internal:subscription_succeeded"), { message: "subscribed while a member", timeoutMs });

  t.equal((await api.delete(`/api/teams/${team}/members/${member.user.id}`)).status, 200, "removed from the team");
  await until(() => on(used.socket, channel).includes("pusher:subscription_error:403"), { message: "the subscription ends", timeoutMs });

  used.socket.send("pusher:subscribe", { channel, auth: usedGrant.auth, channel_data: usedGrant.channel_data });
  kept.socket.send("pusher:subscribe", { channel, auth: keptGrant.auth, channel_data: keptGrant.channel_data });
  const answered = (socket: RawSocket, before: number) => on(socket, channel).length > before;
  await until(() => answered(used.socket, 2) && answered(kept.socket, 0), { message: "an answer to each late subscribe", timeoutMs });

  t.equal((await api.post("/api/kanban-cards", { column_id: board.columns[0].id, title: "After" })).status, 201);
  await passMarker(app.pool, [rawSocketMarkers(used.socket), rawSocketMarkers(kept.socket)], timeoutMs);
  t.same(on(used.socket, channel), ["pusher_internal:subscription_succeeded", "pusher:subscription_error:403", "pusher:subscription_error:403"], "the replayed grant is refused");
  t.same(on(kept.socket, channel), ["pusher:subscription_error:403"], "the grant kept for later is refused");
});
