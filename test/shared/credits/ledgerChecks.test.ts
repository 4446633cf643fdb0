/**
 * The ledger's edges: the input checks at their bounds (and that a refused movement writes
 * nothing), the texts of its two 402 refusals, and how a replayed key is compared with the
 * movement asked for: spends and grants must match in sign and amount, a reversal only in
 * direction (it may have taken less than asked, down to nothing).
 */
import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { grantCredits, reverseCredits, spendCredits, type CreditMovementInput } from "../../../shared/credits/ledger.ts";
import { freshDatabase } from "../../support/db.ts";
import { buildUser } from "../../support/factories.ts";

const move = (userId: number, amount: number, key: string, reason = "test"): CreditMovementInput => ({
  userId,
  amount,
  reason,
  referenceType: null,
  referenceId: null,
  idempotencyKey: key,
});

const entries = (pool: DatabasePool, userId: number) =>
  pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from credit_ledger where user_id = ${userId}`);

const amountMessage = "The amount must be a positive whole number of credits.";

t.test("amounts: 1 and 2,000,000,000 move; above, fractions and non-numbers are 422 with the field's message", async (t) => {
  const { pool } = await freshDatabase(t);
  const user = await buildUser(pool);
  t.equal((await grantCredits(pool, move(user.id, 2_000_000_000, "most"))).balanceAfter, 2_000_000_000, "the largest amount is granted");
  t.equal((await spendCredits(pool, move(user.id, 1, "least"))).balanceAfter, 1_999_999_999, "the smallest is spent");
  for (const amount of [2_000_000_001, Number.MAX_SAFE_INTEGER + 2, 0.5, Number.NaN, Number.POSITIVE_INFINITY, "5" as unknown as number]) {
    await t.rejects(
      spendCredits(pool, move(user.id, amount, `bad-${String(amount)}`)),
      { status: 422, code: "validation_failed", message: amountMessage, errors: { amount: [amountMessage] } },
      `amount ${JSON.stringify(amount) ?? String(amount)} refused`,
    );
  }
  t.equal(await entries(pool, user.id), 2, "the refusals wrote nothing");
});

t.test("idempotency keys of 1 to 200 characters and reasons of 1 to 255 are taken; others are a programming error", async (t) => {
  const { pool } = await freshDatabase(t);
  const user = await buildUser(pool);
  t.equal((await grantCredits(pool, move(user.id, 1, "k"))).replayed, false, "a one-character key");
  t.equal((await grantCredits(pool, move(user.id, 1, "k".repeat(200)))).replayed, false, "a 200-character key");
  t.equal((await grantCredits(pool, move(user.id, 1, "r1", "r"))).replayed, false, "a one-character reason");
  t.equal((await grantCredits(pool, move(user.id, 1, "r255", "r".repeat(255)))).replayed, false, "a 255-character reason");
  await t.rejects(grantCredits(pool, move(user.id, 1, "")), { message: "idempotencyKey must hold 1 to 200 characters" }, "an empty key");
  await t.rejects(grantCredits(pool, move(user.id, 1, "k".repeat(201))), { message: "idempotencyKey must hold 1 to 200 characters" }, "a 201-character key");
  await t.rejects(grantCredits(pool, move(user.id, 1, "r0", "")), { message: "reason must hold 1 to 255 characters" }, "an empty reason");
  await t.rejects(grantCredits(pool, move(user.id, 1, "r256", "r".repeat(256))), { message: "reason must hold 1 to 255 characters" }, "a 256-character reason");
  t.equal(await entries(pool, user.id), 4, "only the four valid grants were written");
});

t.test("the two 402 refusals say why: the balance, or the refunded credits still to cover", async (t) => {
  const { pool } = await freshDatabase(t);
  const user = await buildUser(pool);
  await grantCredits(pool, move(user.id, 10, "g"));
  await t.rejects(spendCredits(pool, move(user.id, 11, "over")), { status: 402, code: "insufficient_credits", message: "Not enough credits: 11 needed, 10 available." });
  await spendCredits(pool, move(user.id, 4, "s"));
  await reverseCredits(pool, move(user.id, 10, "refund"));
  await t.rejects(spendCredits(pool, move(user.id, 1, "paused")), {
    status: 402,
    code: "insufficient_credits",
    message: "Spending is paused until 4 refunded credit(s) are covered by new credits.",
  });
  const other = await buildUser(pool);
  await t.rejects(spendCredits(pool, move(other.id, 3, "none")), { status: 402, message: "Not enough credits: 3 needed, 0 available." }, "no account yet");
});

t.test("a replayed key must be the same movement: sign and amount for spends and grants, direction for reversals", async (t) => {
  const { pool } = await freshDatabase(t);
  const user = await buildUser(pool);
  await grantCredits(pool, move(user.id, 30, "grant"));
  await spendCredits(pool, move(user.id, 10, "spend"));
  const reused = { status: 409, code: "idempotency_key_reused", message: "This idempotency key was used for a different credit movement." };
  await t.rejects(grantCredits(pool, move(user.id, 10, "spend")), reused, "a spend's key as a grant of the same size");
  await t.rejects(spendCredits(pool, move(user.id, 30, "grant")), reused, "a grant's key as a spend of the same size");
  await t.rejects(grantCredits(pool, move(user.id, 31, "grant")), reused, "a grant's key with another amount");
  await t.rejects(reverseCredits(pool, move(user.id, 30, "grant")), reused, "a grant's key as a reversal");
  t.equal((await grantCredits(pool, move(user.id, 30, "grant"))).replayed, true, "the same grant again is a replay");

  // A reversal that found nothing to take wrote an entry of 0: replaying it is still a replay.
  const empty = await buildUser(pool);
  await grantCredits(pool, move(empty.id, 5, "g"));
  await spendCredits(pool, move(empty.id, 5, "s"));
  const first = await reverseCredits(pool, move(empty.id, 5, "nothing-there"));
  t.same({ notTaken: first.notTaken, shortfall: first.shortfall, replayed: first.replayed }, { notTaken: 5, shortfall: 5, replayed: false });
  const again = await reverseCredits(pool, move(empty.id, 5, "nothing-there"));
  t.same({ entryId: again.entryId, notTaken: again.notTaken, replayed: again.replayed }, { entryId: first.entryId, notTaken: 5, replayed: true });
  t.equal(await entries(pool, empty.id), 3, "the replay wrote nothing");
});
