/**
 * Routes that exist only in tests: enqueue a test job and answer through the
 * enqueue-and-await helper, enqueue inside a transaction that then fails, report where an
 * upload landed (and fail after reading it), and answer slowly (graceful shutdown).
 */
import { stat } from "node:fs/promises";
import { z } from "zod";
import { currentUser } from "../../api/context.ts";
import { acceptedResponse, respondWithJob } from "../../api/jobResponse.ts";
import { defineRoute } from "../../api/routes/route.ts";
import { sql } from "../../shared/db/pool.ts";
import { AppError, invalid } from "../../shared/errors.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import type { JobKind } from "../../shared/jobs/kind.ts";
import { echoKind, flakyKind, invalidKind, leakyKind, progressKind, publishKind, refusedKind, sleepKind } from "./testTasks.ts";

const kinds: Record<string, JobKind> = {
  echo: echoKind,
  progress: progressKind,
  flaky: flakyKind,
  invalid: invalidKind,
  sleep: sleepKind,
  publish: publishKind,
  leaky: leakyKind,
  refused: refusedKind,
};

/** The comment in the slow route's query, to find it in pg_stat_activity. */
export const SLOW_QUERY_TAG = "test-slow-route";

export const testRoutes = [
  defineRoute({
    method: "post",
    path: "/test/jobs/{kind}",
    summary: "Test only: run a test job and await it",
    tags: ["Test"],
    auth: "bearer",
    params: z.object({ kind: z.enum(Object.keys(kinds) as [string, ...string[]]) }),
    body: z.object({ payload: z.record(z.string(), z.unknown()) }),
    responses: { 200: { description: "Result" }, ...acceptedResponse, 409: { description: "The job failed with a conflict (the test kinds' refusals)" } },
    handler: async (ctx, { params, body }) => {
      const kind = kinds[params.kind]!;
      const job = await ctx.deps.pool.transaction((tx) => enqueue(tx, kind, body.payload as never, { userId: currentUser(ctx).id }));
      await respondWithJob(ctx, job, (row) => {
        ctx.body = { result: row.result };
      });
    },
  }),
  defineRoute({
    method: "post",
    path: "/test/rollback",
    summary: "Test only: enqueue, then fail the transaction",
    tags: ["Test"],
    auth: "bearer",
    responses: { 409: { description: "Always" } },
    handler: async (ctx) => {
      await ctx.deps.pool.transaction(async (tx) => {
        await enqueue(tx, echoKind, { value: "never" }, { userId: currentUser(ctx).id });
        throw new AppError(409, "conflict", "Rolled back on purpose.");
      });
    },
  }),
  defineRoute({
    method: "post",
    path: "/test/upload",
    summary: "Test only: where the uploaded `file` landed and its size; with `fail`, a 409 after reading it",
    tags: ["Test"],
    auth: "bearer",
    body: z.object({ file: z.unknown(), fail: z.string().optional() }).loose(),
    bodyKind: "multipart",
    responses: { 200: { description: "The upload's temp path and size" }, 409: { description: "With `fail`" } },
    handler: async (ctx, { body }) => {
      const file = body.file as { filepath?: unknown } | undefined;
      if (typeof file?.filepath !== "string") throw invalid({ file: ["Upload one file in the field file."] });
      const { size } = await stat(file.filepath);
      if (body.fail) throw new AppError(409, "conflict", "Failed on purpose after reading the upload.");
      ctx.body = { path: file.filepath, size };
    },
  }),
  defineRoute({
    method: "get",
    path: "/test/slow",
    summary: "Test only: answers 200 after `ms` milliseconds, spent waiting on the database",
    description: `The wait is a \`pg_sleep\` tagged ${SLOW_QUERY_TAG}, so a test sees in pg_stat_activity when the request is in flight.`,
    tags: ["Test"],
    auth: "public",
    query: z.object({ ms: z.coerce.number().int().min(0).max(60_000) }),
    responses: { 200: { description: "Slept" } },
    handler: async (ctx, { query }) => {
      await ctx.deps.pool.one(sql.type(z.object({ slept: z.boolean() }))`
        select true as slept from pg_sleep(${query.ms / 1000}) /* test-slow-route */`);
      ctx.body = { slept_ms: query.ms };
    },
  }),
];
