/**
 * Git provider sign-in (DESIGN §11): `GET /git/{provider}/authorize` answers the provider's
 * authorization URL, with a `state` bound to the caller (single use, 10 minutes) and a PKCE
 * challenge where the provider supports it; the provider sends the browser back to the web
 * client's redirect URI, which calls `GET /git/{provider}/callback` with `code` and `state`
 * and its own bearer token, so a sign-in finishes only for the user who started it. The
 * tokens are sealed and never answered. `GET /git/connections`, `DELETE /git/connections/{id}`.
 */
import { z } from "zod";
import { notFound } from "../../../shared/errors.ts";
import { gitProviders, providerNames } from "../../../shared/git/providers.ts";
import { finishSignIn, startSignIn } from "../../../shared/git/signIn.ts";
import { deleteConnection, listConnections } from "../../../shared/git/store.ts";
import { currentUser } from "../../context.ts";
import { gitConnectionResource, presentGitConnection } from "../../presenters/gitConnection.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";

const tags = ["Git"];
const providerParams = z.object({ provider: z.enum(gitProviders, { error: `The provider must be one of ${gitProviders.join(", ")}.` }) });
const callbackText = z.string().min(1).max(2048);

const authorize = defineRoute({
  method: "get",
  path: "/git/{provider}/authorize",
  summary: "Start connecting a GitHub, GitLab or Bitbucket account: the provider's authorization URL",
  description:
    "Send the user to `authorization_url`. The provider redirects the browser to the web client's `redirect_uri` with `code` and `state`; the client then calls `GET /git/{provider}/callback` with both and its bearer token. The state is the caller's, works once and expires at `expires_at`. 404 `git_provider_disabled` when this server has no OAuth app at the provider.",
  tags,
  auth: "bearer",
  // It starts a change of the account (a connection); a read-only token may not.
  scope: "write",
  params: providerParams,
  responses: {
    200: {
      description: "Where to send the user",
      schema: z.object({ authorization_url: z.string(), state: z.string(), expires_at: z.string(), redirect_uri: z.string(), pkce: z.boolean() }),
    },
    422: { description: "The provider's configured address is not one this server may reach (a private or reserved network target)" },
  },
  handler: async (ctx, { params }) => {
    const started = await startSignIn(ctx.deps.pool, ctx.deps.config, currentUser(ctx).id, params.provider);
    ctx.set("Cache-Control", "no-store");
    ctx.body = { authorization_url: started.authorizationUrl, state: started.state, expires_at: started.expiresAt.toISOString(), redirect_uri: started.redirectUri, pkce: started.pkce };
  },
});

const callback = defineRoute({
  method: "get",
  path: "/git/{provider}/callback",
  summary: "Finish connecting an account: exchange the code the provider sent back",
  description:
    "Query `code` and `state` as the provider sent them (or `error` when the user declined). 422 `oauth_state_invalid` for a state that is not the caller's, unknown, expired or used; 422 `oauth_code_rejected` when the provider refuses the code (a reused one, for instance); 502 when it cannot be reached. Signing in to the same account again replaces its tokens.",
  tags,
  auth: "bearer",
  scope: "write",
  params: providerParams,
  query: z.object({ code: callbackText.optional(), state: callbackText.optional(), error: z.string().max(255).optional(), error_description: z.string().max(2048).optional() }),
  responses: { 201: { description: "Connected", schema: z.object({ message: z.string(), connection: gitConnectionResource }) } },
  handler: async (ctx, { params, query }) => {
    const row = await finishSignIn(ctx.deps.pool, ctx.deps.config, currentUser(ctx).id, params.provider, query);
    ctx.set("Cache-Control", "no-store");
    ctx.status = 201;
    ctx.body = { message: `${providerNames[params.provider]} account ${row.account_login} connected.`, connection: presentGitConnection(row, ctx.deps.config) };
  },
});

const list = defineRoute({
  method: "get",
  path: "/git/connections",
  summary: "The caller's connected git accounts",
  tags,
  auth: "bearer",
  responses: { 200: { description: "Connections", schema: z.object({ data: z.array(gitConnectionResource) }) } },
  handler: async (ctx) => {
    ctx.body = { data: (await listConnections(ctx.deps.pool, currentUser(ctx).id)).map((row) => presentGitConnection(row, ctx.deps.config)) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/git/connections/{id}",
  summary: "Disconnect a git account (its tokens are deleted)",
  description: "Only its owner; anyone else gets 404. Environments using it stop deploying until given another connection or token.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    if (!(await deleteConnection(ctx.deps.pool, params.id, currentUser(ctx).id))) throw notFound("Git connection");
    ctx.body = { message: "Git connection deleted." };
  },
});

export const gitConnectionRoutes = [authorize, callback, list, remove];
