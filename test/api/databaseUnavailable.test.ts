/**
 * While the database cannot be reached (here: it refuses connections and its backends are
 * ended, as in a restart or a fail-over), the API answers 503 `database_unavailable` with
 * Retry-After, never a 500 or a stack trace, and serves again as soon as the database is back,
 * without a restart of the process.
 */
import pg from "pg";
import t from "tap";
import { createPool } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { admin as withAdmin, freshDatabase } from "../support/db.ts";
import { startDbProxy } from "../support/dbProxy.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { until } from "../support/wait.ts";

const admin = (text: string) => withAdmin((c) => c.query(text));

t.test("an unreachable database answers 503 database_unavailable, and the service recovers", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const name = app.db.name;
  const open = () => admin(`alter database ${name} allow_connections true`);
  t.teardown(open);

  t.equal((await api.get("/api/user")).status, 200, "served while the database is up");

  await admin(`alter database ${name} allow_connections false`);
  await admin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`);

  for (const attempt of ["on a pooled connection the server ended", "on a new connection the server refuses"]) {
    const res = await api.get("/api/user");
    t.equal(res.status, 503, attempt);
    t.same(res.body, { message: "The database cannot be reached just now; try again shortly.", code: "database_unavailable" }, `${attempt}: the error body, no stack`);
    t.equal(res.headers.get("retry-after"), "5", `${attempt}: Retry-After`);
  }
  const write = await api.post("/api/projects", { name: "Made while the database was away" });
  t.equal(write.status, 503, "a write is refused alike");
  t.equal(write.body.code, "database_unavailable");
  const german = await api.get("/api/user", undefined, { headers: { "accept-language": "de" } });
  t.equal(german.body.message, "Die Datenbank ist gerade nicht erreichbar. Bitte versuchen Sie es in Kürze erneut.", "in the caller's language");
  const health = await api.get("/api/health");
  t.equal(health.status, 503, "health says so");
  t.equal(health.body.database.ok, false);

  await open();
  const back = await api.get("/api/user");
  t.equal(back.status, 200, "served again once the database is back, without a restart");
  t.equal(back.body.id ?? back.body.data?.id, user.id);
  const projects = await api.get("/api/projects");
  t.equal(projects.status, 200);
  t.notOk(JSON.stringify(projects.body).includes("Made while the database was away"), "the refused write left nothing");
});

t.test("through a restart: connections ended, new ones refused, then the server back", async (t) => {
  const db = await freshDatabase(t);
  const proxy = await startDbProxy(t);
  const url = proxy.url(db.name);
  const pool = await createPool(url, { maxPoolSize: 5 });
  const pgPool = new pg.Pool({ connectionString: url, max: 2 });
  t.teardown(async () => {
    await pool.end();
    await pgPool.end();
  });
  const app = await startTestApp(t, { db: { ...db, url, pool, pgPool } });
  const { token } = await buildUserWithToken(db.pool);
  const api = client(app.url, token);
  t.equal((await api.get("/api/user")).status, 200);

  await proxy.cut();
  for (const attempt of ["first", "second"]) {
    const res = await api.get("/api/user");
    t.equal(res.status, 503, `${attempt} request while the server is away`);
    t.equal(res.body.code, "database_unavailable");
  }
  await proxy.restore();
  t.equal((await api.get("/api/user")).status, 200, "served again, by the same process");
  await until(async () => (await api.get("/api/health")).body.realtime?.listening === true, { timeoutMs: 30_000, message: "the LISTEN connection back" });
  t.pass("its LISTEN connection is back");
});
