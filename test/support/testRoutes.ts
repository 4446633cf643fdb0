/**
 * Routes that exist only in tests: enqueue a test job and answer through the
 * enqueue-and-await helper, and enqueue inside a transaction that then fails.
 */
import { z } from "zod";
import { currentUser } from "../../api/context.ts";
import { respondWithJob } from "../../api/jobResponse.ts";
import { defineRoute } from "../../api/routes/route.ts";
import { AppError } from "../../shared/errors.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import type { JobKind } from "../../shared/jobs/kind.ts";
import { echoKind, flakyKind, invalidKind, progressKind, publishKind, sleepKind } from "./testTasks.ts";

const kinds: Record<string, JobKind> = { echo: echoKind, progress: progressKind, flaky: flakyKind, invalid: invalidKind, sleep: sleepKind, publish: publishKind };

export const testRoutes = [
  defineRoute({
    method: "post",
    path: "/test/jobs/{kind}",
    summary: "Test only: run a test job and await it",
    tags: ["Test"],
    auth: "bearer",
    params: z.object({ kind: z.enum(Object.keys(kinds) as [string, ...string[]]) }),
    body: z.object({ payload: z.record(z.string(), z.unknown()) }),
    responses: { 200: { description: "Result" } },
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
];
