/**
 * Spending credits on a project's paid operation: the user's ledger is charged and the
 * project's current subscription counts the credits as used (`credits_used`, against its
 * `credits_allocated`), both in one transaction (a savepoint when `conn` already is one).
 */
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { spendCredits, type CreditMovementInput, type CreditMovementResult } from "./ledger.ts";

/**
 * `spendCredits` for an operation of project `projectId`.
 * @throws AppError 402 `insufficient_credits` (nothing written).
 */
export async function spendProjectCredits(conn: CommonQueryMethods, input: CreditMovementInput & { projectId: number }): Promise<CreditMovementResult> {
  const { projectId, ...movement } = input;
  return conn.transaction(async (tx) => {
    const result = await spendCredits(tx, movement);
    if (!result.replayed) {
      await tx.query(sql.type(ignoredRow)`
        update subscriptions set credits_used = credits_used + ${movement.amount}
        where id = (select id from subscriptions where project_id = ${projectId} order by started_at desc, id desc limit 1)`);
    }
    return result;
  });
}
