/**
 * Who may use the form designer (spec, Authentication 14): a patron while the membership
 * lasts, anyone who paid the one-time unlock in credits (for good), or anyone in the one
 * trial of FORM_DESIGNER_TRIAL_DAYS an account gets. Membership is read through
 * shared/patrons/membership.ts only; the other two are rows of `form_designer_grants`.
 *
 * The status a client reads (`GET /form-designer/access`) reports a trial as the spec's
 * access types allow: `access_type` `credits` with `credits_paid` 0 and `is_trial` true.
 */
import { z } from "zod";
import type { Config } from "../config.ts";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { AppError } from "../errors.ts";
import { spendCredits } from "../credits/ledger.ts";
import { findCreditAccount } from "../credits/store.ts";
import { currentPatronPeriod } from "../patrons/membership.ts";

const grantRow = z.object({
  access_type: z.enum(["credits", "trial"]),
  credits_paid: z.number(),
  granted_at: z.date(),
  expires_at: z.date().nullable(),
  active: z.boolean(),
});
type GrantRow = z.infer<typeof grantRow>;

export const accessStatusSchema = z.object({
  has_access: z.boolean(),
  access_type: z.enum(["credits", "patron"]).nullable(),
  is_trial: z.boolean(),
  trial_available: z.boolean(),
  patron_level: z.number().nullable(),
  credits_paid: z.number().nullable(),
  granted_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  days_remaining: z.number().nullable(),
  is_patron: z.boolean(),
  is_expired: z.boolean(),
  can_renew: z.boolean(),
  unlock_cost: z.number(),
  user_credits: z.number(),
});
export type AccessStatus = z.infer<typeof accessStatusSchema>;

const DAY_MS = 86_400_000;

async function grantsOf(conn: CommonQueryMethods, userId: number): Promise<GrantRow[]> {
  return [
    ...(await conn.any(sql.type(grantRow)`
      select access_type, credits_paid, granted_at, expires_at, (expires_at is null or expires_at > now()) as active
      from form_designer_grants where user_id = ${userId}`)),
  ];
}

/** Whether the user had patron membership once that has lapsed by now. */
async function hadPatronPeriod(conn: CommonQueryMethods, userId: number): Promise<boolean> {
  return conn.exists(sql.type(z.object({}))`select 1 from patron_memberships where user_id = ${userId} and expires_at <= now()`);
}

/** The access status of `userId`, with the credit balance (`user_credits`). */
export async function accessStatus(conn: CommonQueryMethods, userId: number, config: Config): Promise<AccessStatus> {
  const [patron, grants, account] = await Promise.all([currentPatronPeriod(conn, userId), grantsOf(conn, userId), findCreditAccount(conn, userId)]);
  const balance = account.balance;
  const credits = grants.find((g) => g.access_type === "credits");
  const trial = grants.find((g) => g.access_type === "trial");
  const base = {
    is_patron: patron !== null,
    patron_level: patron?.level ?? null,
    unlock_cost: config.formDesigner.unlockCost,
    user_credits: balance,
    trial_available: trial === undefined && config.formDesigner.trialDays > 0,
  };
  const remaining = (expires: Date | null) => (expires === null ? null : Math.max(0, Math.ceil((expires.getTime() - Date.now()) / DAY_MS)));
  if (patron) {
    return {
      ...base,
      has_access: true,
      access_type: "patron",
      is_trial: false,
      credits_paid: credits?.credits_paid ?? null,
      granted_at: patron.started_at.toISOString(),
      expires_at: patron.expires_at.toISOString(),
      days_remaining: remaining(patron.expires_at),
      is_expired: false,
      can_renew: false,
    };
  }
  const active = credits?.active ? credits : trial?.active ? trial : undefined;
  if (active) {
    return {
      ...base,
      has_access: true,
      access_type: "credits",
      is_trial: active.access_type === "trial",
      credits_paid: active.credits_paid,
      granted_at: active.granted_at.toISOString(),
      expires_at: active.expires_at?.toISOString() ?? null,
      days_remaining: remaining(active.expires_at),
      is_expired: false,
      can_renew: false,
    };
  }
  // No access now: expired when a trial ran out or a membership lapsed.
  const expired = trial !== undefined || (await hadPatronPeriod(conn, userId));
  return {
    ...base,
    has_access: false,
    access_type: null,
    is_trial: false,
    credits_paid: null,
    granted_at: trial?.granted_at.toISOString() ?? null,
    expires_at: trial?.expires_at?.toISOString() ?? null,
    days_remaining: expired ? 0 : null,
    is_expired: expired,
    can_renew: expired,
  };
}

/** SQL boolean: `userId` may use the form designer now (for queries that check it along with what they read). */
export const formDesignerAccessFragment = (userId: number) => sql.fragment`(exists (
    select 1 from patron_memberships where user_id = ${userId} and started_at <= now() and expires_at > now()
  ) or exists (
    select 1 from form_designer_grants where user_id = ${userId} and (expires_at is null or expires_at > now())
  ))`;

/** Whether `userId` may use the form designer now (one query). */
export async function hasFormDesignerAccess(conn: CommonQueryMethods, userId: number): Promise<boolean> {
  return conn.oneFirst(sql.type(z.object({ ok: z.boolean() }))`select ${formDesignerAccessFragment(userId)} as ok`);
}

export const formDesignerLocked = () =>
  new AppError(402, "form_designer_locked", "The form designer needs patron membership, the one-time unlock or a trial (see GET /form-designer/access).");

/** @throws 402 `form_designer_locked` unless the user has access now */
export async function requireFormDesignerAccess(conn: CommonQueryMethods, userId: number): Promise<void> {
  if (!(await hasFormDesignerAccess(conn, userId))) throw formDesignerLocked();
}

/**
 * Starts the account's one trial. @throws 409 `trial_used` when it had one, 409
 * `already_unlocked` when it has access anyway, 422 when trials are off
 */
export async function startTrial(tx: CommonQueryMethods, userId: number, config: Config): Promise<void> {
  const days = config.formDesigner.trialDays;
  if (days <= 0) throw new AppError(409, "trial_unavailable", "The form designer has no trial.");
  await lockUser(tx, userId);
  if (await hasFormDesignerAccess(tx, userId)) throw new AppError(409, "already_unlocked", "You already have access to the form designer.");
  const inserted = await tx.maybeOne(sql.type(z.object({ id: z.number() }))`
    insert into form_designer_grants (user_id, access_type, expires_at)
    values (${userId}, 'trial', now() + make_interval(days => ${days}))
    on conflict (user_id, access_type) do nothing returning id`);
  if (!inserted) throw new AppError(409, "trial_used", "The form designer trial can be used once per account.");
}

/** Serialises grant changes of one user (two unlocks at once pay once). */
export async function lockUser(tx: CommonQueryMethods, userId: number): Promise<void> {
  await tx.query(sql.type(z.object({}))`select 1 from users where id = ${userId} for no key update`);
}

/**
 * Buys the one-time unlock: FORM_DESIGNER_UNLOCK_COST credits through the ledger, in the
 * caller's transaction, for access that does not expire (also while a trial or membership
 * runs, which end). @throws 402 `insufficient_credits` (nothing written), 409
 * `already_unlocked` when bought before
 */
export async function unlockWithCredits(tx: CommonQueryMethods, userId: number, config: Config): Promise<void> {
  await lockUser(tx, userId);
  const bought = await tx.exists(sql.type(z.object({}))`select 1 from form_designer_grants where user_id = ${userId} and access_type = 'credits'`);
  if (bought) throw new AppError(409, "already_unlocked", "You already unlocked the form designer.");
  const cost = config.formDesigner.unlockCost;
  const entry =
    cost > 0
      ? await spendCredits(tx, {
          userId,
          amount: cost,
          reason: "form_designer_unlock",
          referenceType: "form_designer_unlock",
          referenceId: String(userId),
          idempotencyKey: `form_designer_unlock:${userId}`,
        })
      : null;
  await tx.query(sql.type(z.object({}))`
    insert into form_designer_grants (user_id, access_type, credits_paid, ledger_entry_id)
    values (${userId}, 'credits', ${cost}, ${entry?.entryId ?? null})`);
}
