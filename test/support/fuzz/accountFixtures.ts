/**
 * Fixtures of a world's owner as an account holder (`world.ts`): a support ticket they
 * opened, an invitation to another user's team addressed to their e-mail, another user's
 * project open to join requests, an invoice, a Web Push subscription, credits to spend and a
 * plan sold for them, payment provider events signed as the providers sign them, a git
 * connection, and what the sign-in
 * routes need: the owner's credentials (every owner has `OWNER_PASSWORD`), two-factor
 * authentication pending or on with a known secret and a login challenge with a current TOTP
 * code, a password reset token, a pending e-mail change's cancel token, a two-factor restore
 * token and a signed
 * verification link. Made on first use, through the API where a client can make one, else by
 * the services the API's own paths call; the values a request must carry are noted for
 * `World.notes` (`bodyHints.ts` puts them into the body or query).
 */
import { randomBytes } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import { z } from "zod";
import { requestEmailChange } from "../../../shared/auth/emailChanges.ts";
import { verificationLink } from "../../../shared/auth/emailVerification.ts";
import { createChallenge } from "../../../shared/auth/loginChallenges.ts";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { createResetToken } from "../../../shared/auth/passwordResets.ts";
import { noticeTwoFactorChange } from "../../../shared/auth/twoFactorRestores.ts";
import { createPersonalToken } from "../../../shared/auth/personalTokens.ts";
import { grantCredits } from "../../../shared/credits/ledger.ts";
import { seal } from "../../../shared/crypto.ts";
import { sql } from "../../../shared/db/pool.ts";
import { listBillingDocuments } from "../../../shared/billing/documents.ts";
import { issueInvoice } from "../../../shared/billing/invoices.ts";
import { insertTransaction } from "../../../shared/payments/store.ts";
import { createInvitation, listOpenInvitations } from "../../../shared/teams/invitations.ts";
import { buildTeam } from "../factories.ts";
import { PUSH_SUBSCRIPTION } from "./sampleFiles.ts";
import type { FixtureContext } from "./world.ts";

/** The password of every world's owner. */
export const OWNER_PASSWORD = "Fuzz-owner-password-7q2w";

/** Its hash, made once per process (argon2 takes a while; every world's owner shares it). */
let passwordHash: Promise<string> | undefined;
export const ownerPasswordHash = () => (passwordHash ??= hashPassword(OWNER_PASSWORD));

const STEP_S = 30;
/** The TOTP code of `secret` for time step `step` (an authenticator app's code of that half minute). */
const totpCode = (secret: string, step: number) => new TOTP({ secret: Secret.fromBase32(secret), period: STEP_S }).generate({ timestamp: step * STEP_S * 1000 });
const stepNow = () => Math.floor(Date.now() / 1000 / STEP_S);

/** World kinds of the `{id}` of account routes, by documented path. */
export const ACCOUNT_ROUTE_KINDS: [RegExp, string][] = [
  [/^\/api\/(admin\/)?support-tickets\/\{id\}/, "supportTicket"],
  [/^\/api\/team-invitations\/\{id\}/, "invitation"],
  [/^\/api\/billing\/invoices\/\{id\}/, "invoice"],
  [/^\/api\/git\/connections\/\{id\}/, "gitConnection"],
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
        // The world's owner has a verified address, so every invitation of it is theirs to see.
        return (await listOpenInvitations(pool, { id: owner.id, email: owner.email, email_verified_at: new Date() })).find((i) => i.team_id === team)?.id;
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
        return (await listBillingDocuments(pool, owner.id, { limit: 1, offset: 0 })).rows[0]?.id;
      })();
    case "credits":
      // Enough credits for what the owner buys with them: the form designer's unlock (500), a
      // Pro plan's period (400), a Supporter patron month (300).
      return (async () => {
        await grantCredits(pool, { userId: owner.id, amount: 1_000, reason: "fuzz_world", referenceType: null, referenceId: null, idempotencyKey: `fuzz_world:${randomBytes(8).toString("hex")}` });
        return owner.id;
      })();
    case "cardEvent": {
      // An event as the card processor sends one, signed with the webhook secret (a new id per world: a redelivery is a duplicate).
      const { body, signature } = ctx.secrets.stripe.signed(ctx.secrets.stripe.event("payment_intent.payment_failed", { id: `pi_fuzz_${randomBytes(8).toString("hex")}`, object: "payment_intent", metadata: {} }));
      ctx.note(kind, { body, "stripe-signature": signature });
      return Promise.resolve(owner.id);
    }
    case "walletEvent": {
      // An event as the wallet provider sends one, with the transmission headers its stand-in verifies.
      const { body, headers } = ctx.secrets.paypal.signed(ctx.secrets.paypal.event("PAYMENT.CAPTURE.DENIED", { id: `fuzz-${randomBytes(8).toString("hex")}` }));
      ctx.note(kind, { body, ...headers });
      return Promise.resolve(owner.id);
    }
    case "gitConnection":
      // What signing in to GitHub leaves (GET /git/{provider}/callback, which needs the provider itself): a connection with sealed tokens.
      return pool.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into git_connections (user_id, provider, instance_url, account_id, account_login, access_token_sealed)
        values (${owner.id}, 'github', 'https://github.com', ${`fuzz-${owner.id}`}, ${`fuzz_${owner.id}`}, ${sql.binary(seal(ctx.secrets.appKey, "gho_fuzz"))}) returning id`);
    case "proPlan":
      // A plan sold for credits (the free one is not sold, the Team plan costs more than `credits`).
      return pool.oneFirst(sql.type(z.object({ id: z.number() }))`select id from plans where code = 'pro'`);
    case "signIn":
      ctx.note(kind, { email: owner.email, password: OWNER_PASSWORD });
      return Promise.resolve(owner.id);
    case "oauthSignIn":
      ctx.note(kind, { grant_type: "password", client_id: ctx.secrets.oauthClient.id, client_secret: ctx.secrets.oauthClient.secret, username: owner.email, password: OWNER_PASSWORD, scope: "*" });
      return Promise.resolve(owner.id);
    case "twoFactorPending":
      // Enrollment started through the API: confirming needs a code of the pending secret.
      return (async () => {
        ctx.spoil();
        let secret = "";
        const id = await ctx.call(kind, "POST", "/api/auth/2fa/enable", { current_password: OWNER_PASSWORD }, (b) => ((secret = b.secret), owner.id));
        ctx.note(kind, { code: totpCode(secret, stepNow()), current_password: OWNER_PASSWORD });
        return id;
      })();
    case "twoFactorOn":
      // Enrolled through the API; the secret and the step its confirmation used are noted for the next code.
      return (async () => {
        ctx.spoil();
        let secret = "";
        if ((await ctx.call(kind, "POST", "/api/auth/2fa/enable", { current_password: OWNER_PASSWORD }, (b) => ((secret = b.secret), owner.id))) === undefined) return undefined;
        const step = stepNow();
        const id = await ctx.call(kind, "POST", "/api/auth/2fa/confirm", { code: totpCode(secret, step), current_password: OWNER_PASSWORD }, () => owner.id);
        ctx.note(kind, { secret, step: String(step) });
        return id;
      })();
    case "twoFactorChallenge":
      // What POST /auth/login answers an account with 2FA: a challenge; finished with the code of the step after the confirmation's (±1 step is accepted).
      return (async () => {
        await ctx.need("twoFactorOn");
        const last = await pool.oneFirst(sql.type(z.object({ s: z.number().nullable() }))`select two_factor_last_step::int as s from users where id = ${owner.id}`);
        const { secret } = (await ctx.notes("twoFactorOn"))!;
        const token = await createChallenge(pool, owner.id, { deviceId: null, browser: null });
        ctx.note(kind, { two_factor_token: token, code: totpCode(secret!, Math.max(stepNow(), (last ?? 0) + 1)) });
        return owner.id;
      })();
    case "passwordReset":
      // What POST /auth/forgot-password e-mails: a reset token for the owner's address.
      return (async () => {
        ctx.spoil();
        ctx.note(kind, { token: await createResetToken(pool, owner.id), email: owner.email });
        return owner.id;
      })();
    case "emailChange":
      // A change of the owner's address waiting for confirmation; the old address got the cancel token.
      return (async () => {
        ctx.spoil();
        const token = await pool.transaction((tx) => requestEmailChange(tx, owner, `new.${owner.email}`));
        ctx.note(kind, { token });
        return owner.id;
      })();
    case "twoFactorRestore":
      // Two-factor on, then new recovery codes: the notice mailed to the owner carries the restore token.
      return (async () => {
        ctx.spoil();
        await ctx.need("twoFactorOn");
        const recipient = { id: owner.id, name: "Owner", email: owner.email, language: "en" };
        const token = await pool.transaction((tx) => noticeTwoFactorChange(tx, recipient, "recovery_codes", ctx.secrets.frontendUrl));
        if (token === null) return undefined;
        ctx.note(kind, { token });
        return owner.id;
      })();
    case "verificationLink":
      // The signed link of the owner's address, as the verification e-mail carries it (`{hash}` comes with the path).
      ctx.note(kind, Object.fromEntries(new URL(verificationLink(ctx.secrets.frontendUrl, ctx.secrets.appKey, owner)).searchParams));
      return Promise.resolve(owner.id);
    default:
      return null;
  }
}
