/**
 * Errors a task can throw to steer its job record.
 *
 * A PermanentJobError (or an AppError with a 4xx status, e.g. a validation failure) ends
 * the job at once as `failed`: retrying bad input only delays the answer. Any other error
 * is retried with back-off until the kind's attempts are used up.
 *
 * Only these two carry a message to the client: throw one of them for a failure the user
 * should read about. Any other error is stored as a generic message (see describeJobError).
 */
import { AppError } from "../errors.ts";

export class PermanentJobError extends Error {
  readonly code: string;
  constructor(message: string, code = "job_failed") {
    super(message);
    this.name = "PermanentJobError";
    this.code = code;
  }
}

/** What a failed job record stores about its error. */
export interface StoredJobError {
  message: string;
  code: string;
  /** HTTP status an awaiting request answers with. */
  status: number;
  errors?: Record<string, string[]>;
}

/** Whether retrying cannot help. */
export function isPermanent(error: unknown): boolean {
  return error instanceof PermanentJobError || (error instanceof AppError && error.status < 500);
}

/** What the client reads of an unexpected failure; the error itself goes only to the log. */
export const UNEXPECTED_FAILURE = "The job failed unexpectedly.";
/** The same while the job waits for its next attempt. */
export const UNEXPECTED_ATTEMPT_FAILURE = "An attempt of the job failed unexpectedly; it will be retried.";

/**
 * Describes an error for the job record, which its owner reads (GET /jobs/{id},
 * `JobCompleted`). An AppError or a PermanentJobError was written for the client and keeps
 * its message, code and field errors; anything else (a driver error naming a host, a
 * TypeError) may carry internals, so only a generic message is stored. The worker logs
 * the error itself.
 */
export function describeJobError(error: unknown, finalAttempt: boolean): StoredJobError {
  if (error instanceof AppError) {
    return { message: error.message, code: error.code, status: error.status, ...(error.errors ? { errors: error.errors } : {}) };
  }
  if (error instanceof PermanentJobError) return { message: error.message, code: error.code, status: 422 };
  return { message: finalAttempt ? UNEXPECTED_FAILURE : UNEXPECTED_ATTEMPT_FAILURE, code: "job_failed", status: 500 };
}
