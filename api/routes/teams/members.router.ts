/**
 * Team members: list; add by e-mail (always an invitation the invitee accepts: in the app
 * for an existing account, by registering with the e-mailed link otherwise, and the same
 * answer either way, so the route tells nobody which addresses have accounts); change a
 * role; remove (or leave). The owner's membership cannot be
 * changed or removed, and only the owner appoints or removes admins.
 */
import { z } from "zod";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { findMember, listMembers, teamRoleNames, TEAM_ROLE } from "../../../shared/db/teams.ts";
import { AppError, conflict, forbidden, invalid, notFound } from "../../../shared/errors.ts";
import { enqueueMail } from "../../../shared/mail/enqueueMail.ts";
import { createInvitation } from "../../../shared/teams/invitations.ts";
import { currentUser } from "../../context.ts";
import { canAssignTeamRole, canManageTeam } from "../../policies/team.ts";
import { memberResource, presentMember } from "../../presenters/team.ts";
import { defineRoute } from "../route.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { teamParams, visibleTeam } from "./teams.router.ts";

const memberParams = teamParams.extend({ userId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) });
const roleId = z.number().int().min(1).max(4);
const roleName = (id: number) => teamRoleNames[id - 1]!;
const ownerRoleRefused = () => invalid({ role_id: ["The owner role cannot be given; a team has one owner."] });

const list = defineRoute({
  method: "get",
  path: "/teams/{teamId}/members",
  summary: "The members of a team",
  tags: ["Teams"],
  auth: "bearer",
  params: teamParams,
  responses: { 200: { description: "Members", schema: z.object({ data: z.array(memberResource) }) } },
  handler: async (ctx, { params }) => {
    const team = await visibleTeam(ctx, ctx.deps.pool, params.teamId);
    ctx.body = { data: (await listMembers(ctx.deps.pool, team.id)).map(presentMember) };
  },
});

const invitationResource = z.object({ email: z.string(), role: z.string(), expires_at: z.string() });

const add = defineRoute({
  method: "post",
  path: "/teams/{teamId}/members",
  summary: "Invite someone to the team by e-mail (they join when they accept)",
  description:
    "Every add is an invitation: an existing account accepts it in the app (`GET /team-invitations`, `POST /team-invitations/{id}/accept`), anyone else by registering with the e-mailed link. The answer is the same whether or not the address has an account.",
  tags: ["Teams"],
  auth: "bearer",
  params: teamParams,
  body: z.object({ email: z.email().trim().max(254), role_id: roleId }),
  responses: {
    201: {
      description: "Invited",
      schema: z.object({
        message: z.string(),
        /** Kept from the spec's answer shape; members join on acceptance, so it is never set here. */
        member: memberResource.optional(),
        invitation: invitationResource,
      }),
    },
    409: { description: "Already a member" },
  },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    const invitation = await pool.transaction(async (tx) => {
      const team = await visibleTeam(ctx, tx, params.teamId, true);
      if (!canManageTeam(user, team)) throw forbidden("Only the team's owner and admins may add members.");
      if (body.role_id === TEAM_ROLE.owner) throw ownerRoleRefused();
      if (!canAssignTeamRole(user, team, roleName(body.role_id))) throw forbidden("Only the team's owner may appoint admins.");
      const existing = await tx.maybeOne(sql.type(z.object({ id: z.number(), language: z.string() }))`
        select id, language from users where lower(email) = lower(${body.email})`);
      if (existing && (await findMember(tx, team.id, existing.id))) throw conflict("This user is already a member of the team.", "already_member");
      const created = await createInvitation(tx, { teamId: team.id, email: body.email, roleId: body.role_id, invitedBy: user.id });
      const mailParams = { inviter: user.name, team: team.name };
      if (existing) {
        const link = `${config.frontendUrl}/team-invitations`;
        await enqueueMail(tx, { to: body.email, kind: "team_invitation_existing", locale: existing.language, params: mailParams, link, userId: user.id });
      } else {
        const link = `${config.frontendUrl}/register?invitation_token=${encodeURIComponent(created.token)}&email=${encodeURIComponent(body.email)}`;
        await enqueueMail(tx, { to: body.email, kind: "team_invitation", locale: user.language, params: mailParams, link, userId: user.id });
      }
      return { email: body.email, role: roleName(body.role_id), expires_at: created.expiresAt.toISOString() };
    });
    ctx.status = 201;
    ctx.body = { message: "Invitation sent.", invitation };
  },
});

const changeRole = defineRoute({
  method: "put",
  path: "/teams/{teamId}/members/{userId}",
  summary: "Change a member's role",
  tags: ["Teams"],
  auth: "bearer",
  params: memberParams,
  body: z.object({ role_id: roleId }),
  responses: { 200: { description: "Changed", schema: z.object({ message: z.string(), member: memberResource }) } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const member = await ctx.deps.pool.transaction(async (tx) => {
      const team = await visibleTeam(ctx, tx, params.teamId, true);
      if (!canManageTeam(user, team)) throw forbidden("Only the team's owner and admins may change roles.");
      const target = await findMember(tx, team.id, params.userId);
      if (!target) throw notFound("Member");
      if (target.role_name === "owner") throw new AppError(422, "validation_failed", "The owner's role cannot be changed.", { role_id: ["The owner's role cannot be changed."] });
      if (body.role_id === TEAM_ROLE.owner) throw ownerRoleRefused();
      if (!canAssignTeamRole(user, team, target.role_name) || !canAssignTeamRole(user, team, roleName(body.role_id))) {
        throw forbidden("Only the team's owner may appoint or demote admins.");
      }
      await tx.query(sql.type(ignoredRow)`update team_members set role_id = ${body.role_id} where id = ${target.id}`);
      return (await findMember(tx, team.id, params.userId))!;
    });
    ctx.body = { message: "Role updated.", member: presentMember(member) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/teams/{teamId}/members/{userId}",
  summary: "Remove a member (or leave the team yourself)",
  tags: ["Teams"],
  auth: "bearer",
  params: memberParams,
  responses: { 200: { description: "Removed", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const team = await visibleTeam(ctx, tx, params.teamId, true);
      const target = await findMember(tx, team.id, params.userId);
      if (!target) throw notFound("Member");
      if (target.role_name === "owner") throw forbidden("The team's owner cannot be removed; delete the team instead.");
      const leaving = target.user_id === user.id;
      if (!leaving && (!canManageTeam(user, team) || !canAssignTeamRole(user, team, target.role_name))) {
        throw forbidden("You may not remove this member.");
      }
      await tx.query(sql.type(ignoredRow)`delete from team_members where id = ${target.id}`);
    });
    ctx.body = { message: "Member removed." };
  },
});

export const memberRoutes = [list, add, changeRole, remove];
