/**
 * Rate limits (DESIGN §7, spec "Limits"): 1000 requests an hour per user on bearer routes,
 * 100 an hour per IP on public routes, with `X-RateLimit-Limit`, `X-RateLimit-Remaining`
 * and `X-RateLimit-Reset` (Unix time) on every response and 429 + `Retry-After` beyond.
 *
 * Which budget a response counts against: bearer routes the user's (a failed
 * authentication the IP's); public routes, /api/oauth and requests under /api that no
 * route takes (404, 405) the IP's, so probing for routes is not free. Deliberately
 * unlimited, and so without these headers: /api/health, /metrics and the API reference
 * (/api/docs, /api/openapi.json), which load balancers, scrapers and browsers poll; they
 * do no work a caller could abuse.
 */
import { createHmac } from "node:crypto";
import type { Next } from "koa";
import { AppError } from "../../shared/errors.ts";
import type { LimitState } from "../../shared/rateLimit.ts";
import type { AppContext } from "../context.ts";

// Set on the node response directly: Koa's `ctx.set` builds arrays per call (3 headers:
// ~0.8 µs against ~0.5 µs, on every limited request). Like `ctx.set`, nothing is set once
// the headers are out (the limit is charged before any handler, so they never should be).
function applyHeaders(ctx: AppContext, state: LimitState): void {
  const res = ctx.res;
  if (res.headersSent) return;
  res.setHeader("X-RateLimit-Limit", String(state.limit));
  res.setHeader("X-RateLimit-Remaining", String(state.remaining));
  res.setHeader("X-RateLimit-Reset", String(Math.floor(state.resetAt.getTime() / 1000)));
}

function tooMany(state: LimitState): AppError {
  return new AppError(429, "rate_limited", `Too many requests; try again in ${state.retryAfterS} seconds.`, undefined, {
    "Retry-After": String(state.retryAfterS),
  });
}

/**
 * Counter keys of recent addresses, per APP_KEY. An HMAC per request was a tenth of a
 * simple route's CPU; a client sends many requests from one address, so the key is computed
 * once and remembered (bounded: the oldest quarter is dropped when full).
 */
const ipKeys = new WeakMap<Buffer, Map<string, string>>();
const IP_KEYS_MAX = 10_000;

/** The counter key of the caller's address: keyed by APP_KEY, so no address is written to the database. */
function ipKey(ctx: AppContext): string {
  const appKey = ctx.deps.config.appKey;
  let keys = ipKeys.get(appKey);
  if (!keys) ipKeys.set(appKey, (keys = new Map()));
  const ip = ctx.ip;
  let key = keys.get(ip);
  if (key === undefined) {
    key = `ip:${createHmac("sha256", appKey).update(`rate-limit:${ip}`).digest("base64url").slice(0, 22)}`;
    if (keys.size >= IP_KEYS_MAX) {
      let drop = IP_KEYS_MAX / 4;
      for (const old of keys.keys()) {
        keys.delete(old);
        if (--drop <= 0) break;
      }
    }
    keys.set(ip, key);
  }
  return key;
}

/**
 * Spends one unit of `key`'s budget and sets the headers; throws 429 past it. Returns a
 * promise only when the process must lease budget first: most requests spend a unit leased
 * before, and then need no await.
 */
function charge(ctx: AppContext, key: string, limit: number): Promise<void> | undefined {
  const limiter = ctx.deps.identity.limiter;
  const state = limiter.tryHit(key, limit);
  if (state) {
    settle(ctx, state);
    return undefined;
  }
  return limiter.hit(key, limit).then((leased) => settle(ctx, leased));
}

function settle(ctx: AppContext, state: LimitState): void {
  applyHeaders(ctx, state);
  if (!state.allowed) throw tooMany(state);
}

/** Spends one unit of the caller's IP budget; rejects with 429 past it. */
export async function chargeIp(ctx: AppContext): Promise<void> {
  await charge(ctx, ipKey(ctx), ctx.deps.config.rateLimit.publicPerHour);
}

/** Public routes: limited per IP. */
export function limitByIp(ctx: AppContext, next: Next): Promise<void> {
  const charged = charge(ctx, ipKey(ctx), ctx.deps.config.rateLimit.publicPerHour);
  return charged ? charged.then(() => next()) : next();
}

/** Bearer routes (after authenticate): limited per user. */
export function limitByUser(ctx: AppContext, next: Next): Promise<void> {
  const user = ctx.state.user;
  if (!user) throw new Error("limitByUser must follow authenticate");
  const charged = charge(ctx, `user:${user.id}`, ctx.deps.config.rateLimit.userPerHour);
  return charged ? charged.then(() => next()) : next();
}

/** Last in the stack: a request under /api that no route took is charged to its IP. */
export async function limitUnrouted(ctx: AppContext, next: Next): Promise<void> {
  if (ctx.path === "/api" || ctx.path.startsWith("/api/")) await chargeIp(ctx);
  await next();
}
