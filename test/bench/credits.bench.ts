/**
 * Credits ledger benchmark (issue "Commerce"): spends per second through `spendCredits`
 * with 50 concurrent clients, on one account (every spend waits for the same row lock) and
 * on 50 accounts, against a bare `update … set balance = balance - n where balance >= n` on a
 * plain table in the same run. Target on one account: ≥ 0.5× the bare update, i.e. the
 * ledger's extra insert must not serialise more than the balance row already does.
 * Rounds alternate sides, medians compared (the disk's flush time drifts on a shared machine).
 */
import { z } from "zod";
import { grantCredits, spendCredits } from "../../shared/credits/ledger.ts";
import { createPool, sql, type DatabasePool } from "../../shared/db/pool.ts";
import { buildUser } from "../support/factories.ts";
import { benchDatabase } from "./support/db.ts";
import { ratioFigure, report } from "./report.ts";

const CLIENTS = 50;
const SPENDS = Number(process.env.BENCH_SPENDS ?? 2000);
const ROUNDS = 3;
const none = z.object({});

async function drive(work: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < SPENDS) {
        const i = next++;
        await work(i);
      }
    }),
  );
  return SPENDS / ((performance.now() - started) / 1000);
}

let round = 0;
const ledger = (pool: DatabasePool, users: number[]) => {
  round += 1;
  const tag = round;
  return drive((i) => spendCredits(pool, { userId: users[i % users.length]!, amount: 1, reason: "bench", referenceType: null, referenceId: null, idempotencyKey: `bench:${tag}:${i}` }));
};
const bare = (pool: DatabasePool, accounts: number) =>
  drive((i) => pool.query(sql.type(none)`update bench_balances set balance = balance - 1 where id = ${(i % accounts) + 1} and balance >= 1`));

const db = await benchDatabase();
const pool = await createPool(db.url, { maxPoolSize: CLIENTS });
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
try {
  const users: number[] = [];
  for (let i = 0; i < CLIENTS; i += 1) users.push((await buildUser(pool)).id);
  for (const id of users) await grantCredits(pool, { userId: id, amount: 1_000_000_000, reason: "bench", referenceType: null, referenceId: null, idempotencyKey: "bench:start" });
  await pool.query(sql.type(none)`create table bench_balances (id integer primary key, balance integer not null check (balance >= 0))`);
  await pool.query(sql.type(none)`insert into bench_balances select g, 1000000000 from generate_series(1, ${CLIENTS}) g`);

  const figures = [];
  for (const [label, accounts] of [["one account", 1], ["50 accounts", CLIENTS]] as const) {
    const ours: number[] = [];
    const base: number[] = [];
    for (let r = 0; r < ROUNDS; r += 1) {
      if (r % 2 === 0) base.push(await bare(pool, accounts));
      ours.push(await ledger(pool, users.slice(0, accounts)));
      if (r % 2 === 1) base.push(await bare(pool, accounts));
    }
    figures.push(
      ratioFigure(`credits.spend.${accounts === 1 ? "one_account" : "many_accounts"}`, median(ours), median(base), "spends/s", accounts === 1 ? 0.5 : 0, `${label}, ${CLIENTS} clients; vs bare conditional update; medians of ${ROUNDS} rounds`),
    );
  }
  report(`Credits: ${SPENDS} spends by ${CLIENTS} concurrent clients`, figures);
} finally {
  await pool.end();
  await db.drop();
}
