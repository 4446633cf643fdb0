/**
 * Channel authorization (Pusher protocol): a client subscribing to `private-…` presents
 * `<key>:<hex HMAC-SHA256(secret, "<socket_id>:<channel>")>`, obtained from
 * POST /api/broadcasting/auth, which signs only when the caller may view the resource the
 * channel carries. Each area registers the authorizer for its channel prefix here.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { UserRow } from "../../shared/db/users.ts";
import type { AppDeps } from "../context.ts";

/** Decides whether `user` may subscribe to the channel whose id part is `id`. */
export type ChannelAuthorizer = (deps: AppDeps, user: UserRow, id: string) => Promise<boolean>;

const authorizers = new Map<string, ChannelAuthorizer>();

/** Registers the authorizer of channels named `<prefix><id>`, e.g. `private-job.`. */
export function registerChannelAuthorizer(prefix: string, authorizer: ChannelAuthorizer): void {
  if (!/^private-[a-z-]+\.$/.test(prefix)) throw new Error(`Channel prefix ${prefix} must look like private-area.`);
  authorizers.set(prefix, authorizer);
}

/** Finds the authorizer for a channel name and the id part of the name. */
export function findChannelAuthorizer(channel: string): { authorizer: ChannelAuthorizer; id: string } | undefined {
  const dot = channel.indexOf(".");
  if (dot < 0) return undefined;
  const authorizer = authorizers.get(channel.slice(0, dot + 1));
  return authorizer ? { authorizer, id: channel.slice(dot + 1) } : undefined;
}

export const channelNamePattern = /^[A-Za-z0-9_\-=@,.;]{1,164}$/;
export const socketIdPattern = /^\d{1,20}\.\d{1,20}$/;

/**
 * The `auth` string for a socket and channel: HMAC over `socket_id:channel`, or over
 * `socket_id:channel:channel_data` when the authorization carries channel data (the grant,
 * grants.ts), as Pusher signs presence channels.
 */
export function signChannel(key: string, secret: string, socketId: string, channel: string, channelData?: string): string {
  const signed = channelData === undefined ? `${socketId}:${channel}` : `${socketId}:${channel}:${channelData}`;
  const signature = createHmac("sha256", secret).update(signed).digest("hex");
  return `${key}:${signature}`;
}

/** Whether `auth` is the valid signature for this socket, channel and channel data. */
export function verifyChannelSignature(key: string, secret: string, socketId: string, channel: string, auth: unknown, channelData?: string): boolean {
  if (typeof auth !== "string") return false;
  const expected = Buffer.from(signChannel(key, secret, socketId, channel, channelData));
  const given = Buffer.from(auth);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
