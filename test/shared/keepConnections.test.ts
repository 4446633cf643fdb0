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

t.test("queries sent at once inside a transaction run one after another on its connection", async (t) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on("warning", onWarning);
  t.teardown(() => process.off("warning", onWarning));
  const db = await freshDatabase(t);
  const pool = await createPool(db.url, { maxPoolSize: 2 });
  t.teardown(() => pool.end());
  await pool.query(sql.type(ignoredRow)`create table ordered (n int not null, at_step bigint generated always as identity)`);
  const numbers = Array.from({ length: 8 }, (_, i) => i);
  const answers = await pool.transaction(async (tx) =>
    Promise.all(numbers.map((n) => tx.oneFirst(sql.type(z.object({ n: z.number() }))`insert into ordered (n) values (${n}) returning n`))),
  );
  t.same(answers, numbers, "every query answered its own caller");
  t.same(await pool.anyFirst(sql.type(z.object({ n: z.number() }))`select n from ordered order by at_step`), numbers, "in the order they were sent");
  // A savepoint waits for the queries before it and has its own queue.
  const nested = await pool.transaction(async (tx) => {
    const before = tx.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from ordered`);
    const inner = tx.transaction(async (savepoint) => Promise.all([1, 2, 3].map((n) => savepoint.oneFirst(sql.type(z.object({ n: z.number() }))`select ${n}::int as n`))));
    return [await before, await inner];
  });
  t.same(nested, [8, [1, 2, 3]]);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(warnings.filter((m) => /already executing a query/.test(m)), [], "pg saw one query at a time");
});
