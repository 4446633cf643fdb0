/**
 * Mounts oidc-provider at /api/oauth (token, revocation, JWKS, discovery). The spec sends
 * token requests as JSON, which oidc-provider does not read, so a JSON body is turned into
 * the form encoding it expects before the request is handed over. The revocation of an
 * access token (a JWT, which oidc-provider does not revoke) is answered here
 * (accessTokenRevocation.ts). The client's `scope=*`
 * is dropped (no scope means every scope the user may hold; on refresh, the token's own). A
 * parameter with a NUL character is a 400 `invalid_request` (PostgreSQL's text cannot hold
 * one). Requests count against the caller's IP budget like every public route.
 */
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import getRawBody from "raw-body";
import type { Next } from "koa";
import type Provider from "oidc-provider";
import type { AppContext } from "../context.ts";
import { chargeIp } from "../middleware/rateLimit.ts";
import { REVOCATION_PATH, revokeStructuredAccessToken } from "./accessTokenRevocation.ts";

const PREFIX = "/api/oauth";
const callbacks = new WeakMap<object, ReturnType<Provider["callback"]>>();
const MAX_BODY = 64 * 1024;

/** The body, refused with a 413 beyond MAX_BODY (before reading it when its declared length says so). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return getRawBody(req, { limit: MAX_BODY, length: req.headers["content-length"] });
}

function flatten(body: unknown): URLSearchParams {
  const params = new URLSearchParams();
  if (body && typeof body === "object" && !Array.isArray(body)) {
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") params.set(key, String(value));
    }
  }
  return params;
}

/** A stand-in request carrying `form` as its body, otherwise identical to `req`. */
function withFormBody(req: IncomingMessage, form: URLSearchParams, url: string): IncomingMessage {
  const body = Buffer.from(form.toString());
  return Object.assign(Readable.from([body]), {
    headers: { ...req.headers, "content-type": "application/x-www-form-urlencoded", "content-length": String(body.length) },
    rawHeaders: [],
    method: req.method,
    url,
    originalUrl: req.url, // oidc-provider derives its mount path from the difference
    socket: req.socket,
    connection: req.socket,
    httpVersion: req.httpVersion,
    httpVersionMajor: req.httpVersionMajor,
    httpVersionMinor: req.httpVersionMinor,
    complete: true,
    aborted: false,
  }) as unknown as IncomingMessage;
}

/**
 * Koa middleware serving everything under /api/oauth through oidc-provider. Not an async
 * function itself, so every other request passes it without a promise and a turn of its own.
 */
export function oauthMount(ctx: AppContext, next: Next): Promise<void> {
  const path = ctx.path;
  if (path !== PREFIX && !path.startsWith(`${PREFIX}/`)) return next();
  return serveOAuth(ctx);
}

async function serveOAuth(ctx: AppContext): Promise<void> {
  await chargeIp(ctx);
  const provider = ctx.deps.identity.provider;
  let handle = callbacks.get(provider);
  if (!handle) {
    handle = provider.callback();
    callbacks.set(provider, handle);
  }
  const innerUrl = ctx.req.url!.slice(PREFIX.length) || "/";
  let req = ctx.req;
  if (ctx.method === "POST") {
    const type = ctx.get("content-type").toLowerCase();
    const raw = await readBody(ctx.req);
    let form: URLSearchParams;
    if (type.includes("json")) {
      try {
        form = flatten(JSON.parse(raw.toString("utf8") || "{}"));
      } catch {
        ctx.status = 400;
        ctx.body = { error: "invalid_request", error_description: "the request body is not valid JSON" };
        return;
      }
    } else {
      form = new URLSearchParams(raw.toString("utf8"));
    }
    // PostgreSQL's text holds no NUL, and the provider and the password grant look parameters up
    // in it (a client, a refresh token, a login's attempt counter): refused here as malformed.
    // It also keeps a client secret followed by NULs from passing: the provider's constant-time
    // comparison pads both strings with zero bytes to the longer one's length.
    const nul = [...form].find(([key, value]) => key.includes("\u0000") || value.includes("\u0000"));
    if (nul) {
      ctx.status = 400;
      ctx.body = { error: "invalid_request", error_description: `parameter ${JSON.stringify(nul[0].replaceAll("\u0000", "\\0"))} contains a NUL character` };
      return;
    }
    if (form.get("scope")?.trim() === "*") form.delete("scope"); // "everything allowed" is the default
    // oidc-provider revokes only the tokens it stores: an access token (a JWT) is revoked here.
    if (innerUrl.split("?")[0] === REVOCATION_PATH && (await revokeStructuredAccessToken(ctx, form))) return;
    req = withFormBody(ctx.req, form, innerUrl);
  } else {
    (ctx.req as IncomingMessage & { originalUrl?: string }).originalUrl = ctx.req.url;
    ctx.req.url = innerUrl;
  }
  ctx.respond = false;
  ctx.status = 200; // keeps our 404 fallback out of the way; the provider writes the response
  await handle(req, ctx.res);
}
