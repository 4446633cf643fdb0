/**
 * Keeps pooled connections alive across ordinary errors.
 *
 * Slonik destroys a pooled connection whenever the code running on it throws, by design
 * (gajus/slonik#721, "won't fix"): a `one()` that finds nothing, a unique violation, or a
 * 403 thrown inside a transaction each cost a new PostgreSQL backend (a fork, TCP and
 * authentication: milliseconds, against microseconds for the query). Measured on the
 * benchmark route, a not-found answer ran at a twentieth of the found one.
 *
 * The wrapper hands such errors across the connection boundary as values and throws them
 * outside, so the connection goes back to the pool. Inside a transaction the work is first
 * rolled back and an empty transaction opened for Slonik to commit. Errors that mean the
 * connection itself is in doubt (terminated backend, lost connection, unexpected state)
 * and serialization failures (which Slonik's transaction retries) pass through unchanged.
 */
import {
  BackendTerminatedError,
  BackendTerminatedUnexpectedlyError,
  ConnectionError,
  IdleTransactionTimeoutError,
  sql,
  UnexpectedStateError,
  type CommonQueryMethods,
  type DatabasePool,
} from "slonik";

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Whether the connection that saw `error` must not be reused. */
export function spoilsConnection(error: unknown): boolean {
  if (
    error instanceof BackendTerminatedError ||
    error instanceof BackendTerminatedUnexpectedlyError ||
    error instanceof ConnectionError ||
    error instanceof IdleTransactionTimeoutError ||
    error instanceof UnexpectedStateError
  ) {
    return true;
  }
  // Class 40 (transaction rollback: serialization failure, deadlock): Slonik retries these.
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("40");
}

const unwrap = <T>(outcome: Outcome<T>): T => {
  if (outcome.ok) return outcome.value;
  throw outcome.error;
};

const queryMethods = ["any", "anyFirst", "exists", "many", "manyFirst", "maybeOne", "maybeOneFirst", "one", "oneFirst", "query"] as const;

/** `pool` with its query methods and `transaction` returning connections on ordinary errors. */
export function keepConnections(pool: DatabasePool): DatabasePool {
  const kept: Record<string, unknown> = { ...pool };
  for (const name of queryMethods) {
    kept[name] = async (query: never) =>
      unwrap(
        await pool.connect(async (connection): Promise<Outcome<unknown>> => {
          try {
            return { ok: true, value: await (connection[name] as (q: never) => Promise<unknown>)(query) };
          } catch (error) {
            if (spoilsConnection(error)) throw error;
            return { ok: false, error };
          }
        }),
      );
  }
  kept.transaction = async <T>(handler: (tx: CommonQueryMethods & { transaction: DatabasePool["transaction"] }) => Promise<T>, retryLimit?: number) =>
    unwrap(
      await pool.transaction(async (tx): Promise<Outcome<T>> => {
        try {
          return { ok: true, value: await handler(tx) };
        } catch (error) {
          if (spoilsConnection(error)) throw error;
          // Undo the work, then leave an empty transaction for Slonik's COMMIT.
          await tx.query(sql.unsafe`rollback`);
          await tx.query(sql.unsafe`start transaction`);
          return { ok: false, error };
        }
      }, retryLimit),
    );
  return kept as unknown as DatabasePool;
}
