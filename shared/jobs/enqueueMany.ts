/**
 * Bulk enqueueing: many jobs of one kind (a generation fanning out per file, a re-index of
 * every store item) as one statement on the caller's connection: the job records in one
 * multi-row insert, their graphile-worker jobs in one `add_jobs` call. Each job is the same as
 * one made by `enqueue` (same envelope, same `job:{id}` key), but the batch costs one round
 * trip and one commit instead of one each per job.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import type { EnqueueOptions } from "./enqueue.ts";
import type { JobKind, PayloadOf } from "./kind.ts";

/** At most this many jobs in one call: bounds the statement (its payloads travel as one value). */
export const maxBulkJobs = 50_000;

const idsRow = z.object({ ids: z.array(z.number()) });

/**
 * Records and enqueues one job of `kind` per payload, in one statement (inside a transaction,
 * they exist only if it commits). Resolves to the new job ids, in the order of `payloads`.
 * @throws ZodError when a payload does not match the kind's schema (a programming error)
 * @throws RangeError when given more than {@link maxBulkJobs} payloads
 */
export async function enqueueMany<K extends JobKind>(
  conn: CommonQueryMethods,
  kind: K,
  payloads: readonly PayloadOf<K>[],
  options: EnqueueOptions = {},
): Promise<readonly number[]> {
  if (payloads.length > maxBulkJobs) throw new RangeError(`enqueueMany takes at most ${maxBulkJobs} jobs, got ${payloads.length}.`);
  if (payloads.length === 0) return [];
  const parsed = payloads.map((payload) => (kind.payload.parse(payload) ?? null) as unknown);
  // Identity values are drawn in the order the select produces its rows (by ordinality),
  // so ascending ids follow the order of `payloads`.
  return conn.oneFirst(sql.type(idsRow)`
    with record as (
      insert into jobs (kind, max_attempts, user_id, project_id, payload)
      select ${kind.name}, ${kind.maxAttempts}, ${options.userId ?? null}, ${options.projectId ?? null}, p.value
      from jsonb_array_elements(${sql.jsonb(parsed as never)}) with ordinality as p (value, n)
      order by p.n
      returning id, payload
    ), queued as (
      select count(*) as added from graphile_worker.add_jobs(array(
        select row(
          ${kind.name}::text,
          json_build_object('job_id', record.id, 'payload', record.payload),
          ${kind.queueName ?? null}::text,
          ${options.runAt ? options.runAt.toISOString() : null}::timestamptz,
          ${kind.maxAttempts}::smallint,
          'job:' || record.id,
          ${options.priority ?? null}::smallint,
          null::text[]
        )::graphile_worker.job_spec
        from record order by record.id
      ))
    )
    select coalesce(array_agg(record.id order by record.id), '{}') as ids from record, queued`);
}
