/**
 * POST /broadcasting/auth: signs a private channel subscription for a socket when the
 * caller may view the resource the channel carries (DESIGN §5). pusher-js posts
 * `socket_id` and `channel_name` form-encoded; JSON is accepted too. The answer carries the
 * grant as `channel_data` (signed with the channel), so the socket server can re-authorize
 * the subscription when the caller's access changes (api/realtime/grants.ts).
 */
import { z } from "zod";
import { AppError, forbidden } from "../../../shared/errors.ts";
import { currentUser } from "../../context.ts";
import { grantOf } from "../../realtime/grants.ts";
import { channelNamePattern, findChannelAuthorizer, signChannel, socketIdPattern } from "../../realtime/channelAuth.ts";
import { defineRoute } from "../route.ts";

const authBody = z.object({
  socket_id: z.string().regex(socketIdPattern, { error: "The socket id field format is invalid." }),
  channel_name: z.string().regex(channelNamePattern, { error: "The channel name field format is invalid." }),
});

const auth = defineRoute({
  method: "post",
  path: "/broadcasting/auth",
  summary: "Authorize a private realtime channel for a socket",
  description: "Channels: `private-job.{id}`, `private-deployment.{id}`, `private-kanban-board.{id}`. The caller must be allowed to view the resource.",
  tags: ["Realtime"],
  auth: "bearer",
  // Subscribing only reads what the channel carries.
  scope: "read",
  body: authBody,
  bodyKind: "json-or-form",
  responses: {
    200: {
      description: "Signature for pusher:subscribe; send `channel_data` with it (pusher-js does): the subscription ends when the caller's access to the channel ends",
      schema: z.object({ auth: z.string(), channel_data: z.string() }),
    },
    403: { description: "Not allowed on this channel" },
  },
  handler: async (ctx, { body }) => {
    if (!body.channel_name.startsWith("private-")) {
      throw new AppError(422, "validation_failed", "Only private channels need authorization.", {
        channel_name: ["Only private channels need authorization."],
      });
    }
    const found = findChannelAuthorizer(body.channel_name);
    if (!found || !(await found.authorizer(ctx.deps, currentUser(ctx), found.id))) {
      throw forbidden("You may not subscribe to this channel.");
    }
    const { key, secret } = ctx.deps.config.realtime;
    const channelData = JSON.stringify(grantOf(currentUser(ctx), ctx.state.auth!));
    ctx.body = { auth: signChannel(key, secret, body.socket_id, body.channel_name, channelData), channel_data: channelData };
  },
});

export const broadcastingRoutes = [auth];
