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
  /**
   * Whether the job's owner may cancel it while it is queued (site administrators always
   * may). Off unless the kind says so: a job that tells its owner something (an e-mail, a
   * push) or settles something for them (a payout) must not be stopped from a session in
   * other hands, and a new kind is of that sort until someone decides otherwise.
   */
  readonly ownerMayCancel: boolean;
}

export type PayloadOf<K extends JobKind> = z.input<K["payload"]>;
export type ParsedPayloadOf<K extends JobKind> = z.output<K["payload"]>;

export interface JobKindOptions {
  maxAttempts?: number;
  queueName?: string;
  /** See `JobKind.ownerMayCancel`; false when absent. */
  ownerMayCancel?: boolean;
}

/** Every kind defined in this process, by name (the kinds of shared/jobs/kinds.ts once it is loaded). */
const defined = new Map<string, JobKind>();

/** Declares a job kind. */
export function defineJobKind<Schema extends z.ZodType>(name: string, payload: Schema, options: JobKindOptions = {}): JobKind<Schema> {
  if (!/^[a-z0-9_]+__[a-z0-9_]+$/.test(name)) throw new Error(`Job kind ${name} must look like area__verb`);
  const kind: JobKind<Schema> = {
    name,
    payload,
    maxAttempts: options.maxAttempts ?? 5,
    ...(options.queueName ? { queueName: options.queueName } : {}),
    ownerMayCancel: options.ownerMayCancel ?? false,
  };
  defined.set(name, kind);
  return kind;
}

/** The kind named `name`, if one was defined in this process (a record may name a kind since removed). */
export const jobKindNamed = (name: string): JobKind | undefined => defined.get(name);
