/**
 * Re-authorization of open realtime subscriptions beyond realtimeReauth.test.ts: the
 * credential-specific ends (an OAuth grant that goes while its access token stands, a personal
 * token's expiry brought forward, a token's abilities narrowed to lose the admin scope), one
 * change after another, notifications lost while the LISTEN connection was down, and a change
 * that leaves access standing, whose held-back events arrive exactly and in order.
 *
 * "No further event" is decided by order, as in realtimeReauth.test.ts: a marker published on
 * a public channel after the event reaches each socket after it would have.
 */
import { createHmac } from "node:crypto";
import pg from "pg";
import t, { type Test } from "tap";
import { z } from "zod";
import { createPersonalToken } from "../../../shared/auth/personalTokens.ts";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { sql } from "../../../shared/db/pool.ts";
import { publish } from "../../../shared/events/publish.ts";
import { registerChannelAuthorizer, signChannel } from "../../../api/realtime/channelAuth.ts";
import { startTestApp, type TestApp } from "../../support/app.ts";
import { buildTeam, buildUser, buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { rawSocket, type RawSocket } from "../../support/pusher.ts";
import { markerChannel, markerEvent, passMarker, rawSocketMarkers } from "../../support/realtimeMarkers.ts";
import { until } from "../../support/wait.ts";

const KEY = "test-app-key";
const none = z.object({});
/** A guard against hanging only: each awaited check takes well under a second; shorter than the default, so a mutant that never ends a subscription fails quickly. */
const timeoutMs = 20_000;

/** A raw socket subscribed, with `token`, to each of `channels` and to the marker channel. */
async function subscribed(t: Test, app: TestApp, token: string, channels: string[]): Promise<RawSocket> {
  const socket = await rawSocket(t, app.url, KEY);
  const socketId = ((await socket.waitFor("pusher:connection_established")).data as { socket_id: string }).socket_id;
  for (const channel of channels) {
    const granted = await client(app.url, token).post("/api/broadcasting/auth", { socket_id: socketId, channel_name: channel });
    if (granted.status !== 200) throw new Error(`no grant for ${channel}: ${granted.text}`);
    socket.send("pusher:subscribe", { channel, auth: granted.body.auth, channel_data: granted.body.channel_data });
  }
  socket.send("pusher:subscribe", { channel: markerChannel });
  const wanted = [...channels, markerChannel];
  await until(() => wanted.every((c) => socket.frames.some((f) => f.event === "pusher_internal:subscription_succeeded" && f.channel === c)), {
    message: `subscribed to ${wanted.join(", ")}`,
    timeoutMs,
  });
  return socket;
}

/** Publishes a marker and waits until every socket has it: whatever was published before reached them first. */
const marker = (app: TestApp, sockets: RawSocket[]) => passMarker(app.pool, sockets.map(rawSocketMarkers), timeoutMs);

/**
 * A connection holding an exclusive lock on `users` until the test commits it (or ends):
 * an access check started meanwhile waits on its query.
 */
async function lockUsers(t: Test, app: TestApp): Promise<pg.Client> {
  const locker = new pg.Client({ connectionString: app.db.url });
  await locker.connect();
  t.teardown(() => locker.end());
  await locker.query("begin; lock table users in access exclusive mode");
  return locker;
}

/** The backends waiting on the lock `locker` holds (a check's query), once there is one. */
const waitingOnLock = (locker: pg.Client) =>
  until(
    async () => {
      const { rows } = await locker.query<{ pid: number }>(
        `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
      );
      return rows.length > 0 && rows;
    },
    { message: "the check waiting on the lock", timeoutMs },
  );

/** Moves a personal token's expiry (which announces its user's access change) and publishes `event` in the same transaction. */
async function tokenChangedWith(app: TestApp, tokenId: number, event: Parameters<typeof publish>[1]): Promise<void> {
  await app.pool.transaction(async (tx) => {
    await tx.query(sql.type(none)`update personal_access_tokens set expires_at = now() + interval '1 day' where id = ${tokenId}`);
    await publish(tx, event);
  });
}

/** The frames a socket received on `channel` after subscribing, as `event` or `event:status`. */
const on = (socket: RawSocket, channel: string) =>
  socket.frames
    .filter((f) => f.channel === channel && f.event !== "pusher_internal:subscription_succeeded")
    .map((f) => (f.event === "pusher:subscription_error" ? `${f.event}:${(f.data as { status: number }).status}` : f.event));

const ended = (socket: RawSocket, channel: string) => on(socket, channel).includes("pusher:subscription_error:403");

/**
 * Waits for `event` on each kept socket (a subscription whose check is still running holds it
 * back, while the marker is not held), then for a marker: the lost sockets would have had
 * anything published before it.
 */
async function settle(app: TestApp, event: string, kept: [RawSocket, string][], lost: RawSocket[]): Promise<void> {
  await until(() => kept.every(([socket, channel]) => on(socket, channel).includes(event)), { message: `${event} on every kept subscription`, timeoutMs });
  await marker(app, [...kept.map(([socket]) => socket), ...lost]);
}

/** A user with a password, and an OAuth access token of the first-party client (password grant, scope `*`). */
async function oauthToken(app: TestApp, user?: { id: number; email: string }) {
  const password = "realtime access";
  const passwordHash = await hashPassword(password);
  const account = user
    ? (await app.pool.query(sql.type(none)`update users set password_hash = ${passwordHash} where id = ${user.id}`), user)
    : await buildUser(app.pool, { passwordHash });
  const res = await request(app.url, "POST", "/api/oauth/token", {
    body: { grant_type: "password", client_id: app.config.oauth.clientId, client_secret: app.config.oauth.clientSecret, username: account.email, password, scope: "*" },
  });
  if (res.status !== 200) throw new Error(`no token: ${res.text}`);
  return { user: account, token: res.body.access_token as string };
}

async function boardOf(app: TestApp, token: string) {
  const api = client(app.url, token);
  const project = (await api.post("/api/projects", { name: "Watched" })).body.project;
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Live", columns: ["A"] })).body.board;
  return { api, project: project.id as number, channel: `private-kanban-board.${board.id}`, column: board.columns[0].id as number };
}

t.test("realtime access of one credential", async (t) => {
  const logLines: string[] = [];
  const app = await startTestApp(t, { logLines });
  const owner = await buildUserWithToken(app.pool);
  const { api, project, channel, column } = await boardOf(app, owner.token);

  t.test("an OAuth grant that goes ends its token's subscriptions while the token itself was not revoked", async (t) => {
    const member = await oauthToken(app);
    const bystander = await oauthToken(app);
    await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3, [bystander.user.id]: 3 }, [project]);
    const lost = await subscribed(t, app, member.token, [channel]);
    const kept = await subscribed(t, app, bystander.token, [channel]);
    // What upkeep's purge or a revoked authorization does: the Grant row goes, no jti is listed as revoked.
    await app.pool.query(sql.type(none)`delete from oauth_models where model = 'Grant' and account_id = ${String(member.user.id)}`);
    await until(() => ended(lost, channel), { message: "the subscription of the grant's token to end", timeoutMs });
    t.equal((await api.post("/api/kanban-cards", { column_id: column, title: "After the grant" })).status, 201);
    await settle(app, "CardCreated", [[kept, channel]], [lost]);
    t.same(on(lost, channel), ["pusher:subscription_error:403"], "nothing after the grant went");
    t.same(on(kept, channel), ["CardCreated"], "another account's OAuth subscription stands");
  });

  t.test("a personal token whose expiry is brought forward ends its subscriptions, one change after another", async (t) => {
    const member = await buildUser(app.pool);
    const expiring = await createPersonalToken(app.pool, member.id, "expiring");
    const kept = await createPersonalToken(app.pool, member.id, "kept", { expiresAt: new Date(Date.now() + 3_600_000) });
    const later = await createPersonalToken(app.pool, member.id, "later");
    await buildTeam(app.pool, owner.user.id, { [member.id]: 3 }, [project]);
    const [a, b, c] = [
      await subscribed(t, app, expiring.plainText, [channel]),
      await subscribed(t, app, kept.plainText, [channel]),
      await subscribed(t, app, later.plainText, [channel]),
    ];
    await app.pool.query(sql.type(none)`update personal_access_tokens set expires_at = now() - interval '1 second' where id = ${expiring.token.id}`);
    await until(() => ended(a, channel), { message: "the expired token's subscription to end", timeoutMs });
    await marker(app, [a, b, c]);
    t.same(on(b, channel), [], "a token expiring later keeps its subscription");
    // A second change, after the first check is done, is checked too.
    await app.pool.query(sql.type(none)`delete from personal_access_tokens where id = ${later.token.id}`);
    await until(() => ended(c, channel), { message: "the deleted token's subscription to end", timeoutMs });
    t.equal((await api.post("/api/kanban-cards", { column_id: column, title: "After" })).status, 201);
    await settle(app, "CardCreated", [[b, channel]], [a, c]);
    t.same(on(a, channel), ["pusher:subscription_error:403"]);
    t.same(on(b, channel), ["CardCreated"]);
    t.same(on(c, channel), ["pusher:subscription_error:403"]);
  });

  t.test("a token narrowed to lose the admin scope ends its administrator channel; the admin's other token keeps it", async (t) => {
    const admin = await buildUser(app.pool);
    await app.pool.query(sql.type(none)`insert into user_roles (user_id, role) values (${admin.id}, 'admin')`);
    const narrowed = await createPersonalToken(app.pool, admin.id, "narrowed", { abilities: ["read", "admin"] });
    const oauth = await oauthToken(app, admin);
    const adminChannel = "private-admin.jobs";
    const lost = await subscribed(t, app, narrowed.plainText, [adminChannel]);
    const kept = await subscribed(t, app, oauth.token, [adminChannel]);
    await app.pool.query(sql.type(none)`update personal_access_tokens set abilities = '{read}' where id = ${narrowed.token.id}`);
    await until(() => ended(lost, adminChannel), { message: "the narrowed token's admin subscription to end", timeoutMs });
    await publish(app.pool, { channel: adminChannel, event: "JobChanged", data: { id: 1 } });
    await settle(app, "JobChanged", [[kept, adminChannel]], [lost]);
    t.same(on(lost, adminChannel), ["pusher:subscription_error:403"]);
    t.same(on(kept, adminChannel), ["JobChanged"], "the OAuth token's scope (read write admin) still holds the admin scope");
  });

  t.test("events held back while a change that leaves access standing is checked arrive in order, and nothing else", async (t) => {
    const member = await buildUserWithToken(app.pool);
    const other = await createPersonalToken(app.pool, member.user.id, "other");
    await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project]);
    const socket = await subscribed(t, app, member.token, [channel]);
    // The owner's subscription is outside the first announcement, so it gets "First" at once:
    // once it has, the member's subscription holds "First" too.
    const owners = await subscribed(t, app, owner.token, [channel]);
    await marker(app, [socket]);
    const before = socket.frames.length;
    // The check cannot read the users table while another connection holds this lock, so what
    // follows happens while it runs.
    const locker = await lockUsers(t, app);
    // Announces user:<member> (a token of theirs changed): their subscription is held and checked.
    await tokenChangedWith(app, other.token.id, { channel, event: "First", data: { n: 1 } });
    await until(() => on(owners, channel).includes("First"), { message: "First on the owner's socket", timeoutMs });
    // A second announcement (`*`, as a project's sharing change sends) during the check keeps what was held so far.
    await app.pool.transaction(async (tx) => {
      await tx.query(sql.type(none)`select pg_notify('realtime_access', '*')`);
      await publish(tx, { channel, event: "Second", data: { n: 2 } });
    });
    await marker(app, [socket]);
    t.same(on(socket, channel), [], "nothing delivered while access is checked");
    await locker.query("commit");
    await publish(app.pool, { channel, event: "Third", data: { n: 3 } });
    await settle(app, "Third", [[socket, channel]], []);
    t.same(
      socket.frames.slice(before).map((f) => f.event).filter((event) => event !== markerEvent),
      ["First", "Second", "Third"],
      "the held events, in order; no other frame",
    );
  });

  t.test("a check the database cannot answer keeps the subscription and delivers what it held", async (t) => {
    const member = await buildUserWithToken(app.pool);
    const other = await createPersonalToken(app.pool, member.user.id, "other");
    await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project]);
    const socket = await subscribed(t, app, member.token, [channel]);
    const locker = await lockUsers(t, app);
    await tokenChangedWith(app, other.token.id, { channel, event: "Held", data: {} });
    // The check's query waits on the lock; its connection is then lost.
    const pids = await waitingOnLock(locker);
    for (const { pid } of pids) await locker.query("select pg_terminate_backend($1)", [pid]);
    await locker.query("commit");
    await settle(app, "Held", [[socket, channel]], []);
    t.same(on(socket, channel), ["Held"], "kept, not ended, when the check failed");
    const warnings = logLines.map((line) => JSON.parse(line) as { level: number; msg: string; channel?: string }).filter((entry) => entry.level === 40);
    t.ok(
      warnings.some((entry) => entry.msg === "could not re-authorize a realtime subscription" && entry.channel === channel),
      "the failed check is logged as a warning naming the channel",
    );
  });

  t.test("a subscription replaced while the old one's check runs is not ended by that check", async (t) => {
    const member = await buildUser(app.pool);
    const expiring = await createPersonalToken(app.pool, member.id, "expiring");
    const other = await createPersonalToken(app.pool, member.id, "other");
    await buildTeam(app.pool, owner.user.id, { [member.id]: 3 }, [project]);
    const socket = await subscribed(t, app, expiring.plainText, [channel]);
    const socketId = (socket.frames[0]!.data as { socket_id: string }).socket_id;
    const granted = await client(app.url, other.plainText).post("/api/broadcasting/auth", { socket_id: socketId, channel_name: channel });
    const locker = await lockUsers(t, app);
    await app.pool.query(sql.type(none)`update personal_access_tokens set expires_at = now() - interval '1 second' where id = ${expiring.token.id}`);
    await waitingOnLock(locker);
    // While the expired token's subscription is checked, the socket leaves the channel and
    // joins it again with the other token's grant. The new subscription's own check waits
    // its turn, so its success comes after the commit; the pong (frames are handled in
    // order) says the server has taken the new subscription.
    socket.send("pusher:unsubscribe", { channel });
    socket.send("pusher:subscribe", { channel, auth: granted.body.auth, channel_data: granted.body.channel_data });
    socket.send("pusher:ping", {});
    await socket.waitFor("pusher:pong", timeoutMs);
    await locker.query("commit");
    const joined = () => socket.frames.filter((f) => f.event === "pusher_internal:subscription_succeeded" && f.channel === channel).length;
    await until(() => joined() === 2, { message: "subscribed again", timeoutMs });
    // A second change for the member, with an event: checked after the first check is done
    // (one pass at a time), so the event, or an error, comes after whatever that check did.
    await tokenChangedWith(app, other.token.id, { channel, event: "After", data: {} });
    await until(() => on(socket, channel).includes("After") || ended(socket, channel), { message: "After, or the end of the subscription", timeoutMs });
    t.same(on(socket, channel), ["After"], "the new subscription stands: the old one's denial ended nothing");
  });

  t.test("an event committed with the change that ends access never reaches the socket that lost it", async (t) => {
    const member = await buildUserWithToken(app.pool);
    const team = await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project]);
    const lost = await subscribed(t, app, member.token, [channel]);
    const kept = await subscribed(t, app, owner.token, [channel]);
    await app.pool.transaction(async (tx) => {
      await tx.query(sql.type(none)`delete from team_members where team_id = ${team} and user_id = ${member.user.id}`);
      await publish(tx, { channel, event: "AfterRemoval", data: {} });
    });
    await until(() => ended(lost, channel), { message: "the removed member's subscription to end", timeoutMs });
    await settle(app, "AfterRemoval", [[kept, channel]], [lost]);
    t.same(on(lost, channel), ["pusher:subscription_error:403"], "held while checked, then dropped");
    t.same(on(kept, channel), ["AfterRemoval"]);
  });
});

t.test("notifications lost while the LISTEN connection was down are made up by checking every subscription, and the channels kept are told", async (t) => {
  const app = await startTestApp(t); // REALTIME_REAUTH_S stays at its default (minutes): no timer helps here
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const { project, channel } = await boardOf(app, owner.token);
  const team = await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project]);
  const lost = await subscribed(t, app, member.token, [channel]);
  const kept = await subscribed(t, app, owner.token, [channel]);
  await app.pool.transaction(async (tx) => {
    // Triggers off: the NOTIFY never comes, as if it had been sent while the listener was away.
    await tx.query(sql.type(none)`set local session_replication_role = replica`);
    await tx.query(sql.type(none)`delete from team_members where team_id = ${team} and user_id = ${member.user.id}`);
  });
  // Registered after the re-authorizer's own callback, so it runs after that one has returned
  // (one that throws is logged and this one still runs: then the wait for the end fails on its guard).
  let reconnected = false;
  app.deps.hub.onReconnect(() => (reconnected = true));
  await app.pool.query(sql.type(none)`
    select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = 'schemaforge-listener' and datname = current_database()`);
  await until(() => reconnected, { message: "the LISTEN connection to come back", timeoutMs });
  await until(() => ended(lost, channel), { message: "the re-check after the reconnect", timeoutMs });
  await publish(app.pool, { channel, event: "After", data: {} });
  await settle(app, "After", [[kept, channel]], [lost]);
  t.same(on(lost, channel), ["pusher:subscription_error:403"], "the missed-events notice is dropped with the ended subscription");
  t.same(on(kept, channel), ["EventsMissed", "After"], "the owner's subscription stands and is told that events of the gap may be missing, before the events after it");
  for (const socket of [lost, kept]) t.same(on(socket, markerChannel).filter((e) => e === "EventsMissed").length, 1, "a public channel is told once too");
});

t.test("what a subscription and its authorization must look like", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const { channel } = await boardOf(app, owner.token);
  const api = client(app.url, owner.token);
  const { key, secret } = app.config.realtime;

  t.test("channel names up to 164 characters of the allowed set; socket ids of up to 20 digits a side", async (t) => {
    const socket = await rawSocket(t, app.url, KEY);
    await socket.waitFor("pusher:connection_established");
    const longest = `public-${"a".repeat(157)}`;
    for (const name of [longest, "public-A_z-0=1@2,3.4;5"]) {
      socket.send("pusher:subscribe", { channel: name });
      await until(() => socket.frames.some((f) => f.event === "pusher_internal:subscription_succeeded" && f.channel === name), { message: name, timeoutMs });
    }
    for (const name of [`${longest}a`, "", "public-a b", "public-a/b", 7]) {
      socket.frames.length = 0;
      socket.send("pusher:subscribe", { channel: name });
      const refused = await socket.waitFor("pusher:subscription_error", timeoutMs);
      t.same(refused.data, { type: "AuthError", error: "Invalid channel name", status: 400 }, `${JSON.stringify(name)} is refused`);
      t.equal(refused.channel, typeof name === "string" ? name : "", "named by the channel when it is a string");
    }
    const twenty = "12345678901234567890";
    const signed = [`${twenty}.${twenty}`, "1.2"];
    for (const socket_id of signed) t.equal((await api.post("/api/broadcasting/auth", { socket_id, channel_name: channel })).status, 200, socket_id);
    for (const socket_id of [`${twenty}1.2`, `1.${twenty}1`, "a1.2", "1.2a", "1.", ".2", "1.2.3"]) {
      t.equal((await api.post("/api/broadcasting/auth", { socket_id, channel_name: channel })).status, 422, `${socket_id} is no socket id`);
    }
    for (const channel_name of [`private-job.${"1".repeat(153)}`, `${channel} `, `x${channel}`]) {
      t.equal((await api.post("/api/broadcasting/auth", { socket_id: "1.2", channel_name })).status, 422, `${channel_name} is no channel name`);
    }
  });

  t.test("a private subscription needs a string signature of this socket, channel and grant", async (t) => {
    const socket = await rawSocket(t, app.url, KEY);
    const socketId = ((await socket.waitFor("pusher:connection_established")).data as { socket_id: string }).socket_id;
    const granted = await api.post("/api/broadcasting/auth", { socket_id: socketId, channel_name: channel });
    const grant = granted.body.channel_data as string;
    // Pusher's form: the app key, a colon, and the hex HMAC-SHA256 of socket_id:channel:channel_data.
    const hmac = createHmac("sha256", secret).update(`${socketId}:${channel}:${grant}`).digest("hex");
    t.equal(granted.body.auth, `${key}:${hmac}`);
    const refused = async (data: Record<string, unknown>, why: string) => {
      socket.frames.length = 0;
      socket.send("pusher:subscribe", { channel, ...data });
      t.match(await socket.waitFor("pusher:subscription_error", timeoutMs), { channel, data: { type: "AuthError", status: 401, error: /^Invalid signature: authorize the channel at \/api\/broadcasting\/auth / } }, why);
    };
    await refused({ channel_data: grant }, "no auth");
    await refused({ auth: 12345, channel_data: grant }, "an auth that is not a string");
    await refused({ auth: `${granted.body.auth}0`, channel_data: grant }, "an auth one character too long");
    await refused({ auth: (granted.body.auth as string).replace(/.$/, (c) => (c === "0" ? "1" : "0")), channel_data: grant }, "an auth of the right length, one digit off");
    await refused({ auth: granted.body.auth, channel_data: JSON.parse(grant) }, "a grant sent as an object, not the signed text");
    // The grant is JSON: white space after it is still the same grant, up to 4096 characters in all.
    const padded = (length: number) => grant + " ".repeat(length - grant.length);
    await refused({ auth: signChannel(key, secret, socketId, channel, padded(4097)), channel_data: padded(4097) }, "a signed grant of 4097 characters");
    socket.send("pusher:subscribe", { channel, auth: signChannel(key, secret, socketId, channel, padded(4096)), channel_data: padded(4096) });
    t.match(await socket.waitFor("pusher_internal:subscription_succeeded", timeoutMs), { channel }, "a signed grant of 4096 characters subscribes");
  });

  t.test("a channel authorizer is registered for a prefix private-<area>. and decides on the id after it", async (t) => {
    for (const prefix of ["private-area", "public-area.", "private-Area.", "private-area.x.", "xprivate-area.", "private-.", "private-area.\n"]) {
      t.throws(() => registerChannelAuthorizer(prefix, async () => true), { message: `Channel prefix ${prefix} must look like private-area.` }, `${JSON.stringify(prefix)} is refused`);
    }
    const asked: string[] = [];
    registerChannelAuthorizer("private-test-area.", async (_deps, user, id) => (asked.push(id), user.id === owner.user.id && id !== "closed"));
    t.equal((await api.post("/api/broadcasting/auth", { socket_id: "1.2", channel_name: "private-test-area.a.b" })).status, 200);
    t.equal((await api.post("/api/broadcasting/auth", { socket_id: "1.2", channel_name: "private-test-area.closed" })).status, 403);
    t.equal((await api.post("/api/broadcasting/auth", { socket_id: "1.2", channel_name: "private-test-area" })).status, 403, "no id part: no authorizer");
    t.same(asked, ["a.b", "closed"], "the authorizer sees the id after the prefix");
  });
});
