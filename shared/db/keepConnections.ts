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

const serialMethods = new Set<string>([...queryMethods, "record", "stream"]);

/**
 * `tx` sending its queries one after another. A transaction is one PostgreSQL connection,
 * and code that reads several things at once (`Promise.all` over a `conn` that may be a
 * transaction) would otherwise hand pg several queries on one client, which pg deprecates
 * and pg 9 refuses. A savepoint (`tx.transaction`) starts once the queries before it are done
 * and gets a queue of its own; it is not queued itself, so a query that wrongly uses the
 * outer `tx` inside it still meets Slonik's error rather than waiting forever.
 */
export function oneQueryAtATime<C extends object>(tx: C): C {
  let queue: Promise<unknown> = Promise.resolve();
  return new Proxy(tx, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      if (name === "transaction") {
        return async (handler: (inner: object) => Promise<unknown>, ...rest: unknown[]) => {
          await queue;
          return method.call(target, (inner: object) => handler(oneQueryAtATime(inner)), ...rest);
        };
      }
      if (typeof name === "string" && serialMethods.has(name)) {
        return (...args: unknown[]) => {
          const run = queue.then(() => method.apply(target, args));
          queue = run.catch(() => {});
          return run;
        };
      }
      return method.bind(target);
    },
  });
}

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
      await pool.transaction(async (raw): Promise<Outcome<T>> => {
        const tx = oneQueryAtATime(raw);
        try {
          return { ok: true, value: await handler(tx) };
        } catch (error) {
          if (spoilsConnection(error)) throw error;
          // Undo the work (after any query still queued), then leave an empty transaction for Slonik's COMMIT.
          await tx.query(sql.unsafe`rollback`);
          await tx.query(sql.unsafe`start transaction`);
          return { ok: false, error };
        }
      }, retryLimit),
    );
  return kept as unknown as DatabasePool;
}
