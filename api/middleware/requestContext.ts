/**
 * First middleware of every request: a request id (the client's `X-Request-Id` when it is
 * sane, else a fresh one), a child logger carrying it, security headers, error mapping,
 * the access log line and the HTTP metrics, labelled by route template so that ids do not
 * explode the label set.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Next } from "koa";
import type { Logger } from "../../shared/logger.ts";
import { AppError } from "../../shared/errors.ts";
import type { AppContext, AppState } from "../context.ts";
import { respondWithError } from "./errors.ts";
import { loggedUrl } from "./loggedUrl.ts";

const saneId = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * A request's `ctx.state`. Its child logger is made on first use: most requests log only
 * the access line, and a pino child per request costs more than that line. A class rather
 * than a getter defined on each request's object, which cost a few closures per request.
 */
class RequestState implements AppState {
  readonly requestId: string;
  user?: AppState["user"];
  auth?: AppState["auth"];
  readonly #root: Logger;
  #log: Logger | undefined;

  constructor(requestId: string, root: Logger) {
    this.requestId = requestId;
    this.#root = root;
  }

  get log(): Logger {
    return (this.#log ??= this.#root.child(this.user ? { req_id: this.requestId, user_id: this.user.id } : { req_id: this.requestId }));
  }
}

/** Headers every API response carries; a route may replace Cache-Control. */
const fixedHeaders: [string, string][] = [
  ["X-Content-Type-Options", "nosniff"],
  ["X-Frame-Options", "DENY"],
  ["Referrer-Policy", "no-referrer"],
  ["Cache-Control", "no-store"],
];

/**
 * Reads a request body that was refused part-way (over its limit, a bad multipart part, a body
 * the route stopped reading) to its end and discards it, as Node itself does for a body nobody
 * started to read. Otherwise the body parser's pause leaves the rest unread on a keep-alive
 * connection: the client cannot finish sending, the next request it queues on that connection
 * never gets an answer, and the socket stays open until the request timeout.
 */
function discardUnreadBody(req: IncomingMessage): void {
  if (req.complete || req.destroyed) return;
  req.removeAllListeners("data");
  req.resume();
}

/**
 * The outermost middleware, one async layer for what every request needs: the request id
 * and lazy child logger, the fixed security headers (set first, so a route can override
 * Cache-Control), the error mapping, the JSON 404 for unrouted paths, and on the way out
 * the metrics and the access log line.
 */
export async function requestContext(ctx: AppContext, next: Next): Promise<void> {
  const started = process.hrtime.bigint();
  const given = ctx.get("x-request-id");
  const requestId = saneId.test(given) ? given : randomUUID();
  ctx.state = new RequestState(requestId, ctx.deps.log);
  const res = ctx.res;
  res.setHeader("X-Request-Id", requestId);
  for (const [name, value] of fixedHeaders) res.setHeader(name, value);
  try {
    await next();
    if (ctx.status === 404 && ctx.body == null) throw new AppError(404, "not_found", `No route for ${ctx.method} ${ctx.path}.`);
  } catch (error) {
    respondWithError(ctx, error);
  } finally {
    discardUnreadBody(ctx.req);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
    ctx.deps.metrics.recordRequest(ctx.method, String(route), ctx.status, seconds);
    if (route !== "unmatched") ctx.deps.timings.record(`${ctx.method} ${String(route)}`, seconds * 1000);
    const log = ctx.deps.log;
    if (ctx.status >= 500 ? log.isLevelEnabled("error") : log.isLevelEnabled("info")) {
      const line = { req_id: requestId, method: ctx.method, url: loggedUrl(ctx.originalUrl), status: ctx.status, ms: Math.round(seconds * 1e4) / 10, user: ctx.state.user?.id };
      if (ctx.status >= 500) log.error(line, "request");
      else log.info(line, "request");
    }
  }
}
