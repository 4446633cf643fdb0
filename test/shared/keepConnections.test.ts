/**
 * Ordinary errors (not found, constraint violations, application errors thrown inside a
 * transaction) hand the connection back to the pool instead of costing a new backend, and
 * a failed transaction still leaves nothing behind.
 */
import t from "tap";
import { z } from "zod";
import { createPool, ignoredRow, sql } from "../../shared/db/pool.ts";
import { AppError } from "../../shared/errors.ts";
import { freshDatabase } from "../support/db.ts";

/** The class name of what `promise` rejects with. */
async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as object).constructor.name;
  }
  return "(resolved)";
}

const pid = sql.type(z.object({ pid: z.number() }))`select pg_backend_pid() as pid`;

t.test("ordinary errors keep the pooled connection", async (t) => {
  const db = await freshDatabase(t);
  const pool = await createPool(db.url, { maxPoolSize: 1 });
  t.teardown(() => pool.end());
  await pool.query(sql.type(ignoredRow)`create table kept (id int primary key, note text not null)`);
  const first = await pool.oneFirst(pid);

  t.equal(await rejection(pool.one(sql.type(z.object({ id: z.number() }))`select id from kept where id = 42`)), "NotFoundError");
  t.equal(await rejection(pool.oneFirst(sql.type(z.object({ id: z.number() }))`select 1 as id union all select 2`)), "DataIntegrityError");
  await pool.query(sql.type(ignoredRow)`insert into kept values (1, 'one')`);
  t.equal(await rejection(pool.query(sql.type(ignoredRow)`insert into kept values (1, 'again')`)), "UniqueIntegrityConstraintViolationError");
  await t.rejects(
    pool.transaction(async (tx) => {
      await tx.query(sql.type(ignoredRow)`insert into kept values (2, 'two')`);
      throw new AppError(403, "forbidden", "no");
    }),
    new AppError(403, "forbidden", "no"),
    "an application error thrown inside a transaction reaches the caller as it was",
  );
  t.equal(
    await rejection(
      pool.transaction(async (tx) => {
        await tx.query(sql.type(ignoredRow)`insert into kept values (3, 'three')`);
        await tx.query(sql.type(ignoredRow)`insert into kept values (1, 'duplicate aborts the transaction')`);
      }),
    ),
    "UniqueIntegrityConstraintViolationError",
  );
  t.equal(await pool.oneFirst(pid), first, "the same backend served every call");
  t.same(await pool.anyFirst(sql.type(z.object({ id: z.number() }))`select id from kept order by id`), [1], "failed transactions left nothing");

  const committed = await pool.transaction(async (tx) => {
    await tx.query(sql.type(ignoredRow)`insert into kept values (4, 'four')`);
    return tx.transaction(async (inner) => inner.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from kept`));
  });
  t.equal(committed, 2, "transactions (and nested ones) still work and commit");
  t.same(await pool.anyFirst(sql.type(z.object({ id: z.number() }))`select id from kept order by id`), [1, 4]);
  t.equal(await pool.oneFirst(pid), first);
});

t.test("a terminated backend is still replaced", async (t) => {
  const db = await freshDatabase(t);
  const pool = await createPool(db.url, { maxPoolSize: 1 });
  t.teardown(() => pool.end());
  const first = await pool.oneFirst(pid);
  await t.rejects(pool.query(sql.type(ignoredRow)`select pg_terminate_backend(pg_backend_pid())`));
  const second = await pool.oneFirst(pid);
  t.not(second, first, "a fresh backend after the old one was killed");
});
