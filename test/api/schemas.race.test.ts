/**
 * Content written by jobs into a project that stopped accepting changes after the request:
 * the request commits its schema revision (or its execute job), then the project is locked,
 * archived, soft-locked or deleted, then the job runs. No worker runs in this app until the
 * test starts one, so the order is the test's. The job must write nothing and fail with the
 * status the route would have answered (423, 409, 402, 404); an awaiting request answers it.
 */
import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { findJob, isFinished, type JobRow } from "../../shared/jobs/records.ts";
import { createLogger } from "../../shared/logger.ts";
import { applyRevision, revisionRow } from "../../shared/schemas/store.ts";
import { parseDdl } from "../../shared/sqlddl/index.ts";
import { startWorker } from "../../workers/index.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { holdLocks, untilWaitingOnLocks } from "../support/lockWaits.ts";
import { buildTemplate } from "../support/templateFactories.ts";
import { until } from "../support/wait.ts";

const count = z.object({ count: z.number() });

/** Runs a worker until every job of `ids` has finished; returns their records. */
async function runJobs(app: TestApp, ids: number[]): Promise<JobRow[]> {
  const worker = await startWorker({ config: app.config, pool: app.pool, log: createLogger("silent") }, { databaseUrl: app.db.url, crontab: "" });
  try {
    return await Promise.all(ids.map((id) => finished(app.pool, id)));
  } finally {
    await worker.stop();
  }
}

async function finished(pool: DatabasePool, id: number): Promise<JobRow> {
  for (let i = 0; i < 400; i++) {
    const job = await findJob(pool, id);
    if (job && isFinished(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`job ${id} did not finish`);
}

const v1 = "CREATE TABLE items (id int primary key, name varchar(40));";
const v2 = "CREATE TABLE items (id int primary key, name varchar(80), price decimal(8,2));\nCREATE TABLE extra (id int);";

t.test("jobs re-check the project before writing its content", async (t) => {
  const app = await startTestApp(t, { env: { SYNC_WAIT_MS: "20000" } });
  const alice = await buildUserWithToken(app.pool);
  const api = client(app.url, alice.token);
  const async = { headers: { prefer: "respond-async" } };
  const parsedEvents = (projectId: number) =>
    app.pool.oneFirst(sql.type(count)`select count(*)::int as count from outbox_events where project_id = ${projectId} and event_type = 'DatabaseParsed'`);

  /** A project with one parsed schema (v1). */
  const projectWithSchema = async () => {
    const projectId = await buildProject(app.pool, alice.user.id);
    const created = await api.post(`/api/projects/${projectId}/schemas`, { name: "Shop", sql_text: v1, database_type: "PostgreSQL" }, async);
    t.equal(created.status, 202, created.text);
    const [job] = await runJobs(app, [created.body.job.id]);
    t.equal(job!.status, "succeeded");
    const base = `/api/projects/${projectId}/schemas`;
    const schemaId = (await api.get(base)).body.data[0].id as number;
    return { projectId, base, schemaId };
  };

  /** The schema's text and table names, to compare before and after. */
  const snapshot = async (base: string, schemaId: number) => {
    const schema = (await api.get(`${base}/${schemaId}`)).body.schema;
    return { sql_text: schema.sql_text, tables: schema.tables.map((x: { table_name: string }) => x.table_name), updated_at: schema.updated_at };
  };

  const stops: [string, (projectId: number) => Promise<unknown>, number, string][] = [
    ["locked", (p) => api.post(`/api/projects/${p}/lock`), 423, "project_locked"],
    ["archived", (p) => api.post(`/api/projects/${p}/archive`), 409, "project_archived"],
    [
      "soft-locked (subscription expired)",
      (p) => app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() - interval '1 minute' where project_id = ${p}`),
      402,
      "subscription_expired",
    ],
    ["deleted", (p) => api.delete(`/api/projects/${p}`), 404, "not_found"],
  ];
  for (const [state, stop, status, code] of stops) {
    t.test(`an update committed before the project was ${state} is dropped when its job runs: ${status}`, async (t) => {
      const { projectId, base, schemaId } = await projectWithSchema();
      const before = await snapshot(base, schemaId);
      const events = await parsedEvents(projectId);
      const update = await api.put(`${base}/${schemaId}`, { sql_text: v2 }, async);
      t.equal(update.status, 202, update.text);
      await stop(projectId);
      const [job] = await runJobs(app, [update.body.job.id]);
      t.match(job, { status: "failed", error_code: code, attempts: 1 }, "failed at once, not retried");
      t.equal((job!.error_details as { status: number }).status, status);
      t.equal(await app.pool.oneFirst(sql.type(count)`select count(*)::int as count from schema_revisions`), 0, "the revision is gone");
      t.equal(await parsedEvents(projectId), events, "no DatabaseParsed");
      const row = await app.pool.one(sql.type(z.object({ sql_text: z.string(), tables_count: z.number() }))`select sql_text, tables_count from schemas where id = ${schemaId}`);
      t.same(row, { sql_text: v1, tables_count: 1 }, "the schema is unchanged");
      if (state === "locked") {
        t.same(await snapshot(base, schemaId), before);
        t.equal((await api.post(`/api/projects/${projectId}/unlock`)).status, 200);
        const again = await api.put(`${base}/${schemaId}`, { sql_text: v2 }, async);
        t.equal((await runJobs(app, [again.body.job.id]))[0]!.status, "succeeded", "the same change applies once unlocked");
        t.same((await snapshot(base, schemaId)).tables, ["items", "extra"]);
      }
    });
  }

  t.test("a rename while a new text waits for its parse is kept when the parse applies", async (t) => {
    const { base, schemaId } = await projectWithSchema();
    const update = await api.put(`${base}/${schemaId}`, { sql_text: v2 }, async);
    t.equal(update.status, 202, update.text);
    const renamed = await api.put(`${base}/${schemaId}`, { name: "Renamed" });
    t.equal(renamed.status, 200, renamed.text);
    t.equal(renamed.body.schema.name, "Renamed");
    const [job] = await runJobs(app, [update.body.job.id]);
    t.equal(job!.status, "succeeded");
    const schema = (await api.get(`${base}/${schemaId}`)).body.schema;
    t.same({ name: schema.name, tables: schema.tables.map((x: { table_name: string }) => x.table_name) }, { name: "Renamed", tables: ["items", "extra"] }, "the later rename and the new text both hold");
  });

  t.test("a rename while the job parses (its revision read already) is kept too", async (t) => {
    const { base, schemaId } = await projectWithSchema();
    const update = await api.put(`${base}/${schemaId}`, { sql_text: v2 }, async);
    t.equal(update.status, 202, update.text);
    // What the job read before its parse, then the rename, then what the job writes.
    const read = await app.pool.one(sql.type(revisionRow)`select id, schema_id, user_id, name, database_type, sql_text from schema_revisions where schema_id = ${schemaId}`);
    t.equal((await api.put(`${base}/${schemaId}`, { name: "Renamed meanwhile" })).status, 200);
    const parsed = parseDdl(read.sql_text, read.database_type);
    t.equal(await app.pool.transaction((tx) => applyRevision(tx, read, parsed.schema, parsed.warnings)), true);
    t.equal((await api.get(`${base}/${schemaId}`)).body.schema.name, "Renamed meanwhile");
  });

  t.test("a create committed before a lock leaves no schema behind", async (t) => {
    const projectId = await buildProject(app.pool, alice.user.id);
    const created = await api.post(`/api/projects/${projectId}/schemas`, { name: "Late", sql_text: v1, database_type: "MySQL" }, async);
    t.equal(created.status, 202);
    await api.post(`/api/projects/${projectId}/lock`);
    const [job] = await runJobs(app, [created.body.job.id]);
    t.match(job, { status: "failed", error_code: "project_locked" });
    t.equal(await app.pool.oneFirst(sql.type(count)`select count(*)::int as count from schemas where project_id = ${projectId}`), 0);
  });

  t.test("the awaiting request answers with the job's refusal", async (t) => {
    const { projectId, base, schemaId } = await projectWithSchema();
    const pending = api.put(`${base}/${schemaId}`, { sql_text: v2 });
    await until(
      async () => (await app.pool.oneFirst(sql.type(count)`select count(*)::int as count from schema_revisions where schema_id = ${schemaId}`)) > 0,
      { message: "the revision" },
    );
    t.equal((await api.post(`/api/projects/${projectId}/lock`)).status, 200);
    const jobId = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
      select id from jobs where project_id = ${projectId} and status = 'queued' order by id desc limit 1`);
    await runJobs(app, [jobId]);
    const res = await pending;
    t.equal(res.status, 423, res.text);
    t.equal(res.body.code, "project_locked");
    t.equal((await api.get(`${base}/${schemaId}`)).body.schema.sql_text, v1);
  });

  t.test("a lock that commits while the job waits for the project row is seen by the job", async (t) => {
    const { projectId, base, schemaId } = await projectWithSchema();
    const update = await api.put(`${base}/${schemaId}`, { sql_text: v2 }, async);
    // Hold the project row as POST /lock does (FOR UPDATE), let the job parse and reach the
    // row, then lock and commit: a check that read the row without waiting would apply.
    // (Only the transaction's own steps run inside its callback; slonik refuses other
    // connections' queries in that context, the worker's included.)
    const lockTx = await holdLocks(
      t,
      app.db.url,
      (tx) => tx.query(sql.type(z.object({}))`select 1 from projects where id = ${projectId} for update`),
      (tx) => tx.query(sql.type(z.object({}))`update projects set is_locked = true where id = ${projectId}`),
    );
    const running = runJobs(app, [update.body.job.id]);
    await untilWaitingOnLocks(app.pool, 1, "the job to wait for the project row");
    lockTx.release();
    await lockTx.done;
    const [job] = await running;
    t.match(job, { status: "failed", error_code: "project_locked" });
    t.equal((await api.get(`${base}/${schemaId}`)).body.schema.sql_text, v1);
  });

  t.test("a code generation is project content: one recorded after a lock is refused", async (t) => {
    const projectId = await buildProject(app.pool, alice.user.id);
    const templateId = await buildTemplate(app.pool, { projectId }, alice.user.id);
    const generations = () => app.pool.oneFirst(sql.type(count)`select count(*)::int as count from code_generations where project_id = ${projectId}`);
    const execute = () => api.post(`/api/projects/${projectId}/templates/${templateId}/execute`, { name: "Ada" }, async);
    const first = await execute();
    t.equal(first.status, 202, first.text);
    t.equal((await api.post(`/api/projects/${projectId}/lock`)).status, 200);
    const [refused] = await runJobs(app, [first.body.job.id]);
    t.match(refused, { status: "failed", error_code: "project_locked", attempts: 1 });
    t.equal(await generations(), 0, "nothing recorded");
    t.equal(await app.pool.oneFirst(sql.type(count)`select count(*)::int as count from outbox_events where project_id = ${projectId} and event_type = 'CodeGenerated'`), 0);

    t.equal((await api.post(`/api/projects/${projectId}/unlock`)).status, 200);
    const second = await execute();
    const [done] = await runJobs(app, [second.body.job.id]);
    t.equal(done!.status, "succeeded");
    t.equal(await generations(), 1, "recorded once the project accepts changes");
  });
});
