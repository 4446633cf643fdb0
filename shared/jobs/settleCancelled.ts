/**
 * What cancelling a queued job does to the record it was queued for, in the cancel's
 * transaction: such a record would otherwise wait for the job for good (a pending deployment
 * held its environment, a delivery stayed pending, a new schema stayed `parsing` with its
 * revision). Kinds not named here leave nothing waiting (an archive whose build was
 * cancelled is built again on its next download).
 */
import { z } from "zod";
import { sql, type DatabaseTransactionConnection } from "../db/pool.ts";
import { publishCompleted } from "../deployments/logs.ts";
import { failCancelledRun } from "../deployments/records.ts";
import { discardCancelledParse } from "../schemas/store.ts";
import { failCancelledDelivery } from "../webhooks/store.ts";
import { deploymentsRun, schemasParse, webhooksDeliver } from "./kinds.ts";
import type { JobRow } from "./records.ts";

/** The payload a job was enqueued with (null for jobs from before it was kept, 0080). */
async function payloadOf(tx: DatabaseTransactionConnection, jobId: number): Promise<unknown> {
  return tx.oneFirst(sql.type(z.object({ payload: z.unknown() }))`select payload from jobs where id = ${jobId}`);
}

/** Settles the record cancelled job `job` was to work on. */
export async function settleCancelled(tx: DatabaseTransactionConnection, job: JobRow): Promise<void> {
  if (job.kind === deploymentsRun.name) {
    const deploymentId = await failCancelledRun(tx, job.id);
    if (deploymentId !== null) await publishCompleted(tx, deploymentId, "failed");
  } else if (job.kind === webhooksDeliver.name) {
    await failCancelledDelivery(tx, job.id);
  } else if (job.kind === schemasParse.name) {
    const payload = schemasParse.payload.safeParse(await payloadOf(tx, job.id));
    if (payload.success) await discardCancelledParse(tx, payload.data);
  }
}
