/**
 * First middleware of every request: a request id (the client's `X-Request-Id` when it is
 * sane, else a fresh one), a child logger carrying it, the access log line and the HTTP
 * metrics, labelled by route template so that ids do not explode the label set.
 */
import { randomUUID } from "node:crypto";
import type { Next } from "koa";
import type { Logger } from "../../shared/logger.ts";
import type { AppContext } from "../context.ts";

const saneId = /^[A-Za-z0-9._:-]{8,128}$/;

export async function requestContext(ctx: AppContext, next: Next): Promise<void> {
  const started = process.hrtime.bigint();
  const given = ctx.get("x-request-id");
  const requestId = saneId.test(given) ? given : randomUUID();
  ctx.state.requestId = requestId;
  // The request's child logger is made on first use: most requests log only the access
  // line below, and a pino child per request costs more than that line.
  let child: Logger | undefined;
  Object.defineProperty(ctx.state, "log", {
    configurable: true,
    enumerable: true,
    get: () => (child ??= ctx.deps.log.child(ctx.state.user ? { req_id: requestId, user_id: ctx.state.user.id } : { req_id: requestId })),
    set: (value: Logger) => (child = value),
  });
  ctx.set("X-Request-Id", requestId);
  try {
    await next();
  } finally {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
    const labels = { method: ctx.method, route: String(route), status: String(ctx.status) };
    ctx.deps.metrics.httpRequests.inc(labels);
    ctx.deps.metrics.httpDuration.observe(labels, seconds);
    const log = ctx.deps.log;
    if (ctx.status >= 500 ? log.isLevelEnabled("error") : log.isLevelEnabled("info")) {
      const line = { req_id: requestId, method: ctx.method, url: ctx.originalUrl, status: ctx.status, ms: Math.round(seconds * 1e4) / 10, user: ctx.state.user?.id };
      if (ctx.status >= 500) log.error(line, "request");
      else log.info(line, "request");
    }
  }
}

/** Headers every API response carries. */
export async function securityHeaders(ctx: AppContext, next: Next): Promise<void> {
  await next();
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("X-Frame-Options", "DENY");
  ctx.set("Referrer-Policy", "no-referrer");
  if (!ctx.response.get("Cache-Control")) ctx.set("Cache-Control", "no-store");
}
