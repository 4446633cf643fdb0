/**
 * Security review finding 14: open realtime subscriptions are re-authorized when access
 * changes. Members subscribed to a board channel with pusher-js lose it at once when they are
 * removed from the team, their account is disabled, they log out of every device, their
 * token is revoked (a personal token, an OAuth access token) or the OAuth client it was issued
 * to is revoked: each gets `pusher:subscription_error` (403) on the channel and no board
 * event after it, while the owner's subscription keeps receiving. A change no trigger sees
 * (made with triggers off) is caught by the periodic re-check (REALTIME_REAUTH_S), and a
 * project deleted ends every subscription to its board.
 *
 * "No further event" is decided by order, not by waiting: after the board event, the test
 * publishes a marker on a public channel every client also subscribes to; NOTIFYs are
 * delivered in commit order and a socket's frames in send order, so a client that has the
 * marker would have had the board event before it.
 */
import t, { type Test } from "tap";
import type { Channel } from "pusher-js";
import { z } from "zod";
import { createClient } from "../../../shared/auth/clients.ts";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp, type TestApp } from "../../support/app.ts";
import { buildTeam, buildUser, buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { signChannel } from "../../../api/realtime/channelAuth.ts";
import { connectPusher, rawSocket, type PusherClient } from "../../support/pusher.ts";
import { passMarker, pusherMarkers, type MarkerCheck } from "../../support/realtimeMarkers.ts";
import { until } from "../../support/wait.ts";

const KEY = "test-app-key";

/** A pusher-js client subscribed to a board and the marker channel, recording what arrives. */
interface Watcher {
  name: string;
  pusher: PusherClient;
  board: Channel;
  events: string[];
  errors: { status?: number }[];
  hasMarker: MarkerCheck;
}

async function watch(t: Test, app: TestApp, name: string, token: string, boardId: number): Promise<Watcher> {
  const pusher = await connectPusher(t, app.url, KEY, token);
  const board = await pusher.subscribe(`private-kanban-board.${boardId}`);
  const watcher: Watcher = { name, pusher, board, events: [], errors: [], hasMarker: await pusherMarkers(pusher) };
  board.bind_global((event: string, data: { status?: number }) => {
    if (event === "pusher:subscription_error") watcher.errors.push(data);
    else if (!event.startsWith("pusher:")) watcher.events.push(event);
  });
  return watcher;
}

/** Publishes a marker and waits until every watcher has it (so earlier board events reached them too). */
const marker = (app: TestApp, watchers: Watcher[]) => passMarker(app.pool, watchers.map((w) => w.hasMarker));

/** An OAuth access token (password grant) of a new user, from `clientId`. */
async function oauthUser(app: TestApp, clientId: string, clientSecret: string) {
  const password = "realtime reauthorization";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const res = await request(app.url, "POST", "/api/oauth/token", {
    body: { grant_type: "password", client_id: clientId, client_secret: clientSecret, username: user.email, password, scope: "*" },
  });
  if (res.status !== 200) throw new Error(`no token: ${res.text}`);
  return { user, token: res.body.access_token as string };
}

async function boardOf(app: TestApp, token: string) {
  const api = client(app.url, token);
  const project = (await api.post("/api/projects", { name: "Shared" })).body.project;
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Live", columns: ["A"] })).body.board;
  return { api, project: project.id as number, board: board.id as number, column: board.columns[0].id as number };
}

t.test("access changes end subscriptions at once", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const removed = await buildUserWithToken(app.pool);
  const disabled = await buildUserWithToken(app.pool);
  const loggedOutAll = await buildUserWithToken(app.pool);
  const loggedOut = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool);
  await app.pool.query(sql.type(z.object({}))`insert into user_roles (user_id, role) values (${admin.user.id}, 'admin')`);
  const oauthLoggedOut = await oauthUser(app, app.config.oauth.clientId!, app.config.oauth.clientSecret!);
  const partner = await createClient(app.pool, app.config, { name: "Partner integration" });
  const partnerUser = await oauthUser(app, partner.clientId, partner.clientSecret);
  const { api, project, board, column } = await boardOf(app, owner.token);
  const members = [removed, disabled, loggedOutAll, loggedOut, oauthLoggedOut, partnerUser];
  const team = await buildTeam(app.pool, owner.user.id, Object.fromEntries(members.map((m) => [m.user.id, 3])), [project]);

  const watchers = [
    await watch(t, app, "owner", owner.token, board),
    await watch(t, app, "removed", removed.token, board),
    await watch(t, app, "disabled", disabled.token, board),
    await watch(t, app, "logged out of all devices", loggedOutAll.token, board),
    await watch(t, app, "logged out", loggedOut.token, board),
    await watch(t, app, "logged out of an OAuth session", oauthLoggedOut.token, board),
    await watch(t, app, "signed in through a revoked client", partnerUser.token, board),
  ];
  const [ownerWatch, ...lost] = watchers;

  t.equal((await api.post("/api/kanban-cards", { column_id: column, title: "Before" })).status, 201);
  await marker(app, watchers);
  for (const w of watchers) t.same(w.events, ["CardCreated"], `${w.name} receives board events while a member`);

  t.equal((await api.delete(`/api/teams/${team}/members/${removed.user.id}`)).status, 200, "removed from the team");
  const disabling = await client(app.url, admin.token).put(`/api/admin/users/${disabled.user.id}`, { disabled_at: new Date().toISOString() });
  t.equal(disabling.status, 200, disabling.text);
  t.equal((await client(app.url, loggedOutAll.token).post("/api/logout-all-devices", {})).status, 200, "logged out of every device");
  t.equal((await client(app.url, loggedOut.token).post("/api/logout", {})).status, 200, "the token was revoked");
  t.equal((await client(app.url, oauthLoggedOut.token).post("/api/logout", {})).status, 200, "the OAuth access token was revoked");
  await app.pool.query(sql.type(z.object({}))`update oauth_clients set revoked_at = now() where client_id = ${partner.clientId}`);

  // Published at once: every change above was announced before it (NOTIFYs arrive in commit
  // order), so a lost subscription holds it and drops it. The wait ends on each lost
  // subscription's error, or on the event reaching it (a change that was never announced).
  t.equal((await api.post("/api/kanban-cards", { column_id: column, title: "After" })).status, 201);
  await until(() => lost.every((w) => w.errors.length > 0 || w.events.length > 1), { message: "a subscription_error, or the event, on every lost subscription" });
  for (const w of lost) t.match(w.errors, [{ status: 403 }], `${w.name}: pusher:subscription_error 403 on the board channel`);
  await marker(app, watchers);
  t.same(ownerWatch!.events, ["CardCreated", "CardCreated"], "the owner still receives");
  for (const w of lost) t.same(w.events, ["CardCreated"], `${w.name} receives nothing after losing access`);
  t.same(ownerWatch!.errors, [], "the owner's subscription stands");
});

t.test("a change no trigger announces is caught by the periodic re-check", async (t) => {
  const app = await startTestApp(t, { env: { REALTIME_REAUTH_S: "1" } });
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const { api, project, board, column } = await boardOf(app, owner.token);
  const team = await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project]);
  const watchers = [await watch(t, app, "owner", owner.token, board), await watch(t, app, "member", member.token, board)];

  await app.pool.transaction(async (tx) => {
    // Triggers off for this transaction: the NOTIFY never comes, only the timer can notice.
    await tx.query(sql.type(z.object({}))`set local session_replication_role = replica`);
    await tx.query(sql.type(z.object({}))`delete from team_members where team_id = ${team} and user_id = ${member.user.id}`);
  });
  await until(() => watchers[1]!.errors.length > 0, { message: "the periodic re-check", timeoutMs: 60_000 });
  t.match(watchers[1]!.errors, [{ status: 403 }]);
  t.equal((await api.post("/api/kanban-cards", { column_id: column, title: "After" })).status, 201);
  await marker(app, watchers);
  t.same(watchers[0]!.events, ["CardCreated"]);
  t.same(watchers[1]!.events, [], "nothing after the re-check");
});

t.test("a deleted project ends every subscription to its channels", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const { api, project, board } = await boardOf(app, owner.token);
  const other = await boardOf(app, owner.token);
  const pusher = await connectPusher(t, app.url, KEY, owner.token);
  const channel = await pusher.subscribe(`private-kanban-board.${board}`);
  const kept = await pusher.subscribe(`private-kanban-board.${other.board}`);
  const errors: unknown[] = [];
  channel.bind("pusher:subscription_error", (data: unknown) => errors.push(data));
  kept.bind("pusher:subscription_error", (data: unknown) => errors.push(data));
  const deleted = await api.delete(`/api/projects/${project}`);
  t.equal(deleted.status, 200, deleted.text);
  await until(() => errors.length > 0, { message: "the deleted project's board subscription to end" });
  // The other board's event follows on the same socket: had the kept board lost access, its error would precede it.
  const created = pusher.next(kept, "CardCreated");
  t.equal((await other.api.post("/api/kanban-cards", { column_id: other.column, title: "Still here" })).status, 201);
  await created;
  t.match(errors, [{ status: 403 }], "only the deleted project's board was ended");
});

t.test("a private subscription without its signed grant is refused", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const { board } = await boardOf(app, owner.token);
  const channel = `private-kanban-board.${board}`;
  const socket = await rawSocket(t, app.url, KEY);
  const socketId = ((await socket.waitFor("pusher:connection_established")).data as { socket_id: string }).socket_id;
  const granted = await client(app.url, owner.token).post("/api/broadcasting/auth", { socket_id: socketId, channel_name: channel });
  t.equal(granted.status, 200);
  t.match(JSON.parse(granted.body.channel_data), { user_id: owner.user.id, kind: "personal_token" }, "the grant names the user and the credential");
  // A signature over socket and channel alone (no grant to re-check later) no longer subscribes.
  socket.send("pusher:subscribe", { channel, auth: signChannel(app.config.realtime.key, app.config.realtime.secret, socketId, channel) });
  t.match(await socket.waitFor("pusher:subscription_error"), { channel, data: { status: 401 } });
  // Nor does a grant altered after signing.
  const forged = JSON.stringify({ ...JSON.parse(granted.body.channel_data), user_id: owner.user.id + 1000 });
  socket.frames.length = 0;
  socket.send("pusher:subscribe", { channel, auth: granted.body.auth, channel_data: forged });
  t.match(await socket.waitFor("pusher:subscription_error"), { channel, data: { status: 401 } });
  socket.send("pusher:subscribe", { channel, auth: granted.body.auth, channel_data: granted.body.channel_data });
  t.match(await socket.waitFor("pusher_internal:subscription_succeeded"), { channel });
});
