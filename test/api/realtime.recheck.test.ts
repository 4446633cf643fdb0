/**
 * The socket server's side of the periodic re-check (REALTIME_REAUTH_S, one second here), with
 * raw WebSockets against the running app: a subscription whose access ended is told so in one
 * exact frame; one whose access stands, holding nothing (a periodic pass holds no events), is
 * let go with nothing sent; and a public channel subscribed with a grant and an `auth` is a
 * public channel all the same: neither is checked, nor is it ever re-checked.
 *
 * When a periodic pass is over is decided by order, not by waiting: passes run one after
 * another, so the end of a subscription made after a pass began comes from a later pass.
 */
import t, { type Test } from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { publish } from "../../shared/events/publish.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { buildTeam, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { rawSocket, type RawSocket } from "../support/pusher.ts";
import { until } from "../support/wait.ts";

const KEY = "test-app-key";
const none = z.object({});
/** A guard against hanging only: a pass runs every second. */
const timeoutMs = 20_000;

/** A raw socket subscribed to `channel` with a grant of `token`, and the grant's `auth` and `channel_data`. */
async function subscribed(t: Test, app: TestApp, token: string, channel: string) {
  const socket = await rawSocket(t, app.url, KEY);
  const socketId = ((await socket.waitFor("pusher:connection_established", timeoutMs)).data as { socket_id: string }).socket_id;
  const granted = await client(app.url, token).post("/api/broadcasting/auth", { socket_id: socketId, channel_name: channel });
  if (granted.status !== 200) throw new Error(`no grant for ${channel}: ${granted.text}`);
  const grant = { auth: granted.body.auth as string, channel_data: granted.body.channel_data as string };
  socket.send("pusher:subscribe", { channel, ...grant });
  await socket.waitFor("pusher_internal:subscription_succeeded", timeoutMs);
  return { socket, grant };
}

/** Removes a member from the team with triggers off: no NOTIFY, only the periodic pass sees it. */
async function removedUnannounced(app: TestApp, team: number, userId: number): Promise<void> {
  await app.pool.transaction(async (tx) => {
    await tx.query(sql.type(none)`set local session_replication_role = replica`);
    await tx.query(sql.type(none)`delete from team_members where team_id = ${team} and user_id = ${userId}`);
  });
}

/** The frame that ended a subscription, once there is one. */
const endOf = (socket: RawSocket, channel: string) =>
  until(() => socket.frames.find((f) => f.event === "pusher:subscription_error" && f.channel === channel), { message: `the end of ${channel}`, timeoutMs });

t.test("the periodic re-check ends what lost access, and lets go of the rest with nothing sent", async (t) => {
  const app = await startTestApp(t, { env: { REALTIME_REAUTH_S: "1" } });
  const owner = await buildUserWithToken(app.pool);
  const [first, second] = [await buildUserWithToken(app.pool), await buildUserWithToken(app.pool)];
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Rechecked" })).body.project.id as number;
  const board = (await api.post(`/api/projects/${project}/kanban`, { name: "Live", columns: ["A"] })).body.board.id as number;
  const channel = `private-kanban-board.${board}`;
  const team = await buildTeam(app.pool, owner.user.id, { [first.user.id]: 3, [second.user.id]: 3 }, [project]);

  // The owner's socket: the board, and a public channel subscribed with the board's grant and
  // an auth that signs nothing. The server takes it as public: no signature check, no grant kept.
  const { socket: kept, grant } = await subscribed(t, app, owner.token, channel);
  const open = "public-news";
  kept.send("pusher:subscribe", { channel: open, auth: "not a signature", channel_data: grant.channel_data });
  await until(() => kept.frames.some((f) => f.event === "pusher_internal:subscription_succeeded" && f.channel === open), { message: `${open} subscribed`, timeoutMs });

  const { socket: lost } = await subscribed(t, app, first.token, channel);
  await removedUnannounced(app, team, first.user.id);
  t.same(
    await endOf(lost, channel),
    { event: "pusher:subscription_error", channel, data: { type: "AuthError", error: "Access to this channel has ended", status: 403 } },
    "the lost subscription is told why, on its channel",
  );
  // That pass checked the owner's subscriptions as well (they are older). A subscription made
  // now is first checked by a later pass, which starts once that one is over.
  const { socket: later } = await subscribed(t, app, second.token, channel);
  await removedUnannounced(app, team, second.user.id);
  await endOf(later, channel);

  await publish(app.pool, { channel: open, event: "News", data: {} });
  await publish(app.pool, { channel, event: "CardMoved", data: {} });
  await until(() => kept.frames.some((f) => f.event === "CardMoved" || f.event === "pusher:subscription_error"), { message: "CardMoved, or an end", timeoutMs });
  t.same(
    kept.frames.map((f) => `${f.event} ${f.channel ?? ""}`.trim()),
    [
      "pusher:connection_established",
      `pusher_internal:subscription_succeeded ${channel}`,
      `pusher_internal:subscription_succeeded ${open}`,
      `News ${open}`,
      `CardMoved ${channel}`,
    ],
    "the passes sent the owner nothing, and ended neither channel",
  );
});
