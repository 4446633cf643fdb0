/**
 * Job kinds: the name of a graphile-worker task together with the zod schema of its
 * payload and its retry policy. The API enqueues through a kind and the worker's task is
 * defined from the same kind, so both sides agree on the payload by construction.
 *
 * Glossary: a *kind* is the task identifier (`area__verb`); a *job record* is our row in
 * `jobs`; a *worker job* is graphile-worker's row, which lives only while the job is queued.
 */
import type { z } from "zod";

export interface JobKind<Schema extends z.ZodType = z.ZodType> {
  /** Task identifier, `area__verb`; also the name of the task file in workers/tasks/. */
  readonly name: string;
  readonly payload: Schema;
  /** Attempts before the job is marked failed (each retry backs off exponentially). */
  readonly maxAttempts: number;
  /** Optional graphile-worker queue for jobs that must run one at a time. */
  readonly queueName?: string;
}

export type PayloadOf<K extends JobKind> = z.input<K["payload"]>;
export type ParsedPayloadOf<K extends JobKind> = z.output<K["payload"]>;

/** Declares a job kind. */
export function defineJobKind<Schema extends z.ZodType>(
  name: string,
  payload: Schema,
  options: { maxAttempts?: number; queueName?: string } = {},
): JobKind<Schema> {
  if (!/^[a-z0-9_]+__[a-z0-9_]+$/.test(name)) throw new Error(`Job kind ${name} must look like area__verb`);
  return { name, payload, maxAttempts: options.maxAttempts ?? 5, ...(options.queueName ? { queueName: options.queueName } : {}) };
}
