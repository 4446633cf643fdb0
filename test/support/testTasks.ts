/**
 * Job kinds and tasks that exist only in tests, to drive the jobs layer through its
 * lifecycle: echo, progress, flaky (fails before succeeding), invalid (permanent 422),
 * sleep (for crashes and shutdown), publish (a realtime event from a worker), leaky (an
 * unexpected error full of internals), refused (a failure written for the user) and crash
 * (kills its own worker process, on every attempt: only for workers in a child process).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { invalid } from "../../shared/errors.ts";
import { publish } from "../../shared/events/publish.ts";
import { PermanentJobError } from "../../shared/jobs/errors.ts";
import { defineJobKind } from "../../shared/jobs/kind.ts";
import { defineTask } from "../../workers/defineTask.ts";

export const echoKind = defineJobKind("test__echo", z.object({ value: z.unknown() }), { maxAttempts: 1, ownerMayCancel: true });
export const progressKind = defineJobKind("test__progress", z.object({ steps: z.number().int().min(1).max(10) }), { maxAttempts: 1 });
export const flakyKind = defineJobKind("test__flaky", z.object({ failTimes: z.number().int() }), { maxAttempts: 3 });
export const invalidKind = defineJobKind("test__invalid", z.object({}), { maxAttempts: 5 });
export const sleepKind = defineJobKind("test__sleep", z.object({ firstAttemptMs: z.number().int(), laterAttemptMs: z.number().int() }), { maxAttempts: 3, ownerMayCancel: true });
export const leakyKind = defineJobKind("test__leaky", z.object({}), { maxAttempts: 2 });
export const refusedKind = defineJobKind("test__refused", z.object({}), { maxAttempts: 3 });
/** What the leaky task throws: the kind of text a driver error carries. */
export const LEAKY_MESSAGE = "connect ECONNREFUSED 10.0.0.5:5432 password=hunter2-secret";
export const crashKind = defineJobKind("test__crash", z.object({}), { maxAttempts: 2 });
export const publishKind = defineJobKind("test__publish", z.object({ channel: z.string(), event: z.string(), data: z.unknown() }), { maxAttempts: 1 });

export const testTasks = [
  defineTask(echoKind, async (payload) => ({ echoed: payload.value })),
  defineTask(progressKind, async (payload, ctx) => {
    for (let step = 1; step <= payload.steps; step += 1) {
      await ctx.progress((step / payload.steps) * 100 - 1, `step ${step}`);
      await sleep(20);
    }
    return { steps: payload.steps };
  }),
  defineTask(flakyKind, async (payload, ctx) => {
    if (ctx.attempt <= payload.failTimes) throw new Error(`transient failure on attempt ${ctx.attempt}`);
    return { attempt: ctx.attempt };
  }),
  defineTask(invalidKind, async () => {
    throw invalid({ sql_text: ["The SQL could not be parsed at line 3, column 7."] });
  }),
  defineTask(sleepKind, async (payload, ctx) => {
    await sleep(ctx.attempt === 1 ? payload.firstAttemptMs : payload.laterAttemptMs, undefined, { signal: ctx.signal });
    return { attempt: ctx.attempt, pid: process.pid };
  }),
  defineTask(leakyKind, async () => {
    throw new Error(LEAKY_MESSAGE);
  }),
  defineTask(refusedKind, async () => {
    throw new PermanentJobError("The remote host refused the upload: the folder is read-only.", "remote_refused");
  }),
  defineTask(crashKind, async () => {
    process.kill(process.pid, "SIGKILL");
    await sleep(60_000);
  }),
  defineTask(publishKind, async (payload, ctx) => {
    const data = typeof payload.data === "object" && payload.data !== null ? { ...payload.data, worker_pid: process.pid } : payload.data;
    await publish(ctx.deps.pool, { channel: payload.channel, event: payload.event, data });
    return { pid: process.pid };
  }),
];
