/**
 * Builds the Koa router from route declarations: each route becomes the pipeline
 * authenticate → read body → validate → handler (STYLE "A request").
 */
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import Router from "@koa/router";
import type { Middleware, Next } from "koa";
import { HttpMethodEnum, koaBody } from "koa-body";
import type { ZodType } from "zod";
import { AppError, invalid, notFound } from "../../shared/errors.ts";
import { fieldErrors } from "../../shared/validation.ts";
import { jsonTextMayHoldUnstorable, unstorableText } from "../../shared/storableText.ts";
import type { Config } from "../../shared/config.ts";
import type { AppContext, AppState, AppDeps } from "../context.ts";
import { authenticate, requireScope } from "../middleware/authenticate.ts";
import { jsonTextDepth, MAX_BODY_DEPTH, refuseDeepBody } from "../middleware/bodyDepth.ts";
import { withMultipart } from "../middleware/multipart.ts";
import { withUploadSlot } from "../middleware/uploadSlots.ts";
import { toAppError } from "../middleware/errors.ts";
import { maintenanceExempt, maintenanceGate } from "../middleware/maintenance.ts";
import { documentedStatuses } from "../openapi.ts";
import { limitByIp, limitByUser } from "../middleware/rateLimit.ts";
import { canonicalIds, numericParamNames } from "./pathIds.ts";
import { routeScope, toRouterPath, type BodyKind, type RouteSpec } from "./route.ts";

type AppMiddleware = Middleware<AppState, { deps: AppDeps }>;

const contentTypes: Record<BodyKind, string[]> = {
  json: ["application/json", "+json"],
  form: ["application/x-www-form-urlencoded"],
  multipart: ["multipart/form-data"],
  "json-or-form": ["application/json", "+json", "application/x-www-form-urlencoded"],
  "json-or-multipart": ["application/json", "+json", "multipart/form-data"],
};

/** Content types koa-body reads as JSON (its defaults, named here so the reader knows which text it parsed). */
const jsonTypes = ["application/json", "application/json-patch+json", "application/vnd.api+json", "application/csp-report", "application/reports+json"];

const parsedMethods = [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE];

function bodyReader(kind: BodyKind, config: Config, limit = config.bodyLimitBytes): AppMiddleware {
  // koa-body reads JSON and form bodies; multipart bodies go to withMultipart, which owns
  // the uploaded files from the first byte to their removal.
  const json = kind !== "form" && kind !== "multipart";
  const parse = koaBody({
    json,
    jsonTypes,
    // The text is kept so that the depth and NUL checks can read it instead of walking the value.
    includeUnparsed: true,
    urlencoded: kind === "form" || kind === "json-or-form",
    multipart: false,
    text: false,
    jsonLimit: limit,
    formLimit: limit,
    jsonStrict: true,
    parsedMethods,
  }) as unknown as AppMiddleware;
  const acceptsMultipart = contentTypes[kind].includes("multipart/form-data");
  const uploadLimits = {
    fileBytes: config.uploadLimitBytes,
    fieldBytes: config.bodyLimitBytes,
    // The upload form's file cap (DEPLOYMENT_UPLOAD_MAX_FILES) is the largest any route takes.
    files: config.deployments.uploadMaxFiles,
    fields: 1000,
  };
  return async (ctx, next) => {
    const hasBody = Number(ctx.get("content-length") || 0) > 0 || ctx.get("transfer-encoding") !== "";
    if (hasBody) {
      const type = ctx.get("content-type").toLowerCase();
      if (!contentTypes[kind].some((t) => type.includes(t))) {
        throw new AppError(415, "unsupported_media_type", `Send the request body as ${contentTypes[kind][0]}.`);
      }
    }
    if (acceptsMultipart && ctx.is("multipart/form-data") && parsedMethods.includes(ctx.method as HttpMethodEnum)) {
      // Administrators may lower the upload limit below the configured ceiling at run time.
      const lowered = (await ctx.deps.settings.get()).upload_limit_bytes;
      const limits = lowered !== null && lowered < uploadLimits.fileBytes ? { ...uploadLimits, fileBytes: lowered } : uploadLimits;
      return withUploadSlot(ctx, () => withMultipart(ctx, limits, next));
    }
    await parse(ctx, async () => {});
    const text = json && ctx.is(jsonTypes) ? ctx.request.rawBody : undefined;
    if (text === undefined || jsonTextDepth(text) > MAX_BODY_DEPTH) refuseDeepBody(ctx.request.body);
    if (text !== undefined && !jsonTextMayHoldUnstorable(text)) ctx.state.bodyStorable = true;
    await next();
  };
}

function parseWith(schema: ZodType | undefined, value: unknown, onError: (errors: Record<string, string[]>) => AppError) {
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (!result.success) throw onError(fieldErrors(result.error));
  return result.data;
}

/** Refuses input holding text PostgreSQL cannot store (a NUL, an unpaired surrogate) with a 422 on its field. */
function refuseUnstorable(value: unknown): void {
  const found = unstorableText(value);
  if (found !== null) throw invalid({ [found.path || "body"]: [found.message] });
}

function validator(route: RouteSpec, deps: AppDeps): AppMiddleware {
  const validateResponses = deps.config.env === "test";
  const documented = validateResponses ? documentedStatuses(route) : undefined;
  const ids = numericParamNames(route.params);
  return async (ctx: AppContext, _next: Next) => {
    const rawParams = (ctx as AppContext & { params?: Record<string, string> }).params ?? {};
    if (!canonicalIds(ids, rawParams)) throw notFound();
    const params = parseWith(route.params, rawParams, () => notFound());
    const query = parseWith(route.query, ctx.query, invalid);
    const parsedBody = (ctx.request.body ?? {}) as Record<string, unknown>;
    // Only what the route reads: a query parameter it does not take is ignored, NUL or not.
    if (route.query) refuseUnstorable(query);
    if (!ctx.state.bodyStorable) refuseUnstorable(parsedBody);
    const rawBody = ctx.request.files ? { ...parsedBody, ...ctx.request.files } : parsedBody;
    const body = route.quickBody?.(rawBody) ?? parseWith(route.body, rawBody, invalid);
    try {
      await route.handler(ctx, { params, query, body });
    } catch (error) {
      if (documented) checkStatus(route, documented, toAppError(error)?.status);
      throw error;
    }
    if (documented) {
      checkStatus(route, documented, ctx.status);
      checkResponse(route, ctx);
    }
  };
}

/**
 * In tests, a route answering a status its OpenAPI responses do not list fails the request
 * loudly (a 500 the test sees), so the document cannot drift from what clients get. 5xx are
 * left to the tests that meet them: none is ever expected.
 */
function checkStatus(route: RouteSpec, documented: Set<number>, status: number | undefined): void {
  if (status === undefined || status >= 500 || documented.has(status)) return;
  throw new Error(`${route.method.toUpperCase()} ${route.path} answered ${status}, which its responses do not list: declare it on the route.`);
}

/** A response body without its content coding (`br`, `gzip` or none). */
function decoded(body: Buffer, encoding: string): Buffer {
  if (encoding === "br") return brotliDecompressSync(body);
  if (encoding === "gzip") return gunzipSync(body);
  return body;
}

/** In tests, a response that contradicts its declared schema fails the request loudly. */
function checkResponse(route: RouteSpec, ctx: AppContext): void {
  const schema = route.responses[ctx.status]?.schema;
  if (!schema) return;
  // A route may answer pre-serialized JSON (a cached Buffer, maybe compressed): check what it decodes to.
  const body = Buffer.isBuffer(ctx.body) && ctx.response.is("json") ? (JSON.parse(decoded(ctx.body, ctx.response.get("Content-Encoding")).toString("utf8")) as unknown) : ctx.body;
  const result = schema.safeParse(body);
  if (!result.success) {
    throw new Error(`Response of ${route.method.toUpperCase()} ${route.path} does not match its schema: ${result.error.message}`);
  }
}

/** Builds the router for `routes` under `prefix`. */
export function buildRouter(routes: RouteSpec[], deps: AppDeps, prefix: string): Router<AppState, { deps: AppDeps }> {
  const router = new Router<AppState, { deps: AppDeps }>({ prefix });
  for (const route of routes) {
    const stack: AppMiddleware[] = [];
    if (route.auth === "bearer") stack.push(authenticate as AppMiddleware, limitByUser as AppMiddleware, requireScope(routeScope(route)) as AppMiddleware);
    else if (!route.unlimited) stack.push(limitByIp as AppMiddleware);
    if (!maintenanceExempt(route)) stack.push(maintenanceGate as AppMiddleware);
    if (route.body || route.bodyKind) stack.push(bodyReader(route.bodyKind ?? "json", deps.config, typeof route.bodyLimitBytes === "function" ? route.bodyLimitBytes(deps.config) : route.bodyLimitBytes));
    stack.push(validator(route, deps));
    router[route.method](toRouterPath(route.path), ...(stack as [AppMiddleware]));
  }
  return router;
}
