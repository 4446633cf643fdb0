/**
 * Whether a failed query means the database could not be reached, rather than that the
 * request or the code was wrong: no connection could be had (the server down, restarting or
 * failing over, out of connection slots, the database closed to connections, the pool's wait
 * run out; Slonik reports every failed acquisition as a ConnectionError) or the server ended
 * the backend under the statement. Such a failure is worth retrying shortly, so the API answers
 * it with 503 `database_unavailable` and Retry-After instead of a 500. Everything else, a
 * statement timeout included (a slow query is worth a look, not a blind retry), stays a 500.
 */
import { BackendTerminatedError, BackendTerminatedUnexpectedlyError, ConnectionError } from "slonik";

export function databaseUnavailable(error: unknown): boolean {
  return error instanceof ConnectionError || error instanceof BackendTerminatedError || error instanceof BackendTerminatedUnexpectedlyError;
}
