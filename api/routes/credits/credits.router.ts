/**
 * GET /credits (DESIGN §11): the caller's balance and a page of the ledger, newest first.
 */
import { z } from "zod";
import { findCreditAccount, listLedger } from "../../../shared/credits/store.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, paginationQuery } from "../../pagination.ts";
import { ledgerEntryResource, presentLedgerEntry } from "../../presenters/credits.ts";
import { defineRoute } from "../route.ts";

const show = defineRoute({
  method: "get",
  path: "/credits",
  summary: "The caller's credit balance and ledger",
  description:
    "`balance` is what can be spent; `shortfall` counts refunded credits that had already been spent (spending answers 402 until new credits cover it). `data` is a page of ledger entries, newest first; their amounts sum to the balance.",
  tags: ["Credits"],
  auth: "bearer",
  query: paginationQuery,
  responses: {
    200: {
      description: "Balance and ledger",
      schema: paginatedSchema(ledgerEntryResource).extend({ balance: z.number().int(), shortfall: z.number().int() }),
    },
  },
  handler: async (ctx, { query }) => {
    const userId = currentUser(ctx).id;
    const { pool } = ctx.deps;
    const [account, page] = await Promise.all([
      findCreditAccount(pool, userId),
      listLedger(pool, userId, { limit: query.per_page, offset: (query.page - 1) * query.per_page }),
    ]);
    ctx.body = { balance: account.balance, shortfall: account.shortfall, ...paginated(page.rows.map(presentLedgerEntry), page.total, query, new URL(ctx.href)) };
  },
});

export const creditRoutes = [show];
