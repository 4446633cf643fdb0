/**
 * The operator console's `JobChanged` notifications travel only while an operator watches
 * (sql/migrations/0130): with no subscriber on `private-admin.jobs` a job's insert, start and
 * finish NOTIFY nothing on the `realtime` channel (a raw LISTEN hears none); while an
 * operator's socket is subscribed they do, and the socket gets each; after the last one
 * leaves they stop again. And no change falls between the two: a job transaction that saw
 * nobody watching holds a new subscriber's `subscription_succeeded` until it commits, so the
 * console's first read after it sees the job.
 *
 * "Heard nothing" is decided by order: a marker NOTIFYed after the job's last change arrives
 * after any notification that change sent.
 */
import pg from "pg";
import t, { type Test } from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { JOB_CONSOLE_CHANNEL, JOB_CONSOLE_WATCH_KEY } from "../../shared/jobs/consoleWatch.ts";
import { findJob } from "../../shared/jobs/records.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { untilWaitingOnLocks } from "../support/lockWaits.ts";
import { rawSocket, type RawSocket } from "../support/pusher.ts";
import { echoKind, testTasks } from "../support/testTasks.ts";
import { until } from "../support/wait.ts";

const KEY = "test-app-key";
const none = z.object({});
const timeoutMs = 30_000;

interface Heard {
  channel: string;
  event: string;
  data: { id?: number; status?: string; n?: number };
}

/** A raw LISTEN on the realtime NOTIFY channel, recording every payload. */
async function rawListener(t: Test, app: TestApp): Promise<{ heard: Heard[]; marker: () => Promise<void> }> {
  const listener = new pg.Client({ connectionString: app.db.url });
  await listener.connect();
  t.teardown(() => listener.end());
  const heard: Heard[] = [];
  listener.on("notification", (n) => heard.push(JSON.parse(n.payload ?? "null") as Heard));
  await listener.query("listen realtime");
  let markers = 0;
  return {
    heard,
    /** NOTIFYs a marker and waits for it: every notification committed before it has arrived. */
    marker: async () => {
      const n = (markers += 1);
      await app.pool.query(sql.type(none)`select pg_notify('realtime', ${JSON.stringify({ channel: "public-marker", event: "Marker", data: { n } })})`);
      await until(() => heard.some((h) => h.event === "Marker" && h.data.n === n), { message: `marker ${n}`, timeoutMs });
    },
  };
}

/** The statuses of the JobChanged events about job `id`, in order (from a raw listener or a socket's frames). */
const statusesOf = (heard: readonly { event: string; data: unknown }[], id: number) =>
  heard.filter((h) => h.event === "JobChanged" && (h.data as Heard["data"]).id === id).map((h) => (h.data as Heard["data"]).status);

/** Enqueues an echo job and waits until the worker has finished it. */
async function runJob(app: TestApp, value: number): Promise<number> {
  const job = await enqueue(app.pool, echoKind, { value });
  await until(async () => (await findJob(app.pool, job.id))?.status === "succeeded", { message: `job ${job.id} to succeed`, timeoutMs });
  return job.id;
}

/** The sessions holding (granted) the console's watch lock. */
async function watchers(app: TestApp): Promise<readonly number[]> {
  return app.pool.anyFirst(sql.type(z.object({ pid: z.number() }))`
    select pid from pg_locks where locktype = 'advisory' and granted and objsubid = 1
      and database = (select oid from pg_database where datname = current_database())
      and ((classid::bigint << 32) | objid::bigint) = ${JOB_CONSOLE_WATCH_KEY.toString()}::bigint`);
}
const watched = async (app: TestApp) => (await watchers(app)).length > 0;

t.test("the console's JobChanged notifications", async (t) => {
  const app = await startTestApp(t, { worker: true, extraTasks: testTasks });
  const admin = await buildUserWithToken(app.pool);
  await app.pool.query(sql.type(none)`insert into user_roles (user_id, role) values (${admin.user.id}, 'admin')`);
  const api = client(app.url, admin.token);

  /** A socket of the administrator; `subscribe` sends the subscription and returns the frame index it started at. */
  const operatorSocket = async (t: Test): Promise<{ socket: RawSocket; subscribe: () => Promise<number> }> => {
    const socket = await rawSocket(t, app.url, KEY);
    const socketId = ((await socket.waitFor("pusher:connection_established", timeoutMs)).data as { socket_id: string }).socket_id;
    const granted = await api.post("/api/broadcasting/auth", { socket_id: socketId, channel_name: JOB_CONSOLE_CHANNEL });
    t.equal(granted.status, 200, granted.text);
    return {
      socket,
      subscribe: async () => {
        const from = socket.frames.length;
        socket.send("pusher:subscribe", { channel: JOB_CONSOLE_CHANNEL, auth: granted.body.auth, channel_data: granted.body.channel_data });
        return from;
      },
    };
  };
  const succeeded = (socket: RawSocket, from = 0) =>
    socket.frames.slice(from).some((f) => f.channel === JOB_CONSOLE_CHANNEL && f.event === "pusher_internal:subscription_succeeded");

  t.test("nobody watches: a job's insert, start and finish notify nothing", async (t) => {
    const { heard, marker } = await rawListener(t, app);
    t.notOk(await watched(app), "no watcher");
    const id = await runJob(app, 1);
    await marker();
    t.same(statusesOf(heard, id), [], "no JobChanged for the job");
    t.same(heard.filter((h) => h.channel === JOB_CONSOLE_CHANNEL), [], "nothing on the console's channel at all");
  });

  t.test("an operator subscribes: each step is announced, to the socket and on the channel; after they leave, nothing", async (t) => {
    const { heard, marker } = await rawListener(t, app);
    const { socket, subscribe } = await operatorSocket(t);
    const from = await subscribe();
    await until(() => succeeded(socket, from), { message: "subscription_succeeded", timeoutMs });
    t.ok(await watched(app), "the web process holds the watch lock");

    const id = await runJob(app, 2);
    await until(() => statusesOf(socket.frames, id).includes("succeeded"), { message: "JobChanged succeeded on the socket", timeoutMs });
    t.same(statusesOf(socket.frames, id), ["queued", "running", "succeeded"], "the socket heard the insert, the start and the finish");
    await marker();
    t.same(statusesOf(heard, id), ["queued", "running", "succeeded"], "each was NOTIFYed once");

    socket.send("pusher:unsubscribe", { channel: JOB_CONSOLE_CHANNEL });
    await until(async () => !(await watched(app)), { message: "the watch lock to be given up", timeoutMs });
    const later = await runJob(app, 3);
    await marker();
    t.same(statusesOf(heard, later), [], "no JobChanged once the last subscriber left");
  });

  t.test("a closed socket gives the watch up too", async (t) => {
    const { socket, subscribe } = await operatorSocket(t);
    await subscribe();
    await until(() => succeeded(socket), { message: "subscription_succeeded", timeoutMs });
    t.ok(await watched(app), "the web process holds the watch lock");
    socket.ws.close();
    await until(async () => !(await watched(app)), { message: "the watch lock to be given up", timeoutMs });
  });

  t.test("the watch survives a lost LISTEN connection: taken again before the subscribers are told events were missed", async (t) => {
    const { socket, subscribe } = await operatorSocket(t);
    await subscribe();
    await until(() => succeeded(socket), { message: "subscription_succeeded", timeoutMs });
    const before = await watchers(app);
    t.equal(before.length, 1, "one watcher: the web process's LISTEN connection");
    let watchersOnReconnect: Promise<readonly number[]> | undefined;
    const reconnected = new Promise<void>((resolve) => {
      const off = app.deps.hub.onReconnect(() => {
        off();
        watchersOnReconnect = watchers(app);
        resolve();
      });
    });
    await app.pool.query(sql.type(none)`
      select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = 'schemaforge-listener' and datname = current_database()`);
    await reconnected;
    const after = await watchersOnReconnect!;
    t.equal(after.length, 1, "the lock is held again when the reconnect callbacks run");
    t.not(after[0], before[0], "by the new connection");
    await socket.waitFor("EventsMissed", timeoutMs);
    const id = await runJob(app, 5);
    await until(() => statusesOf(socket.frames, id).includes("succeeded"), { message: "JobChanged succeeded on the socket", timeoutMs });
    t.same(statusesOf(socket.frames, id), ["queued", "running", "succeeded"], "announced again after the reconnect");
    socket.ws.close();
    await until(async () => !(await watched(app)), { message: "the watch lock to be given up", timeoutMs });
  });

  t.test("a subscriber arriving while a job transaction that saw nobody watching is open waits for its commit, then reads its job", async (t) => {
    const { heard, marker } = await rawListener(t, app);
    const { socket, subscribe } = await operatorSocket(t);
    let commit: () => void = () => {};
    const gate = new Promise<void>((resolve) => (commit = resolve));
    let jobId = 0;
    const enqueued = app.pool.transaction(async (tx) => {
      jobId = (await enqueue(tx, echoKind, { value: 4 })).id;
      await gate;
    });
    await until(() => jobId, { message: "the job inserted (uncommitted)", timeoutMs });

    const from = await subscribe();
    await untilWaitingOnLocks(app.pool, 1, "the web process's watch lock to wait for the job's transaction", timeoutMs);
    // A pong answered after the wait began: subscription_succeeded would have come before it.
    const pongs = socket.frames.filter((f) => f.event === "pusher:pong").length;
    socket.send("pusher:ping", {});
    await until(() => socket.frames.filter((f) => f.event === "pusher:pong").length > pongs, { message: "pusher:pong", timeoutMs });
    t.notOk(succeeded(socket, from), "no subscription_succeeded while the job's transaction is open");

    commit();
    await enqueued;
    await until(() => succeeded(socket, from), { message: "subscription_succeeded after the commit", timeoutMs });
    const listed = await api.get("/api/admin/jobs?kind=test__echo&per_page=100");
    t.equal(listed.status, 200, listed.text);
    t.ok((listed.body.data as { id: number }[]).some((j) => j.id === jobId), "the console's first read after subscribing sees the job");
    t.equal(heard.filter((h) => h.event === "JobChanged" && h.data.id === jobId && h.data.status === "queued").length, 0, "its insert, unwatched, notified nothing");

    // From here on it is watched: the worker's start and finish of the same job are announced.
    await until(() => statusesOf(socket.frames, jobId).includes("succeeded"), { message: "JobChanged succeeded on the socket", timeoutMs });
    t.same(statusesOf(socket.frames, jobId), ["running", "succeeded"]);
    await marker();
  });
});
