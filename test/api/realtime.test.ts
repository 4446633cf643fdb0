import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { publish } from "../../shared/events/publish.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { spawnReady } from "../support/processes.ts";
import { connectPusher, rawSocket } from "../support/pusher.ts";
import { echoKind, progressKind, publishKind, testTasks } from "../support/testTasks.ts";

const KEY = "test-app-key";

t.test("realtime (Pusher protocol)", async (t) => {
  const app = await startTestApp(t, { worker: true, extraTasks: testTasks });
  const owner = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);

  t.test("pusher-js follows a job: JobProgress then JobCompleted", async (t) => {
    const pusher = await connectPusher(t, app.url, KEY, owner.token);
    t.match(pusher.socketId, /^\d+\.\d+$/);
    // Held back until the subscription is confirmed, then released: however long subscribing
    // takes, no event can come before the client listens.
    const job = await app.pool.transaction((tx) =>
      enqueue(tx, progressKind, { steps: 2 }, { userId: owner.user.id, runAt: new Date(Date.now() + 3_600_000) }),
    );
    const channel = await pusher.subscribe(`private-job.${job.id}`);
    const progress = pusher.next(channel, "JobProgress");
    const completed = pusher.next(channel, "JobCompleted");
    const released = await app.pool.anyFirst(sql.type(z.object({ id: z.string() }))`
      update graphile_worker._private_jobs set run_at = now() where key = ${`job:${job.id}`} returning id::text as id`);
    t.equal(released.length, 1, "the held job is released after pusher:subscription_succeeded");
    t.match(await progress, { job_id: job.id, message: "step 1" });
    const done = await completed;
    t.equal(done.status, "succeeded");
    t.same(done.job.result, { steps: 2 });
  });

  t.test("another user's job channel is refused by the auth endpoint", async (t) => {
    const job = await app.pool.transaction((tx) => enqueue(tx, echoKind, { value: 1 }, { userId: owner.user.id }));
    const pusher = await connectPusher(t, app.url, KEY, stranger.token);
    const error = await pusher.subscribe(`private-job.${job.id}`).then(
      () => undefined,
      (e: { status?: number }) => e,
    );
    t.equal(error?.status, 403);
    const api = client(app.url, stranger.token);
    const unknownPrefix = await api.post("/api/broadcasting/auth", { socket_id: "1.2", channel_name: "private-secret.1" });
    t.equal(unknownPrefix.status, 403);
    const unauthenticated = await client(app.url).post("/api/broadcasting/auth", { socket_id: "1.2", channel_name: `private-job.${job.id}` });
    t.equal(unauthenticated.status, 401);
    const malformed = await api.post("/api/broadcasting/auth", { socket_id: "x", channel_name: "private-job.1" });
    t.equal(malformed.status, 422);
    t.ok(malformed.body.errors.socket_id);
  });

  t.test("the server refuses a forged or replayed signature", async (t) => {
    const job = await app.pool.transaction((tx) => enqueue(tx, echoKind, { value: 1 }, { userId: owner.user.id }));
    const socket = await rawSocket(t, app.url, KEY);
    const established = await socket.waitFor("pusher:connection_established");
    const socketId = (established.data as { socket_id: string }).socket_id;
    // a signature obtained for another socket must not work on this one
    const other = await client(app.url, owner.token).post("/api/broadcasting/auth", { socket_id: "123.456", channel_name: `private-job.${job.id}` });
    t.equal(other.status, 200);
    socket.send("pusher:subscribe", { channel: `private-job.${job.id}`, auth: other.body.auth, channel_data: other.body.channel_data });
    const refused = await socket.waitFor("pusher:subscription_error");
    t.match(refused, { channel: `private-job.${job.id}`, data: { status: 401 } });
    const own = await client(app.url, owner.token).post("/api/broadcasting/auth", { socket_id: socketId, channel_name: `private-job.${job.id}` });
    socket.send("pusher:subscribe", { channel: `private-job.${job.id}`, auth: own.body.auth, channel_data: own.body.channel_data });
    t.match(await socket.waitFor("pusher_internal:subscription_succeeded"), { channel: `private-job.${job.id}` });
  });

  t.test("ping/pong, error frames and unknown app keys", async (t) => {
    const socket = await rawSocket(t, app.url, KEY);
    await socket.waitFor("pusher:connection_established");
    socket.send("pusher:ping", {});
    t.ok(await socket.waitFor("pusher:pong"));
    socket.ws.send("not json");
    t.match(await socket.waitFor("pusher:error"), { data: { message: /Malformed/ } });
    socket.send("client-typing", { channel: "private-job.1" });
    const bad = await rawSocket(t, app.url, "wrong-key");
    t.match(await bad.waitFor("pusher:error"), { data: { code: 4001 } });
    t.equal((await bad.closed).code, 4001);
    const oldProtocol = await rawSocket(t, app.url, KEY, "protocol=3");
    t.equal((await oldProtocol.closed).code, 4007);
  });

  t.test("events over the NOTIFY size limit travel by reference and arrive intact", async (t) => {
    const job = await app.pool.transaction((tx) => enqueue(tx, echoKind, { value: 1 }, { userId: owner.user.id }));
    const pusher = await connectPusher(t, app.url, KEY, owner.token);
    const channel = await pusher.subscribe(`private-job.${job.id}`);
    const big = "x".repeat(20_000);
    // Over 65,535 bytes, with multi-byte characters: the frame's 64-bit length form, in bytes.
    const huge = "é€".repeat(20_000);
    const received = pusher.next(channel, "Big");
    const hugeReceived = pusher.next(channel, "Huge");
    const small = pusher.next(channel, "Small");
    await publish(app.pool, { channel: `private-job.${job.id}`, event: "Big", data: { big } });
    await publish(app.pool, { channel: `private-job.${job.id}`, event: "Huge", data: { huge } });
    await publish(app.pool, { channel: `private-job.${job.id}`, event: "Small", data: { n: 1 } });
    t.equal((await received).big.length, 20_000);
    t.equal((await hugeReceived).huge, huge);
    t.same(await small, { n: 1 });
    const spilled = await app.pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from realtime_payloads`);
    t.ok(spilled >= 1, "the large event was stored by reference");
  });

  t.test("an event published by a worker in another OS process reaches clients of every web process", async (t) => {
    const second = await startTestApp(t, { db: app.db });
    const job = await app.pool.transaction((tx) => enqueue(tx, echoKind, { value: 1 }, { userId: owner.user.id }));
    const onFirst = await connectPusher(t, app.url, KEY, owner.token);
    const onSecond = await connectPusher(t, second.url, KEY, owner.token);
    const c1 = await onFirst.subscribe(`private-job.${job.id}`);
    const c2 = await onSecond.subscribe(`private-job.${job.id}`);
    const worker = await spawnReady(t, "test/support/workerProcess.ts", { DATABASE_URL: app.db.url });
    await app.worker?.stop(); // only the separate process may run the job
    // Listening starts once the worker is up (its start is no part of the wait); the event is
    // published only after this, so it cannot come earlier.
    const first = onFirst.next(c1, "Hello", 60_000);
    const secondEvent = onSecond.next(c2, "Hello", 60_000);
    await app.pool.transaction((tx) =>
      enqueue(tx, publishKind, { channel: `private-job.${job.id}`, event: "Hello", data: { text: "from afar" } }, { userId: owner.user.id }),
    );
    const [a, b] = await Promise.all([first, secondEvent]);
    t.equal(a.text, "from afar");
    t.equal(a.worker_pid, worker.pid, "published by the separate worker process");
    t.not(worker.pid, process.pid);
    t.same(b, a);
  });

  t.test("the LISTEN bridge reconnects after its connection is killed", async (t) => {
    const api = client(app.url);
    const job = await app.pool.transaction((tx) => enqueue(tx, echoKind, { value: 1 }, { userId: owner.user.id }));
    const pusher = await connectPusher(t, app.url, KEY, owner.token);
    const channel = await pusher.subscribe(`private-job.${job.id}`);
    // What the socket receives, in order, from the cut on.
    const received: string[] = [];
    channel.bind_global((event: string) => received.push(event));
    const missed = pusher.next<{ since: string; until: string }>(channel, "EventsMissed");
    const cutAt = Date.now();
    const reconnected = new Promise<void>((resolve) => app.deps.hub.onReconnect(() => resolve()));
    await app.pool.query(sql.type(z.object({}))`
      select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = 'schemaforge-listener' and datname = current_database()`);
    await reconnected;
    t.equal((await api.get("/api/health")).body.realtime.listening, true, "listening again");
    // Events published while the LISTEN connection was away are lost to this process's
    // sockets; each subscribed channel is told so, with the gap, once its access is checked.
    const gap = await missed;
    const since = Date.parse(gap.since);
    const until = Date.parse(gap.until);
    t.ok(since >= cutAt - 1000 && since <= until && until <= Date.now(), `the gap ${gap.since} → ${gap.until} lies between the cut and now`);
    const after = pusher.next(channel, "AfterRestart");
    await publish(app.pool, { channel: `private-job.${job.id}`, event: "AfterRestart", data: { ok: true } });
    t.same(await after, { ok: true });
    t.same(received, ["EventsMissed", "AfterRestart"], "the notice once, before the events after the gap");
  });
});
