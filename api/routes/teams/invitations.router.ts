/**
 * The caller's team invitations: GET /team-invitations (open ones addressed to the
 * account's e-mail), POST /team-invitations/{id}/accept (join with the invited role) and
 * POST /team-invitations/{id}/decline. Accepting needs a verified address: an invitation
 * is addressed to a mailbox, and an unverified account has not shown it holds that mailbox;
 * until it has, it neither sees nor declines any invitation but the one it registered with.
 */
import { z } from "zod";
import { teamRoleNames } from "../../../shared/db/teams.ts";
import { AppError, notFound } from "../../../shared/errors.ts";
import { acceptInvitation, declineInvitation, listOpenInvitations, type OpenInvitation } from "../../../shared/teams/invitations.ts";
import { currentUser } from "../../context.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";

const invitationResource = z.object({
  id: z.number(),
  team: z.object({ id: z.number(), name: z.string() }),
  role: z.object({ id: z.number(), name: z.string() }),
  invited_by: z.string().nullable(),
  expires_at: z.string(),
  created_at: z.string(),
});

const presentInvitation = (row: OpenInvitation) => ({
  id: row.id,
  team: { id: row.team_id, name: row.team_name },
  role: { id: row.role_id, name: teamRoleNames[row.role_id - 1]! },
  invited_by: row.invited_by_name,
  expires_at: row.expires_at.toISOString(),
  created_at: row.created_at.toISOString(),
});

const tags = ["Teams"];
const gone = () => notFound("Invitation");

const list = defineRoute({
  method: "get",
  path: "/team-invitations",
  summary: "Open team invitations addressed to the caller",
  tags,
  auth: "bearer",
  responses: { 200: { description: "Invitations", schema: z.object({ data: z.array(invitationResource) }) } },
  handler: async (ctx) => {
    ctx.body = { data: (await listOpenInvitations(ctx.deps.pool, currentUser(ctx))).map(presentInvitation) };
  },
});

const accept = defineRoute({
  method: "post",
  path: "/team-invitations/{id}/accept",
  summary: "Accept a team invitation: join the team with the invited role",
  tags,
  auth: "bearer",
  params: idParams,
  responses: {
    200: { description: "Joined", schema: messageResponse },
    403: { description: "The caller's e-mail address is not verified (`email_unverified`)" },
    404: { description: "No open invitation with this id is addressed to the caller" },
  },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    if (!user.email_verified_at) throw new AppError(403, "email_unverified", "Verify your e-mail address before accepting invitations.");
    const joined = await ctx.deps.pool.transaction((tx) => acceptInvitation(tx, params.id, user));
    if (!joined) throw gone();
    ctx.body = { message: "You joined the team." };
  },
});

const decline = defineRoute({
  method: "post",
  path: "/team-invitations/{id}/decline",
  summary: "Decline a team invitation",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Declined", schema: messageResponse }, 404: { description: "No open invitation with this id is addressed to the caller" } },
  handler: async (ctx, { params }) => {
    if (!(await declineInvitation(ctx.deps.pool, params.id, currentUser(ctx)))) throw gone();
    ctx.body = { message: "Invitation declined." };
  },
});

export const invitationRoutes = [list, accept, decline];
