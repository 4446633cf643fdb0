/**
 * Errors a task can throw to steer its job record.
 *
 * A PermanentJobError (or an AppError with a 4xx status, e.g. a validation failure) ends
 * the job at once as `failed`: retrying bad input only delays the answer. Any other error
 * is retried with back-off until the kind's attempts are used up.
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

/** Describes an error for the job record, never leaking internals of unexpected failures. */
export function describeJobError(error: unknown, finalAttempt: boolean): StoredJobError {
  if (error instanceof AppError) {
    return { message: error.message, code: error.code, status: error.status, ...(error.errors ? { errors: error.errors } : {}) };
  }
  if (error instanceof PermanentJobError) return { message: error.message, code: error.code, status: 422 };
  const message = error instanceof Error ? error.message : String(error);
  return {
    message: finalAttempt ? `The job failed after its last attempt: ${truncate(message)}` : truncate(message),
    code: "job_failed",
    status: 500,
  };
}

function truncate(text: string): string {
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}
