import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { grantCredits, MAX_BALANCE, reverseCredits, spendCredits } from "../../../shared/credits/ledger.ts";
import { spendProjectCredits } from "../../../shared/credits/projectSpend.ts";
import { AppError } from "../../../shared/errors.ts";
import { freshDatabase } from "../../support/db.ts";
import { buildProject, buildUser } from "../../support/factories.ts";

const move = (userId: number, amount: number, key: string) => ({ userId, amount, reason: "test", referenceType: null, referenceId: null, idempotencyKey: key });

async function state(pool: DatabasePool, userId: number) {
  return pool.one(sql.type(z.object({ balance: z.number().nullable(), shortfall: z.number().nullable(), sum: z.number(), entries: z.number() }))`
    select (select balance from credit_accounts where user_id = ${userId}) as balance,
      (select shortfall from credit_accounts where user_id = ${userId}) as shortfall,
      coalesce((select sum(amount)::int from credit_ledger where user_id = ${userId}), 0) as sum,
      (select count(*)::int from credit_ledger where user_id = ${userId}) as entries`);
}

const isInsufficient = (error: unknown) => error instanceof AppError && error.status === 402 && error.code === "insufficient_credits";

t.test("50 concurrent spends against a balance that covers 20: exactly 20 succeed, the rest 402", async (t) => {
  const { pool } = await freshDatabase(t, { poolSize: 25 });
  const user = await buildUser(pool);
  await grantCredits(pool, move(user.id, 100, "grant"));
  const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => spendCredits(pool, move(user.id, 5, `spend-${i}`))));
  const ok = results.filter((r) => r.status === "fulfilled");
  const refused = results.filter((r) => r.status === "rejected");
  t.equal(ok.length, 20, "20 spends went through");
  t.equal(refused.length, 30, "30 were refused");
  t.ok(refused.every((r) => isInsufficient(r.reason)), "every refusal is 402 insufficient_credits");
  const after = await state(pool, user.id);
  t.equal(after.balance, 0, "balance 0");
  t.equal(after.sum, after.balance, "ledger sums to the balance");
  t.equal(after.entries, 21, "one grant and 20 spends, nothing for the refusals");
  const balances = ok.map((r) => (r as PromiseFulfilledResult<{ balanceAfter: number }>).value.balanceAfter).sort((a, b) => a - b);
  t.same(balances, Array.from({ length: 20 }, (_, i) => i * 5), "each success saw a distinct balance");
});

t.test("the same idempotency key applies once, also when the calls race", async (t) => {
  const { pool } = await freshDatabase(t, { poolSize: 10 });
  const user = await buildUser(pool);
  const grants = await Promise.all(Array.from({ length: 5 }, () => grantCredits(pool, move(user.id, 30, "purchase-1"))));
  t.equal(grants.filter((g) => !g.replayed).length, 1, "one grant applied");
  t.equal(new Set(grants.map((g) => g.entryId)).size, 1, "all answers name the same entry");
  t.ok(grants.every((g) => g.balanceAfter === 30), "all answers carry the first balance");
  const first = await spendCredits(pool, move(user.id, 10, "unlock"));
  const again = await spendCredits(pool, move(user.id, 10, "unlock"));
  t.same(again, { ...first, replayed: true }, "a replayed spend returns the first result");
  t.equal((await state(pool, user.id)).balance, 20, "charged once");
  await t.rejects(spendCredits(pool, move(user.id, 3, "unlock")), { status: 409, code: "idempotency_key_reused" }, "a key reused for another amount is refused");
  const other = await buildUser(pool);
  await grantCredits(pool, move(other.id, 5, "purchase-1"));
  t.equal((await state(pool, other.id)).balance, 5, "keys are per user");
});

t.test("a spend that does not fit writes nothing, and a spend runs in the caller's transaction", async (t) => {
  const { pool } = await freshDatabase(t);
  const user = await buildUser(pool);
  await t.rejects(spendCredits(pool, move(user.id, 1, "none")), { status: 402, code: "insufficient_credits" }, "no account: 402");
  t.same(await state(pool, user.id), { balance: null, shortfall: null, sum: 0, entries: 0 }, "not even an account row");
  await grantCredits(pool, move(user.id, 10, "g"));
  await t.rejects(spendCredits(pool, move(user.id, 11, "big")), { status: 402, code: "insufficient_credits" }, "over the balance: 402");
  t.equal((await state(pool, user.id)).entries, 1, "nothing written by the refusal");
  await t.rejects(
    pool.transaction(async (tx) => {
      await spendCredits(tx, move(user.id, 4, "rolled-back"));
      throw new Error("the caller fails after spending");
    }),
  );
  t.same(await state(pool, user.id), { balance: 10, shortfall: 0, sum: 10, entries: 1 }, "the caller's rollback undoes the spend");
  const retried = await spendCredits(pool, move(user.id, 4, "rolled-back"));
  t.equal(retried.replayed, false, "the key of a rolled-back spend is free again");
  for (const amount of [0, -5, 1.5]) {
    await t.rejects(spendCredits(pool, move(user.id, amount, `bad-${amount}`)), { status: 422, code: "validation_failed" }, `amount ${amount} refused`);
  }
});

t.test("a refund after the credits were spent takes what is there and pauses spending until covered", async (t) => {
  const { pool } = await freshDatabase(t);
  const user = await buildUser(pool);
  await grantCredits(pool, move(user.id, 100, "purchase"));
  await spendCredits(pool, move(user.id, 70, "store"));
  const reversal = await reverseCredits(pool, move(user.id, 100, "refund"));
  t.equal(reversal.notTaken, 70, "70 of the refunded credits were already spent");
  t.same(await state(pool, user.id), { balance: 0, shortfall: 70, sum: 0, entries: 3 }, "balance 0, shortfall 70");
  const replay = await reverseCredits(pool, move(user.id, 100, "refund"));
  t.equal(replay.replayed, true, "a repeated refund changes nothing");
  t.equal((await state(pool, user.id)).shortfall, 70, "shortfall unchanged by the replay");

  await grantCredits(pool, move(user.id, 50, "award"));
  t.same(await state(pool, user.id), { balance: 0, shortfall: 20, sum: 0, entries: 5 }, "incoming credits settle the shortfall first");
  await t.rejects(spendCredits(pool, move(user.id, 1, "blocked")), { status: 402, code: "insufficient_credits" }, "spending paused");
  await grantCredits(pool, move(user.id, 30, "award-2"));
  t.same(await state(pool, user.id), { balance: 10, shortfall: 0, sum: 10, entries: 7 }, "covered: 10 left");
  t.equal((await spendCredits(pool, move(user.id, 10, "after"))).balanceAfter, 0, "spending works again");
});

t.test("a balance or a shortfall that would pass the integer columns' maximum is refused with a 422 and writes nothing", async (t) => {
  const { pool } = await freshDatabase(t);
  const user = await buildUser(pool);
  await grantCredits(pool, move(user.id, 2_000_000_000, "first"));
  const room = MAX_BALANCE - 2_000_000_000;
  const over = grantCredits(pool, move(user.id, room + 1, "one-too-many"));
  await t.rejects(over, { status: 422, code: "validation_failed", errors: { amount: [/maximum of 2,147,483,647 credits.*at most 147483647 more/] } }, "one credit past the maximum");
  t.same(await state(pool, user.id), { balance: 2_000_000_000, shortfall: 0, sum: 2_000_000_000, entries: 1 }, "nothing written");
  t.equal((await grantCredits(pool, move(user.id, room, "exactly"))).balanceAfter, MAX_BALANCE, "the maximum itself fits");
  await t.rejects(grantCredits(pool, move(user.id, 1, "full")), { status: 422, code: "validation_failed" }, "a full account takes nothing more");
  const replay = await grantCredits(pool, move(user.id, 2_000_000_000, "first"));
  t.same([replay.replayed, replay.balanceAfter], [true, 2_000_000_000], "a replay of an applied grant still answers as before");
  t.same(await state(pool, user.id), { balance: MAX_BALANCE, shortfall: 0, sum: MAX_BALANCE, entries: 2 });

  const other = await buildUser(pool);
  await grantCredits(pool, move(other.id, 2_000_000_000, "bought"));
  await spendCredits(pool, move(other.id, 2_000_000_000, "spent"));
  await reverseCredits(pool, move(other.id, 2_000_000_000, "refund"));
  await t.rejects(reverseCredits(pool, move(other.id, room + 1, "refund-2")), { status: 422, code: "validation_failed", errors: { amount: [/unrecovered credits would exceed/] } });
  t.same(await state(pool, other.id), { balance: 0, shortfall: 2_000_000_000, sum: 0, entries: 3 }, "the refused refund wrote nothing");
  t.equal((await reverseCredits(pool, move(other.id, room, "refund-3"))).notTaken, room, "a shortfall up to the maximum is kept");
});

t.test("a project's paid operation counts against its subscription in the same transaction", async (t) => {
  const { pool } = await freshDatabase(t);
  const user = await buildUser(pool);
  const projectId = await buildProject(pool, user.id);
  const used = () => pool.oneFirst(sql.type(z.object({ used: z.number() }))`select credits_used as used from subscriptions where project_id = ${projectId}`);
  await grantCredits(pool, move(user.id, 10, "g"));
  await spendProjectCredits(pool, { ...move(user.id, 4, "op-1"), projectId });
  await spendProjectCredits(pool, { ...move(user.id, 4, "op-1"), projectId });
  t.equal(await used(), 4, "counted once for a replayed key");
  await t.rejects(spendProjectCredits(pool, { ...move(user.id, 7, "op-2"), projectId }), { status: 402, code: "insufficient_credits" });
  t.equal(await used(), 4, "a refused spend counts nothing");
  t.equal((await state(pool, user.id)).balance, 6);
});
