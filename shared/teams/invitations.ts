/**
 * Team invitations: every member add is one (nobody joins a team without saying so). A
 * random token (stored hashed, valid 7 days) is e-mailed to the address. Someone without an
 * account registers with the token (and the same address), which ties the invitation to the
 * new account; verifying the address then accepts that invitation (no other). An existing account sees its open
 * invitations in the app and accepts or declines each (once its address is verified).
 */
import { z } from "zod";
import { randomToken, sha256 } from "../crypto.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

export const INVITATION_TTL_DAYS = 7;

/**
 * An invitation speaks for whoever sent it: it holds while they may still give its role in
 * the team (its owner; an admin for member and viewer; a super admin), and lapses when they
 * were demoted, removed or deleted. Over invitations aliased `i`.
 */
const inviterStillMay = sql.fragment`(
  exists (select 1 from teams it where it.id = i.team_id and it.owner_id = i.invited_by)
  or exists (select 1 from team_members im where im.team_id = i.team_id and im.user_id = i.invited_by and (im.role_id = 1 or (im.role_id = 2 and i.role_id > 2)))
  or exists (select 1 from user_roles ir where ir.user_id = i.invited_by and ir.role = 'super_admin'))`;

/** Creates (or renews) the invitation of `email` to a team; returns the plain token. */
export async function createInvitation(
  tx: CommonQueryMethods,
  input: { teamId: number; email: string; roleId: number; invitedBy: number },
): Promise<{ token: string; expiresAt: Date }> {
  await tx.query(sql.type(ignoredRow)`
    delete from team_invitations where team_id = ${input.teamId} and lower(email) = lower(${input.email}) and accepted_at is null`);
  const token = randomToken(32);
  const expiresAt = await tx.oneFirst(sql.type(z.object({ expires_at: z.date() }))`
    insert into team_invitations (team_id, email, role_id, token_hash, invited_by, expires_at)
    values (${input.teamId}, ${input.email}, ${input.roleId}, ${sql.binary(sha256(token))}, ${input.invitedBy},
      now() + make_interval(days => ${INVITATION_TTL_DAYS}))
    returning expires_at`);
  return { token, expiresAt };
}

/** The account an invitation is looked up for: its address, and whether it proved it holds it. */
export interface InvitationHolder {
  id: number;
  email: string;
  email_verified_at: Date | null;
}

/**
 * Invitations (`i`) addressed to `user`. Anyone may register an unverified account with any
 * address, so until the address is verified the account has only the invitations it
 * registered with (it held their link); the others stay hidden (team, inviter, role) and
 * unanswerable (a decline would throw away the real addressee's invitation).
 */
const addressedTo = (user: InvitationHolder) =>
  user.email_verified_at === null
    ? sql.fragment`lower(i.email) = lower(${user.email}) and i.registered_user_id = ${user.id}`
    : sql.fragment`lower(i.email) = lower(${user.email})`;

/** Whether `user` has an invitation waiting. */
export async function hasPendingInvitation(conn: CommonQueryMethods, user: InvitationHolder): Promise<boolean> {
  return conn.exists(sql.type(z.object({}))`
    select 1 from team_invitations i where ${addressedTo(user)} and i.accepted_at is null and i.expires_at > now() and ${inviterStillMay}`);
}

/** Ties an invitation token to a registration; false when the token is unknown, used, expired or for another address. */
export async function claimInvitation(tx: CommonQueryMethods, token: string, email: string, userId: number): Promise<boolean> {
  const row = await tx.maybeOne(sql.type(z.object({ id: z.number() }))`
    update team_invitations i set registered_user_id = ${userId}
    where i.token_hash = ${sql.binary(sha256(token))} and i.accepted_at is null and i.expires_at > now() and lower(i.email) = lower(${email}) and ${inviterStillMay}
    returning i.id`);
  return row !== null;
}

/** Checks an invitation token before registration (same conditions as `claimInvitation`). */
export async function invitationValid(conn: CommonQueryMethods, token: string, email: string): Promise<boolean> {
  return conn.exists(sql.type(z.object({}))`
    select 1 from team_invitations i
    where i.token_hash = ${sql.binary(sha256(token))} and i.accepted_at is null and i.expires_at > now() and lower(i.email) = lower(${email}) and ${inviterStillMay}`);
}

/**
 * Accepts the invitations of a user whose address was just verified: those claimed at
 * registration (the account said yes by registering with their link) and only those. Any
 * other invitation of the address, sent before or after the registration, waits for the
 * account to accept or decline it (GET /team-invitations). Returns whether any was accepted
 * and the name of a project the first team shares (for the welcome message).
 */
export async function acceptInvitations(tx: CommonQueryMethods, user: { id: number; email: string }): Promise<{ accepted: boolean; projectName: string | null }> {
  const invitations = await tx.any(sql.type(z.object({ id: z.number(), team_id: z.number(), role_id: z.number() }))`
    select i.id, i.team_id, i.role_id from team_invitations i
    where i.accepted_at is null and i.expires_at > now() and i.registered_user_id = ${user.id} and lower(i.email) = lower(${user.email}) and ${inviterStillMay}
    order by i.created_at for update of i`);
  for (const invitation of invitations) {
    await tx.query(sql.type(ignoredRow)`
      insert into team_members (team_id, user_id, role_id) values (${invitation.team_id}, ${user.id}, ${invitation.role_id})
      on conflict (team_id, user_id) do nothing`);
    await tx.query(sql.type(ignoredRow)`update team_invitations set accepted_at = now(), registered_user_id = ${user.id} where id = ${invitation.id}`);
  }
  if (invitations.length === 0) return { accepted: false, projectName: null };
  const projectName = await tx.maybeOneFirst(sql.type(z.object({ name: z.string() }))`
    select p.name from team_projects tp join projects p on p.id = tp.project_id
    where tp.team_id = ${invitations[0]!.team_id} and p.deleted_at is null order by tp.attached_at, p.id limit 1`);
  return { accepted: true, projectName };
}

const openInvitationRow = z.object({
  id: z.number(),
  team_id: z.number(),
  team_name: z.string(),
  role_id: z.number(),
  invited_by_name: z.string().nullable(),
  expires_at: z.date(),
  created_at: z.date(),
});
export type OpenInvitation = z.infer<typeof openInvitationRow>;

/** Open invitations (`i`) of `user` that may still be accepted. */
const openFor = (user: InvitationHolder) =>
  sql.fragment`${addressedTo(user)} and i.accepted_at is null and i.expires_at > now() and ${inviterStillMay}`;

/** The open invitations addressed to `user`, newest first. */
export async function listOpenInvitations(conn: CommonQueryMethods, user: InvitationHolder): Promise<readonly OpenInvitation[]> {
  return conn.any(sql.type(openInvitationRow)`
    select i.id, i.team_id, t.name as team_name, i.role_id, u.name as invited_by_name, i.expires_at, i.created_at
    from team_invitations i join teams t on t.id = i.team_id left join users u on u.id = i.invited_by
    where ${openFor(user)} order by i.created_at desc, i.id desc`);
}

/** Accepts the open invitation `id` addressed to `user`: they join with the invited role. False when there is none. */
export async function acceptInvitation(tx: CommonQueryMethods, id: number, user: InvitationHolder): Promise<boolean> {
  const invitation = await tx.maybeOne(sql.type(z.object({ team_id: z.number(), role_id: z.number() }))`
    select i.team_id, i.role_id from team_invitations i where i.id = ${id} and ${openFor(user)} for update`);
  if (!invitation) return false;
  await tx.query(sql.type(ignoredRow)`
    insert into team_members (team_id, user_id, role_id) values (${invitation.team_id}, ${user.id}, ${invitation.role_id})
    on conflict (team_id, user_id) do nothing`);
  await tx.query(sql.type(ignoredRow)`update team_invitations set accepted_at = now(), registered_user_id = ${user.id} where id = ${id}`);
  return true;
}

/** Declines (deletes) the open invitation `id` addressed to `user`. False when there is none. */
export async function declineInvitation(conn: CommonQueryMethods, id: number, user: InvitationHolder): Promise<boolean> {
  const row = await conn.maybeOne(sql.type(z.object({ id: z.number() }))`
    delete from team_invitations i where i.id = ${id} and ${openFor(user)} returning i.id`);
  return row !== null;
}
