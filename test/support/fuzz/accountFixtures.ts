/**
 * Fixtures of a world's owner as an account holder (`world.ts`): a support ticket they
 * opened, an invitation to another user's team addressed to their e-mail, another user's
 * project open to join requests, an invoice, and a Web Push subscription.
 * Made on first use, through the API where a client can make one, else by the services the
 * API's own paths call.
 */
import { createPersonalToken } from "../../../shared/auth/personalTokens.ts";
import { issueInvoice, listInvoices } from "../../../shared/billing/invoices.ts";
import { insertTransaction } from "../../../shared/payments/store.ts";
import { createInvitation, listOpenInvitations } from "../../../shared/teams/invitations.ts";
import { buildTeam } from "../factories.ts";
import { PUSH_SUBSCRIPTION } from "./sampleFiles.ts";
import type { FixtureContext } from "./world.ts";

/** World kinds of the `{id}` of account routes, by documented path. */
export const ACCOUNT_ROUTE_KINDS: [RegExp, string][] = [
  [/^\/api\/(admin\/)?support-tickets\/\{id\}/, "supportTicket"],
  [/^\/api\/team-invitations\/\{id\}/, "invitation"],
  [/^\/api\/billing\/invoices\/\{id\}/, "invoice"],
];

/** The id of an account kind of `ctx`'s world, or null when `kind` is not one. */
export function makeAccountFixture(ctx: FixtureContext, kind: string): Promise<number | undefined> | null {
  const { pool, owner } = ctx;
  switch (kind) {
    case "supportTicket":
      return ctx.call(kind, "POST", "/api/support-tickets", { subject: "It broke", body: "Since this morning." }, (b) => b.ticket.id);
    case "invitation":
      // The victim's team invites the owner; inviting is a team route's work, sending its mail not the fuzz's business.
      return (async () => {
        const team = await buildTeam(pool, ctx.victimId);
        await createInvitation(pool, { teamId: team, email: owner.email, roleId: 3, invitedBy: ctx.victimId });
        return (await listOpenInvitations(pool, owner.email)).find((i) => i.team_id === team)?.id;
      })();
    case "pushSubscription":
      return ctx.call(kind, "POST", "/api/push/subscribe", PUSH_SUBSCRIPTION, (b) => b.subscription.id);
    case "joinableProject":
      // Another user's project open to join requests; the owner joins it by its code (noted for POST /projects/join).
      return (async () => {
        const victim = (await createPersonalToken(pool, ctx.victimId, "joinable")).plainText;
        return ctx.call(kind, "POST", "/api/projects", { name: "Open house", allow_join_requests: true }, (b) => {
          ctx.note(kind, { join_code: b.project.join_code });
          return b.project.id;
        }, { token: victim });
      })();
    case "invoice":
      // What a payment provider's success leaves: a card payment of a credit package and its invoice (afterPaymentSucceeded).
      return (async () => {
        await pool.transaction(async (tx) => {
          const payment = await insertTransaction(tx, { user_id: owner.id, kind: "credit_package", package_id: null, item_id: null, project_id: null, payment_method: "cardprocessor", credits: 100, amount_cents: 500, currency: "EUR" });
          await issueInvoice(tx, payment);
        });
        return (await listInvoices(pool, owner.id, { limit: 1, offset: 0 })).rows[0]?.id;
      })();
    default:
      return null;
  }
}
