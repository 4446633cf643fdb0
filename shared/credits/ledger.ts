/**
 * The credits ledger: the one way credits move, for every area (store purchases, the form
 * designer's unlock, card and wallet payments, refunds, monthly awards, admin adjustments).
 *
 * Glossary:
 * - account: `credit_accounts` row of a user; `balance` is what can be spent.
 * - entry: an append-only `credit_ledger` row, signed amount and the balance after it.
 * - shortfall: credits a refund could not take back (already spent); spending is refused
 *   until incoming credits have covered it.
 * - idempotency key: chosen by the caller, unique per user; applying the same key twice
 *   returns the first entry with `replayed: true` and changes nothing.
 *
 * Each call is one statement (`credit_ledger_apply`, sql/migrations/0020) that locks the
 * account row, so it runs inside the caller's transaction when given one and commits or
 * rolls back with it.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { AppError, conflict } from "../errors.ts";

/** What moves: shared by spends, grants and reversals. */
export interface CreditMovementInput {
  /** Whose account. */
  userId: number;
  /** Credits to move, a positive integer (the direction is the function's). */
  amount: number;
  /** Why, in snake_case (`store_purchase`, `form_designer_unlock`, `package_purchase`, …). */
  reason: string;
  /** What the movement belongs to (`credit_transaction`, `store_purchase`, …), or null. */
  referenceType: string | null;
  /** The id of that thing, or null. */
  referenceId: string | null;
  /** Unique per user and movement; a retry with the same key changes nothing. */
  idempotencyKey: string;
}

/** The entry a movement wrote (or found, when replayed). */
export interface CreditMovementResult {
  /** The ledger entry's id. */
  entryId: number;
  /** The account balance right after that entry. */
  balanceAfter: number;
  /** True when the key had been applied before and this call changed nothing. */
  replayed: boolean;
}

type Mode = "spend" | "grant" | "reverse";

/** The largest balance (and refund shortfall) an account can hold: its columns are PostgreSQL integers. */
export const MAX_BALANCE = 2_147_483_647;

const applyRow = z.object({
  outcome: z.enum(["applied", "replayed", "insufficient", "over_limit"]),
  entry_id: z.number().nullable(),
  entry_amount: z.number().nullable(),
  balance_after: z.number(),
  shortfall: z.number(),
});

function check(input: CreditMovementInput): void {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0 || input.amount > 2_000_000_000) {
    throw new AppError(422, "validation_failed", "The amount must be a positive whole number of credits.", { amount: ["The amount must be a positive whole number of credits."] });
  }
  if (input.idempotencyKey.length < 1 || input.idempotencyKey.length > 200) throw new Error("idempotencyKey must hold 1 to 200 characters");
  if (input.reason.length < 1 || input.reason.length > 255) throw new Error("reason must hold 1 to 255 characters");
}

async function apply(conn: CommonQueryMethods, mode: Mode, input: CreditMovementInput) {
  check(input);
  const row = await conn.one(sql.type(applyRow)`
    select outcome, entry_id, entry_amount, balance_after, shortfall from credit_ledger_apply(
      ${input.userId}, ${mode}, ${input.amount}, ${input.reason}, ${input.referenceType}, ${input.referenceId}, ${input.idempotencyKey})`);
  if (row.outcome === "insufficient") {
    const message =
      row.shortfall > 0
        ? `Spending is paused until ${row.shortfall} refunded credit(s) are covered by new credits.`
        : `Not enough credits: ${input.amount} needed, ${row.balance_after} available.`;
    throw new AppError(402, "insufficient_credits", message);
  }
  if (row.outcome === "over_limit") {
    const limit = MAX_BALANCE.toLocaleString("en");
    const message =
      mode === "grant"
        ? `The balance would exceed the maximum of ${limit} credits: it holds ${row.balance_after}, so at most ${MAX_BALANCE - row.balance_after} more can be added.`
        : `The refund's unrecovered credits would exceed the maximum of ${limit}.`;
    throw new AppError(422, "validation_failed", message, { amount: [message] });
  }
  if (row.outcome === "replayed") {
    const sign = mode === "grant" ? 1 : -1;
    // A reversal may have taken less than asked; spends and grants must match exactly.
    const same = mode === "reverse" ? (row.entry_amount ?? 0) <= 0 : row.entry_amount === sign * input.amount;
    if (!same) throw conflict("This idempotency key was used for a different credit movement.", "idempotency_key_reused");
  }
  return { entryId: row.entry_id!, balanceAfter: row.balance_after, replayed: row.outcome === "replayed", shortfall: row.shortfall };
}

/**
 * Takes `amount` credits from the user's balance, in `conn`'s transaction when it is one.
 * @throws AppError 402 `insufficient_credits` (nothing written) when the balance does not
 *   cover it or a refund shortfall is open; 409 `idempotency_key_reused` when the key was
 *   used for a different movement.
 */
export async function spendCredits(conn: CommonQueryMethods, input: CreditMovementInput): Promise<CreditMovementResult> {
  const { entryId, balanceAfter, replayed } = await apply(conn, "spend", input);
  return { entryId, balanceAfter, replayed };
}

/**
 * Adds `amount` credits to the user's balance (purchases, awards, refunds of spends). An open
 * refund shortfall is settled from them first, as a second entry right after this one.
 * @throws AppError 409 `idempotency_key_reused` when the key was used for a different movement;
 *   422 (nothing written) when the balance would exceed MAX_BALANCE.
 */
export async function grantCredits(conn: CommonQueryMethods, input: CreditMovementInput): Promise<CreditMovementResult> {
  const { entryId, balanceAfter, replayed } = await apply(conn, "grant", input);
  return { entryId, balanceAfter, replayed };
}

/**
 * Takes back up to `amount` credits granted earlier (a refunded payment): what the balance
 * holds is taken, the rest is recorded as the account's shortfall. Returns the credits that
 * could not be taken (0 when all were there).
 * @throws AppError 422 (nothing written) when the shortfall would exceed MAX_BALANCE.
 */
export async function reverseCredits(conn: CommonQueryMethods, input: CreditMovementInput): Promise<CreditMovementResult & { notTaken: number; shortfall: number }> {
  const result = await apply(conn, "reverse", input);
  const taken = -(await conn.oneFirst(sql.type(z.object({ amount: z.number() }))`select amount from credit_ledger where id = ${result.entryId}`));
  return { ...result, notTaken: input.amount - taken };
}
