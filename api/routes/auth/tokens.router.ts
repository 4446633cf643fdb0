/**
 * Ending sessions and personal API tokens: POST /logout (this token, and the refresh
 * tokens of its grant), POST /logout-all-devices (every token of the user), and
 * /api-tokens (create, shown once; list; delete) for users with the developer role (an
 * account that loses the role loses its tokens: shared/admin/userAdministration.ts).
 */
import { z } from "zod";
import { createPersonalToken, mayHoldPersonalTokens, TOKEN_MAX_LIFETIME_DAYS } from "../../../shared/auth/personalTokens.ts";
import { EXPIRED_TOKEN_MEMORY_DAYS } from "../../../shared/auth/upkeep.ts";
import { scopesMissingToGrant } from "../../../shared/auth/scopes.ts";
import { revokeAccessToken, revokeOAuthGrant, revokeOAuthGrantsOfAccount } from "../../../shared/db/oauth.ts";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { revokeAllTokens } from "../../../shared/db/users.ts";
import { notFound } from "../../../shared/errors.ts";
import { currentUser } from "../../context.ts";
import { insufficientScope } from "../../middleware/authenticate.ts";
import { authorize } from "../../policies/authorize.ts";
import { defineRoute } from "../route.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { apiTokenBody, messageResponse } from "./auth.schema.ts";

const logout = defineRoute({
  method: "post",
  path: "/logout",
  summary: "End this session: the access token stops working now",
  description: "For an OAuth access token, its refresh tokens are revoked too; for a personal API token, the token is deleted.",
  tags: ["Authentication"],
  auth: "bearer",
  // Ending its own session is the one change every valid token may make, whatever its scopes.
  scope: "none",
  responses: { 200: { description: "Logged out", schema: messageResponse } },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    const auth = ctx.state.auth!;
    await ctx.deps.pool.transaction(async (tx) => {
      if (auth.kind === "jwt") {
        await revokeAccessToken(tx, auth.jti, user.id, auth.expiresAt);
        if (auth.grantId) await revokeOAuthGrant(tx, auth.grantId);
      }
      else await tx.query(sql.type(ignoredRow)`delete from personal_access_tokens where id = ${auth.tokenId}`);
    });
    ctx.body = { message: "Logged out." };
  },
});

const logoutAll = defineRoute({
  method: "post",
  path: "/logout-all-devices",
  summary: "Revoke every token of the caller (access, refresh and personal tokens)",
  tags: ["Authentication"],
  auth: "bearer",
  responses: { 200: { description: "All tokens revoked", schema: messageResponse } },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      await revokeAllTokens(tx, user.id);
      await revokeOAuthGrantsOfAccount(tx, user.id);
    });
    ctx.body = { message: "You have been logged out of all devices." };
  },
});

const tokenResource = z.object({
  id: z.number(),
  name: z.string(),
  abilities: z.array(z.string()),
  last_used_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  /** Past its expiry: it no longer authenticates, and the cleanup deletes it EXPIRED_TOKEN_MEMORY_DAYS after that. */
  is_expired: z.boolean(),
  created_at: z.string(),
});
const tokenRow = z.object({
  id: z.number(),
  name: z.string(),
  abilities: z.array(z.string()),
  last_used_at: z.date().nullable(),
  expires_at: z.date().nullable(),
  created_at: z.date(),
});
const presentToken = (row: z.infer<typeof tokenRow>) => ({
  id: row.id,
  name: row.name,
  abilities: row.abilities,
  last_used_at: row.last_used_at?.toISOString() ?? null,
  expires_at: row.expires_at?.toISOString() ?? null,
  is_expired: row.expires_at !== null && row.expires_at.getTime() <= Date.now(),
  created_at: row.created_at.toISOString(),
});
const DEVELOPER_ONLY = "Personal API tokens require the developer role.";

const createToken = defineRoute({
  method: "post",
  path: "/api-tokens",
  summary: "Create a personal API token (the plain text is shown only once)",
  description: `\`abilities\` are the token's scopes: \`read\`, \`write\`, \`admin\`, or \`*\` (default) for every scope the user's roles allow when the token is used. They may not exceed the scopes of the token making the request. \`expires_at\` (optional, in the future and at most ${TOKEN_MAX_LIFETIME_DAYS} days ahead) ends the token; without it the token works until it is revoked.`,
  tags: ["Authentication"],
  auth: "bearer",
  body: apiTokenBody,
  responses: {
    201: { description: "Created", schema: z.object({ message: z.string(), plainTextToken: z.string(), token: tokenResource }) },
    403: { description: "The caller lacks the developer role, or asks for abilities beyond its own token's scopes" },
  },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    authorize(mayHoldPersonalTokens(user.roles), DEVELOPER_ONLY);
    const auth = ctx.state.auth!;
    const abilities = body.abilities ?? ["*"];
    const missing = scopesMissingToGrant(abilities, auth.scopes, [...user.roles, ...auth.withheldRoles]);
    if (missing.length) {
      throw insufficientScope(missing[0]!, `This token lacks the ${missing.join(" and ")} scope${missing.length > 1 ? "s" : ""}; a token it creates cannot have more scopes than it has.`);
    }
    const { token, plainText } = await createPersonalToken(ctx.deps.pool, user.id, body.name, {
      abilities,
      expiresAt: body.expires_at ? new Date(body.expires_at) : null,
    });
    ctx.status = 201;
    ctx.body = { message: "Token created. Copy it now: it will not be shown again.", plainTextToken: plainText, token: presentToken(token) };
  },
});

const listTokens = defineRoute({
  method: "get",
  path: "/api-tokens",
  summary: "The caller's personal API tokens (never their secrets)",
  description: `Expired tokens stay listed, with \`is_expired\` true, until the cleanup deletes them ${EXPIRED_TOKEN_MEMORY_DAYS} days after their expiry.`,
  tags: ["Authentication"],
  auth: "bearer",
  responses: { 200: { description: "Tokens", schema: z.object({ data: z.array(tokenResource) }) } },
  handler: async (ctx) => {
    const rows = await ctx.deps.pool.any(sql.type(tokenRow)`
      select id, name, abilities, last_used_at, expires_at, created_at from personal_access_tokens
      where user_id = ${currentUser(ctx).id} order by id desc`);
    ctx.body = { data: rows.map(presentToken) };
  },
});

const deleteToken = defineRoute({
  method: "delete",
  path: "/api-tokens/{id}",
  summary: "Revoke a personal API token",
  tags: ["Authentication"],
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Revoked", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const gone = await ctx.deps.pool.maybeOne(sql.type(z.object({ id: z.number() }))`
      delete from personal_access_tokens where id = ${params.id} and user_id = ${currentUser(ctx).id} returning id`);
    if (!gone) throw notFound("Token");
    ctx.body = { message: "Token revoked." };
  },
});

export const tokenRoutes = [logout, logoutAll, createToken, listTokens, deleteToken];
