/**
 * Realtime survives a real restart of PostgreSQL (not just a killed backend, which
 * realtime.test.ts covers): the service runs on an embedded server of this test's own,
 * which is shut down ("fast": every connection is closed) and started again on the same
 * port and data. A pusher-js client subscribed before the restart then receives an event
 * published after it through the ordinary path (NOTIFY on the pool, the LISTEN
 * connection, the hub), and /api/health answers 200 again.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import t from "tap";
import { startEmbeddedPostgres } from "../../shared/db/embedded.ts";
import { migrate } from "../../shared/db/migrate.ts";
import { createPool } from "../../shared/db/pool.ts";
import { publish } from "../../shared/events/publish.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { until } from "../support/wait.ts";
import { connectPusher } from "../support/pusher.ts";
import { echoKind } from "../support/testTasks.ts";

const KEY = "test-app-key";
/** Test speed over durability, as the shared test cluster does. */
const settings = { fsync: "off", synchronous_commit: "off", full_page_writes: "off" };

t.test("after PostgreSQL restarts, a subscribed client gets the next event and /api/health is 200 again", async (t) => {
  const base = await mkdtemp(path.join(os.tmpdir(), "sf-restart-"));
  const dataDir = path.join(base, "pg");
  let server = await startEmbeddedPostgres({ dataDir, settings });
  t.teardown(async () => {
    await server.stop();
    await rm(base, { recursive: true, force: true });
  });
  await migrate(server.url);
  const pool = await createPool(server.url, { maxPoolSize: 5 });
  const pgPool = new pg.Pool({ connectionString: server.url, max: 2 });
  t.teardown(async () => {
    await pool.end();
    await pgPool.end();
  });
  const app = await startTestApp(t, { db: { url: server.url, name: "postgres", pool, pgPool } });

  const owner = await buildUserWithToken(app.pool);
  const job = await app.pool.transaction((tx) => enqueue(tx, echoKind, { value: 1 }, { userId: owner.user.id }));
  const pusher = await connectPusher(t, app.url, KEY, owner.token);
  const channel = await pusher.subscribe(`private-job.${job.id}`);
  const before = pusher.next(channel, "BeforeRestart");
  await publish(app.pool, { channel: `private-job.${job.id}`, event: "BeforeRestart", data: { n: 1 } });
  t.same(await before, { n: 1 }, "events flow before the restart");

  const reconnected = new Promise<void>((resolve) => app.deps.hub.onReconnect(() => resolve()));
  const port = server.port;
  await server.stop();
  t.equal((await client(app.url).get("/api/health")).status, 503, "while the database is down, /api/health says so");
  server = await startEmbeddedPostgres({ dataDir, port, settings });
  t.equal(server.port, port, "PostgreSQL is back on the same port");
  const restartedAt = Date.now();

  await reconnected;
  const health = await until(async () => {
    const res = await client(app.url).get("/api/health");
    return res.status === 200 ? res : null;
  }, { message: "/api/health to answer 200 again" });
  t.equal(health.status, 200, `/api/health answers 200 again (${JSON.stringify(health.body)})`);
  t.equal(health.body.realtime.listening, true, "listening again");

  const after = pusher.next(channel, "AfterRestart", 30_000);
  await publish(app.pool, { channel: `private-job.${job.id}`, event: "AfterRestart", data: { n: 2 } });
  t.same(await after, { n: 2 }, "the client subscribed before the restart receives an event published after it");
  t.comment(`received ${Date.now() - restartedAt} ms after the restart`);
});
