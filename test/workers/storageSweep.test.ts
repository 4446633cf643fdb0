import t from "tap";
import { z } from "zod";
import { seal } from "../../shared/crypto.ts";
import { freePort } from "../../shared/db/embedded.ts";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { UPLOAD_EXPIRED, UPLOAD_UNREADABLE } from "../../shared/deployments/upload.ts";
import { createLogger } from "../../shared/logger.ts";
import { OUTBOX_TTL_DAYS } from "../../shared/mail/deliver.ts";
import { findJob, type JobRow } from "../../shared/jobs/records.ts";
import { PostgresStorage } from "../../shared/storage/postgresStorage.ts";
import type { TaskContext } from "../../workers/context.ts";
import { startWorker } from "../../workers/index.ts";
import upload from "../../workers/tasks/deployments__upload.ts";
import sweep, { SWEEP_BATCH, sweepGraceMs } from "../../workers/tasks/storage__sweep.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

const keys = z.object({ key: z.string() });
const count = z.object({ count: z.number() });
const HOUR = 3600_000;
const log = createLogger("silent");

/** A task context as the scheduler gives it (no job record), at `attempt` of `maxAttempts`. */
function contextOf(app: TestApp, attempt = 1, maxAttempts = 1): TaskContext {
  return {
    deps: { config: app.config, pool: app.pool, pgPool: app.db.pgPool, log, storage: new PostgresStorage(app.pool) },
    jobId: null,
    attempt,
    maxAttempts,
    log,
    signal: new AbortController().signal,
    progress: async () => {},
  };
}

const runSweep = async (app: TestApp) => (await sweep.run({}, contextOf(app))) as { removed: number };
const storedKeys = (pool: DatabasePool) => pool.anyFirst(sql.type(keys)`select key from stored_files order by key`);
const chunkCount = (pool: DatabasePool) => pool.oneFirst(sql.type(count)`select count(*)::int as count from stored_file_chunks`);
/** Moves an object's expiry to `msAgo` before now. */
const expire = (pool: DatabasePool, key: string, msAgo: number) =>
  pool.query(sql.type(z.object({}))`update stored_files set expires_at = now() - make_interval(secs => ${msAgo / 1000}) where key = ${key}`);

async function waitForJob(pool: DatabasePool, id: number, done: (row: JobRow) => boolean): Promise<JobRow> {
  for (let i = 0; i < 200; i += 1) {
    const row = await findJob(pool, id);
    if (row && done(row)) return row;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`job ${id} did not finish`);
}

/** An FTP upload form to a port where nothing listens (the deployment fails fast, as a deployment). */
async function deadFtpForm(): Promise<FormData> {
  const form = new FormData();
  const fields = { deployment_method: "ftp", ftp_host: "127.0.0.1", ftp_port: String(await freePort()), ftp_username: "deployer", ftp_password: "Upload-Secret-Pass-77", ftp_path: "/site" };
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append("files[0]", new Blob(["<?php echo 1;\n"]), "index.php");
  return form;
}

t.test("storage__sweep removes objects expired beyond the grace period, in batches, and nothing else", async (t) => {
  const app = await startTestApp(t);
  const storage = new PostgresStorage(app.pool);
  const grace = sweepGraceMs(app.config);
  t.equal(grace, app.config.deployments.timeoutMs + HOUR, "one deployment run plus an hour");
  const body = Buffer.alloc(1024 * 1024 + 10, 7); // two chunks each
  const seed = async (key: string, expiredMsAgo: number | null) => {
    await storage.put(key, body, { expiresAt: expiredMsAgo === null ? null : new Date(Date.now() + HOUR) });
    if (expiredMsAgo !== null) await expire(app.pool, key, expiredMsAgo);
  };
  await seed("archives/1/old.zip", grace + HOUR);
  await seed("deployment-uploads/AAAAAAAAAAAAAAAAAAAAAAAA", grace + 60_000);
  await seed("outbox/2020-old.eml", 40 * 24 * HOUR);
  await seed("deployment-uploads/BBBBBBBBBBBBBBBBBBBBBBBB", grace - 5 * 60_000); // expired, but within the grace period
  await seed("archives/2/fresh.zip", -HOUR); // expires in an hour
  await seed("media/kept.png", null); // never expires
  t.equal(await chunkCount(app.pool), 12);

  const first = await runSweep(app);
  t.equal(first.removed, 3);
  t.same(await storedKeys(app.pool), ["archives/2/fresh.zip", "deployment-uploads/BBBBBBBBBBBBBBBBBBBBBBBB", "media/kept.png"]);
  t.equal(await chunkCount(app.pool), 6, "the chunks of removed objects went with them");
  t.ok(await storage.readBuffer("deployment-uploads/BBBBBBBBBBBBBBBBBBBBBBBB"), "an object within its grace period is still readable");

  t.same(await runSweep(app), { removed: 0 }, "a second run finds nothing");

  await expire(app.pool, "deployment-uploads/BBBBBBBBBBBBBBBBBBBBBBBB", grace + 1000);
  t.same(await runSweep(app), { removed: 1 }, "once past the grace period it goes too");

  // More than one batch: every expired object goes in one run.
  const many = SWEEP_BATCH * 2 + 17;
  await app.pool.query(sql.type(z.object({}))`
    insert into stored_files (key, complete, expires_at)
    select 'tmp/bulk-' || n, true, now() - make_interval(secs => ${(grace + HOUR) / 1000}) from generate_series(1, ${many}) as n`);
  t.same(await runSweep(app), { removed: many });
  t.same(await storedKeys(app.pool), ["archives/2/fresh.zip", "media/kept.png"]);
});

t.test("outbox e-mails expire after OUTBOX_TTL_DAYS", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const res = await client(app.url).post("/api/auth/register", { name: "Expiring Mail", email: "expiring@example.test", password: "mail that goes away" });
  t.equal(res.status, 201);
  const storage = new PostgresStorage(app.pool);
  let files = await storage.list("outbox/");
  for (let i = 0; i < 100 && files.length === 0; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    files = await storage.list("outbox/");
  }
  t.equal(files.length, 1);
  const lifetime = files[0]!.expiresAt!.getTime() - files[0]!.createdAt.getTime();
  t.ok(Math.abs(lifetime - OUTBOX_TTL_DAYS * 24 * HOUR) < 60_000, `kept ${OUTBOX_TTL_DAYS} days (${lifetime} ms)`);
});

t.test("upload bundles: removed when their job is done; a job whose bundle was swept fails with a message", async (suite) => {
  const app = await startTestApp(suite, { env: { SYNC_WAIT_MS: "0" } });
  const { token } = await buildUserWithToken(app.pool);
  // The sealed bundles (credentials); each one's files wait beside it under `<key>.payload`.
  const bundles = async () => (await storedKeys(app.pool)).filter((key) => key.startsWith("deployment-uploads/") && !key.endsWith(".payload"));
  const payloads = async () => (await storedKeys(app.pool)).filter((key) => key.startsWith("deployment-uploads/") && key.endsWith(".payload"));

  await suite.test("a job that comes after the sweep answers upload_expired", async (t) => {
    const queued = await request(app.url, "POST", "/api/deployments/upload", { token, body: await deadFtpForm(), raw: true, headers: { prefer: "respond-async" } });
    t.equal(queued.status, 202, queued.text);
    const [bundle] = await bundles();
    t.ok(bundle, "the sealed bundle waits in storage");
    await expire(app.pool, bundle!, sweepGraceMs(app.config) + 1000);
    t.same(await runSweep(app), { removed: 1 });
    t.same(await bundles(), []);

    // Only now a worker runs, as on a queue that reached the job late.
    const worker = await startWorker({ config: app.config, pool: app.pool, log }, { databaseUrl: app.db.url, crontab: "" });
    suite.teardown(() => worker.stop());
    const done = await waitForJob(app.pool, queued.body.job.id, (row) => row.status !== "queued" && row.status !== "running");
    t.equal(done.status, "succeeded", "the job ends normally; its outcome is a failed deployment");
    t.match(done.result, { status: "failed", files: 0, error: UPLOAD_EXPIRED, logs: [] });
    const seen = await client(app.url, token).get(`/api/jobs/${done.id}`);
    t.match(seen.body.job.result.error.message, /no longer available/);
    t.same(await payloads(), [], "the files of a swept bundle go with it");
  });

  await suite.test("a finished job removes its bundle at once, without waiting for its expiry", async (t) => {
    const failed = await request(app.url, "POST", "/api/deployments/upload", { token, body: await deadFtpForm(), raw: true, headers: { prefer: "respond-async" } });
    const finished = await waitForJob(app.pool, failed.body.job.id, (row) => row.status === "succeeded");
    t.match(finished.result, { status: "failed", error: { code: "unreachable" } }, "the deployment itself failed");
    t.same(await bundles(), [], "and its bundle, credentials included, was removed at once");
    t.same(await payloads(), [], "and its files");
  });

  await suite.test("an unreadable bundle is kept for a retry and removed on the last attempt", async (t) => {
    const storage = new PostgresStorage(app.pool);
    const key = "deployment-uploads/CCCCCCCCCCCCCCCCCCCCCCCC";
    const otherKey = Buffer.alloc(32, 9);
    await storage.put(key, seal(otherKey, JSON.stringify({ method: "ftp", config: {}, files: [] })), { expiresAt: new Date(Date.now() + HOUR) });
    await t.rejects(upload.run({ upload_key: key }, contextOf(app, 1, 2)), "the first attempt fails and will be retried");
    t.ok(await storage.stat(key), "the bundle stays for the retry");
    const last = await upload.run({ upload_key: key }, contextOf(app, 2, 2));
    t.match(last, { status: "failed", error: UPLOAD_UNREADABLE });
    t.equal(await storage.stat(key), null, "the last attempt removed it");
  });
});
