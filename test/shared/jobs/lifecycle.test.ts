/**
 * The job layer without a worker: what enqueue writes (our record and graphile-worker's job,
 * in one statement), each status change and the states it refuses, the events a job
 * publishes, finishing (inline NOTIFY and by reference), and how errors are stored.
 */
import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { AppError } from "../../../shared/errors.ts";
import { enqueue, envelopeSchema, workerJobKey } from "../../../shared/jobs/enqueue.ts";
import { describeJobError, isPermanent, PermanentJobError, UNEXPECTED_ATTEMPT_FAILURE, UNEXPECTED_FAILURE } from "../../../shared/jobs/errors.ts";
import { jobChannel, jobCompletedEvent, presentJob, publishJobCompleted, publishJobProgress } from "../../../shared/jobs/events.ts";
import { finishSucceeded } from "../../../shared/jobs/finish.ts";
import { defineJobKind } from "../../../shared/jobs/kind.ts";
import {
  failAbandoned,
  findJob,
  isFinished,
  jobStatuses,
  markCancelled,
  markFailed,
  markProgress,
  markRetrying,
  markRunning,
  markSucceeded,
  WORKER_LOST,
} from "../../../shared/jobs/records.ts";
import { buildProject } from "../../support/factories.ts";
import { jobsWorld } from "../../support/jobsWorld.ts";
import { until } from "../../support/wait.ts";

const echo = defineJobKind("test__echo", z.object({ value: z.unknown() }), { maxAttempts: 4 });
const serial = defineJobKind("test__serial", z.object({ n: z.number().int() }), { maxAttempts: 2, queueName: "serial" });

const workerJob = z.object({
  task_identifier: z.string(),
  payload: z.unknown(),
  queue_name: z.string().nullable(),
  run_at: z.date(),
  max_attempts: z.number(),
  key: z.string().nullable(),
  priority: z.number(),
});
const readWorkerJob = (pool: DatabasePool, id: number) =>
  pool.maybeOne(sql.type(workerJob)`
    select k.identifier as task_identifier, j.payload, q.queue_name, j.run_at, j.max_attempts, j.key, j.priority
    from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
    left join graphile_worker._private_job_queues q on q.id = j.job_queue_id
    where j.key = ${workerJobKey(id)}`);
const stored = z.object({ payload: z.unknown(), error_details: z.unknown() });

t.test("job layer", async (t) => {
  const { db, events, user } = await jobsWorld(t);
  const { pool } = db;
  const project = await buildProject(pool, user.id);
  const fresh = (options = {}) => pool.transaction((tx) => enqueue(tx, echo, { value: { a: 1 } }, { userId: user.id, ...options }));

  t.test("enqueue writes the record and the worker job under key job:{id}, with the kind's policy and the options", async (t) => {
    const runAt = new Date(Date.now() + 3_600_000);
    const job = await pool.transaction((tx) => enqueue(tx, serial, { n: 7 }, { userId: user.id, projectId: project, runAt, priority: 3 }));
    t.match(job, { kind: "test__serial", status: "queued", progress: 0, attempts: 0, max_attempts: 2, user_id: user.id, project_id: project, started_at: null, finished_at: null });
    t.same((await pool.one(sql.type(stored)`select payload, error_details from jobs where id = ${job.id}`)).payload, { n: 7 }, "the record keeps the payload");
    const queued = await readWorkerJob(pool, job.id);
    t.match(queued, { task_identifier: "test__serial", queue_name: "serial", max_attempts: 2, key: `job:${job.id}`, priority: 3 });
    t.same(queued?.payload, { job_id: job.id, payload: { n: 7 } }, "the envelope: our id and the payload");
    t.equal(queued?.run_at.getTime(), runAt.getTime());
    t.ok(envelopeSchema.safeParse(queued?.payload).success);
    // The worker refuses an envelope that names no record (workers/defineTask.ts reads it with this schema).
    for (const bad of [{ payload: {} }, { job_id: 0, payload: {} }, { job_id: 1.5, payload: {} }, { job_id: "1", payload: {} }]) {
      t.notOk(envelopeSchema.safeParse(bad).success, `envelope ${JSON.stringify(bad)} refused`);
    }

    const plain = await pool.transaction((tx) => enqueue(tx, echo, { value: "x" }));
    t.match(plain, { user_id: null, project_id: null, max_attempts: 4 });
    const plainQueued = await readWorkerJob(pool, plain.id);
    t.match(plainQueued, { queue_name: null, priority: 0, max_attempts: 4 });
    t.ok(plainQueued!.run_at.getTime() <= Date.now() + 1000, "due now");
    t.equal(workerJobKey(12), "job:12");
  });

  t.test("enqueue refuses a payload that does not match the kind, writing nothing", async (t) => {
    const count = () => pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from jobs`);
    const before = await count();
    await t.rejects(pool.transaction((tx) => enqueue(tx, serial, { n: 1.5 })), { name: "ZodError" });
    t.equal(await count(), before);
  });

  t.test("queued → running (attempts, first start kept) → progress → succeeded; finished records stay as they are", async (t) => {
    const job = await fresh();
    const first = await markRunning(pool, job.id, 1);
    t.match(first, { status: "running", attempts: 1 });
    t.ok(first?.started_at);
    const second = await markRunning(pool, job.id, 2);
    t.equal(second?.attempts, 2);
    t.equal(second?.started_at?.getTime(), first?.started_at?.getTime(), "started_at is the first attempt's");
    await markProgress(pool, job.id, 40, "half");
    t.match(await findJob(pool, job.id), { progress: 40, progress_message: "half" });
    const done = await markSucceeded(pool, job.id, { ok: true });
    t.match(done, { status: "succeeded", progress: 100, result: { ok: true }, error: null, error_code: null, error_details: null });
    t.ok(done?.finished_at);
    t.equal(await markRunning(pool, job.id, 3), null, "a finished job is not started again");
    t.equal(await markSucceeded(pool, job.id, 1), null);
    t.equal(await markFailed(pool, job.id, { message: "x", code: "x", status: 500 }), null);
    t.equal(await markCancelled(pool, job.id), null);
    await markProgress(pool, job.id, 5, "late");
    await markRetrying(pool, job.id, { message: "late", code: "late", status: 500 });
    t.match(await findJob(pool, job.id), { status: "succeeded", progress: 100, progress_message: "half", error: null }, "late writes change nothing");
    t.equal(await findJob(pool, 999_999_999), null);
  });

  t.test("progress and success need a running job", async (t) => {
    const job = await fresh();
    await markProgress(pool, job.id, 50, "early");
    t.match(await findJob(pool, job.id), { progress: 0, progress_message: null });
    t.equal(await markSucceeded(pool, job.id, 1), null, "a queued job cannot succeed");
  });

  t.test("a failed attempt goes back to queued with its error; a final failure stores the status and field errors", async (t) => {
    const job = await fresh();
    await markRunning(pool, job.id, 1);
    await markRetrying(pool, job.id, { message: "try again", code: "busy", status: 503 });
    t.match(await findJob(pool, job.id), { status: "queued", error: "try again", error_code: "busy", finished_at: null });
    const failed = await markFailed(pool, job.id, { message: "bad", code: "validation_failed", status: 422, errors: { a: ["b"] } });
    t.match(failed, { status: "failed", error: "bad", error_code: "validation_failed" });
    t.ok(failed?.finished_at);
    t.same(failed?.error_details, { status: 422, errors: { a: ["b"] } });
    const bare = await markFailed(pool, (await fresh()).id, { message: "m", code: "c", status: 500 });
    t.same(bare?.error_details, { status: 500, errors: null });
    const running = await fresh();
    await markRunning(pool, running.id, 1);
    t.match(await markFailed(pool, running.id, { message: "m", code: "c", status: 500 }), { status: "failed" }, "a running job fails too");
  });

  t.test("only a queued job is cancelled", async (t) => {
    const job = await fresh();
    const cancelled = await markCancelled(pool, job.id);
    t.match(cancelled, { status: "cancelled" });
    t.ok(cancelled?.finished_at);
    t.equal(await markRunning(pool, job.id, 1), null, "a cancelled job is skipped");
    const running = await fresh();
    await markRunning(pool, running.id, 1);
    t.equal(await markCancelled(pool, running.id), null);
    t.same(jobStatuses.filter(isFinished), ["succeeded", "failed", "cancelled"]);
  });

  t.test("failAbandoned: a running job whose worker job is unlocked with its attempts used up fails as worker_lost", async (t) => {
    const spent = (id: number, attempts: number) =>
      pool.query(sql.type(z.object({}))`update graphile_worker._private_jobs set attempts = ${attempts}, locked_at = null where key = ${workerJobKey(id)}`);
    const abandoned = await fresh();
    await markRunning(pool, abandoned.id, 4);
    await spent(abandoned.id, 4);
    const retried = await fresh();
    await markRunning(pool, retried.id, 3);
    await spent(retried.id, 3);
    const waiting = await fresh();
    await spent(waiting.id, 4);
    const failed = await failAbandoned(pool);
    t.same(failed.map((row) => row.id), [abandoned.id], "only the running one with no attempt left");
    t.match(failed[0], { status: "failed", error: WORKER_LOST.message, error_code: "worker_lost", error_details: { status: 500, errors: null } });
    t.ok(failed[0]?.finished_at);
    t.match(await findJob(pool, retried.id), { status: "running" });
    t.match(await findJob(pool, waiting.id), { status: "queued" });
    t.same(await failAbandoned(pool), [], "once");
  });

  t.test("presentJob: the result only once succeeded, field errors from the details, ISO dates", async (t) => {
    const job = await fresh();
    const row = (await markRunning(pool, job.id, 1))!;
    const running = presentJob({ ...row, result: { early: true } });
    t.equal(running.result, null, "no result before success");
    t.same(Object.keys(running).sort(), [
      "attempts", "created_at", "error", "error_code", "errors", "finished_at", "id", "kind", "max_attempts", "progress", "progress_message", "project_id", "result", "started_at", "status",
    ]);
    t.match(running, { id: job.id, kind: "test__echo", status: "running", attempts: 1, max_attempts: 4, project_id: null, finished_at: null, errors: null });
    t.equal(running.created_at, row.created_at.toISOString());
    t.equal(running.started_at, row.started_at!.toISOString());
    const done = (await markSucceeded(pool, job.id, { n: 1 }))!;
    t.same(presentJob(done).result, { n: 1 });
    t.equal(presentJob(done).finished_at, done.finished_at!.toISOString());
    t.equal(presentJob({ ...done, result: undefined }).result, null);
    const failed = { ...done, status: "failed" as const, error: "bad", error_code: "validation_failed", error_details: { status: 422, errors: { f: ["x"] } } };
    t.same(presentJob(failed).errors, { f: ["x"] });
    t.match(presentJob(failed), { error: "bad", error_code: "validation_failed", result: null });
    t.equal(presentJob({ ...failed, error_details: { errors: "not a map" } }).errors, null, "malformed details show no field errors");
  });

  t.test("events: JobProgress and JobCompleted on private-job.{id}", async (t) => {
    const job = await fresh();
    t.equal(jobChannel(job.id), `private-job.${job.id}`);
    await publishJobProgress(pool, job.id, 30, "a third");
    const row = (await markCancelled(pool, job.id))!;
    await publishJobCompleted(pool, row);
    const mine = await until(() => {
      const seen = events.filter((e) => e.channel === `private-job.${job.id}`);
      return seen.length >= 2 ? seen : null;
    }, { message: "both events" });
    t.same(mine[0], { channel: `private-job.${job.id}`, event: "JobProgress", data: { job_id: job.id, progress: 30, message: "a third" } });
    t.same(mine[1], JSON.parse(JSON.stringify(jobCompletedEvent(row))));
    t.same(mine[1]!.data, JSON.parse(JSON.stringify({ job_id: job.id, status: "cancelled", job: presentJob(row) })));
  });

  t.test("finishSucceeded: record and JobCompleted in one statement; a large result by reference; a job no longer running is left alone", async (t) => {
    const completion = (id: number) => until(() => events.find((e) => e.channel === jobChannel(id) && e.event === "JobCompleted"), { message: `JobCompleted of ${id}` });
    const small = await fresh();
    const running = (await markRunning(pool, small.id, 1))!;
    await finishSucceeded(pool, running, { small: true });
    const row = (await findJob(pool, small.id))!;
    t.match(row, { status: "succeeded", progress: 100, result: { small: true }, error: null, error_code: null, error_details: null, attempts: 1 });
    t.ok(row.finished_at);
    const event = await completion(small.id);
    t.match(event.data, { job_id: small.id, status: "succeeded", job: { id: small.id, status: "succeeded", progress: 100, result: { small: true }, error: null } });
    t.equal((event.data as { job: { finished_at: string } }).job.finished_at, row.finished_at!.toISOString(), "the event names the stored finish time");

    const large = await fresh();
    const big = { text: "x".repeat(20_000) };
    await finishSucceeded(pool, (await markRunning(pool, large.id, 1))!, big);
    t.same((await findJob(pool, large.id))?.result, big);
    t.same(((await completion(large.id)).data as { job: { result: unknown } }).job.result, big, "delivered through realtime_payloads");

    const nothing = await fresh();
    const beforeRun = (await markRunning(pool, nothing.id, 1))!;
    await markCancelled(pool, nothing.id).then(() => markFailed(pool, nothing.id, { message: "m", code: "c", status: 500 }));
    await finishSucceeded(pool, beforeRun, { late: true });
    t.match(await findJob(pool, nothing.id), { status: "failed", result: null });
    const bigLate = await fresh();
    const bigRow = (await markRunning(pool, bigLate.id, 1))!;
    await markFailed(pool, bigLate.id, { message: "m", code: "c", status: 500 });
    await finishSucceeded(pool, bigRow, big);
    t.match(await findJob(pool, bigLate.id), { status: "failed", result: null });
    // A marker event published after both: once it arrives, the two would have arrived before it.
    await publishJobProgress(pool, bigLate.id, 1, "marker");
    await until(() => events.find((e) => e.channel === jobChannel(bigLate.id) && e.event === "JobProgress"), { message: "the marker" });
    t.notOk(events.some((e) => e.event === "JobCompleted" && (e.channel === jobChannel(nothing.id) || e.channel === jobChannel(bigLate.id))), "no JobCompleted for them");
  });

  t.test("errors: which are permanent and what the record stores of each", async (t) => {
    const permanent = new PermanentJobError("Refused.");
    t.equal(permanent.code, "job_failed");
    t.equal(permanent.name, "PermanentJobError");
    t.equal(new PermanentJobError("x", "remote_refused").code, "remote_refused");
    t.ok(isPermanent(permanent));
    t.ok(isPermanent(new AppError(422, "validation_failed", "x")));
    t.ok(isPermanent(new AppError(499, "x", "x")));
    t.notOk(isPermanent(new AppError(500, "x", "x")));
    t.notOk(isPermanent(new Error("boom")));
    t.same(describeJobError(new AppError(422, "validation_failed", "Bad.", { a: ["b"] }), true), { message: "Bad.", code: "validation_failed", status: 422, errors: { a: ["b"] } });
    t.same(describeJobError(new AppError(409, "conflict", "Busy."), false), { message: "Busy.", code: "conflict", status: 409 }, "no errors key without field errors");
    t.same(describeJobError(permanent, true), { message: "Refused.", code: "job_failed", status: 422 });
    t.same(describeJobError(new Error("ECONNREFUSED 10.0.0.5"), true), { message: UNEXPECTED_FAILURE, code: "job_failed", status: 500 });
    t.same(describeJobError(new Error("ECONNREFUSED 10.0.0.5"), false), { message: UNEXPECTED_ATTEMPT_FAILURE, code: "job_failed", status: 500 });
    t.not(UNEXPECTED_FAILURE, UNEXPECTED_ATTEMPT_FAILURE);
    // What the owner reads instead of the internals: a sentence saying whether it will be retried.
    t.equal(UNEXPECTED_FAILURE, "The job failed unexpectedly.");
    t.equal(UNEXPECTED_ATTEMPT_FAILURE, "An attempt of the job failed unexpectedly; it will be retried.");
  });

  t.test("kinds: area__verb names, five attempts by default, a queue only when named, not the owner's to cancel by default", async (t) => {
    for (const bad of ["plain", "Area__verb", "area__Verb", "area-x__verb", "__verb", "area__", "area__verb!", "x area__verb"]) {
      t.throws(() => defineJobKind(bad, z.object({})), { message: `Job kind ${bad} must look like area__verb` }, bad);
    }
    const plain = defineJobKind("area_1__verb_2", z.object({}));
    t.equal(plain.maxAttempts, 5);
    t.notOk("queueName" in plain);
    t.same(
      { ...defineJobKind("a__b", z.object({}), { maxAttempts: 1, queueName: "q" }), payload: null },
      { name: "a__b", payload: null, maxAttempts: 1, queueName: "q", ownerMayCancel: false },
      "its owner may not cancel it unless the kind says so",
    );
    t.equal(defineJobKind("a__c", z.object({}), { ownerMayCancel: true }).ownerMayCancel, true);
  });
});

