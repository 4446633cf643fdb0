/**
 * The OpenAPI 3.1 document, generated from the route declarations. OpenAPI 3.1 schemas are
 * JSON Schema 2020-12, which zod renders natively.
 */
import { z, type ZodType } from "zod";
import { maintenanceExempt } from "./middleware/maintenance.ts";
import type { RouteSpec } from "./routes/route.ts";

type JsonSchema = Record<string, unknown>;

/**
 * Shared definitions of the document (`components.schemas`). zod puts the definitions a
 * schema refers to (recursive ones: JSON values, folder trees) in that schema's own `$defs`
 * with `$ref: "#/$defs/…"`, which in an OpenAPI document resolves against the document's root,
 * where nothing is: validators and client generators failed on it. Each schema's definitions
 * are moved here, under their zod id (or a name for zod's anonymous `__schemaN`), one entry per
 * distinct content, and its references rewritten to point here.
 */
class Components {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly byContent = new Map<string, string>();

  /** `json` with its `$defs` moved into the components and its references rewritten. */
  hoist(json: JsonSchema, io: "input" | "output"): JsonSchema {
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    const local = Object.keys(defs);
    if (local.length === 0) return json;
    // Names first (a definition may refer to another), then the rewritten contents.
    const names = new Map(local.map((name) => [name, this.nameFor(name, defs[name]!, io)]));
    const rewrite = <T>(value: T): T => JSON.parse(JSON.stringify(value), (key, v) => (key === "$ref" && typeof v === "string" ? refTo(v, names) : v)) as T;
    for (const [name, target] of names) this.schemas[target] ??= rewrite(defs[name]!);
    return rewrite(json);
  }

  /** The component name of local definition `name`: the one already given to the same content, else a free one. */
  private nameFor(name: string, def: JsonSchema, io: "input" | "output"): string {
    const key = `${name}\0${JSON.stringify(def)}`;
    const known = this.byContent.get(key);
    if (known) return known;
    let base = name.startsWith("__schema") ? anonymousName(def) : name;
    if (this.used.has(base)) base = `${base}${io === "input" ? "Input" : "Output"}`;
    let target = base;
    for (let n = 2; this.used.has(target); n++) target = `${base}${n}`;
    this.byContent.set(key, target);
    this.used.add(target);
    return target;
  }

  private readonly used = new Set<string>();
}

/** `#/$defs/x` → `#/components/schemas/<its name>`; other references stay. */
function refTo(ref: string, names: Map<string, string>): string {
  const match = /^#\/\$defs\/(.+)$/.exec(ref);
  const target = match ? names.get(match[1]!) : undefined;
  return target ? `#/components/schemas/${target}` : ref;
}

/** A name for one of zod's anonymous definitions: z.json() is the one the routes use. */
function anonymousName(def: JsonSchema): string {
  const kinds = ((def.anyOf ?? []) as JsonSchema[]).map((k) => k.type).join();
  return kinds === "string,number,boolean,null,array,object" ? "JsonValue" : "Schema";
}

const schemaOf = (components: Components, schema: ZodType, io: "input" | "output"): JsonSchema => {
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as JsonSchema;
  delete json.$schema;
  return components.hoist(json, io);
};

const errorBody: JsonSchema = {
  type: "object",
  required: ["message", "code"],
  properties: { message: { type: "string" }, code: { type: "string" } },
};
const validationBody: JsonSchema = {
  type: "object",
  required: ["message", "code", "errors"],
  properties: {
    message: { type: "string" },
    code: { type: "string", const: "validation_failed" },
    errors: { type: "object", additionalProperties: { type: "array", items: { type: "string" } } },
  },
};

function parameters(route: RouteSpec, components: Components) {
  const list: JsonSchema[] = [];
  for (const [where, schema] of [["path", route.params], ["query", route.query]] as const) {
    if (!schema) continue;
    const json = schemaOf(components, schema, "input");
    const props = (json.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(props)) {
      list.push({ name, in: where, required: where === "path" || required.has(name), schema: prop, ...(prop.description ? { description: prop.description } : {}) });
    }
  }
  return list;
}

/** What the shared middleware may answer on any route of its kind (api/routes/buildRouter.ts): status, description, body shape. */
function implicitErrors(route: RouteSpec): [number, string, "error" | "validation"][] {
  const out: [number, string, "error" | "validation"][] = [];
  if (route.auth === "bearer") {
    out.push([401, "Missing, invalid or expired token.", "error"]);
    out.push([403, "The token lacks the scope this route needs, or the caller may see the resource but not do this.", "error"]);
  }
  if (route.params) out.push([404, "Not found, or not visible to the caller.", "error"]);
  if (route.body || route.bodyKind) {
    out.push([400, "The body is not valid JSON, form or multipart data.", "error"]);
    out.push([413, "The body is larger than the route's limit.", "error"]);
    out.push([415, "The body's content type is not one the route reads.", "error"]);
  }
  if (route.body || route.bodyKind || route.query) out.push([422, "Validation failed.", "validation"]);
  const uploads = route.bodyKind === "multipart" || route.bodyKind === "json-or-multipart";
  out.push([429, uploads ? "Rate limit exceeded (`rate_limited`), or too many uploads of the caller's in progress (`too_many_uploads`); see Retry-After." : "Rate limit exceeded; see Retry-After.", "error"]);
  const unreachable = "the database cannot be reached (`database_unavailable`); see Retry-After.";
  out.push([503, maintenanceExempt(route) ? `Unavailable: ${unreachable}` : `Maintenance mode (\`maintenance\`: only site administrators are served), or ${unreachable}`, "error"]);
  return out;
}

/** The statuses the document lists for `route`: its declared responses and those of its middleware. */
export function documentedStatuses(route: RouteSpec): Set<number> {
  return new Set([...Object.keys(route.responses).map(Number), ...implicitErrors(route).map(([status]) => status)]);
}

function responses(route: RouteSpec, components: Components) {
  const out: Record<string, JsonSchema> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    if (Number(status) >= 400 && !spec.schema && !spec.contentType) {
      // A declared error answers in the one error shape (422 with its field map).
      out[status] = { description: spec.description, content: { "application/json": { schema: status === "422" ? validationBody : errorBody } } };
      continue;
    }
    const type = spec.contentType ?? "application/json";
    out[status] = {
      description: spec.description,
      ...(spec.schema || spec.contentType ? { content: { [type]: spec.schema ? { schema: schemaOf(components, spec.schema, "output") } : {} } } : {}),
    };
  }
  for (const [status, description, shape] of implicitErrors(route)) {
    out[String(status)] ??= { description, content: { "application/json": { schema: shape === "validation" ? validationBody : errorBody } } };
  }
  return out;
}

const tokenRequest = z.union([
  z.object({
    grant_type: z.literal("password"),
    client_id: z.string(),
    client_secret: z.string(),
    username: z.string().describe("The account's e-mail address."),
    password: z.string(),
    scope: z.string().optional().describe("`*` (every scope the user may hold), or some of `read`, `write`, `admin`, space-separated."),
  }),
  z.object({
    grant_type: z.literal("refresh_token"),
    client_id: z.string(),
    client_secret: z.string(),
    refresh_token: z.string(),
    scope: z.string().optional().describe("`*` keeps the scopes of the refresh token."),
  }),
]);
const tokenResponse = z.object({
  token_type: z.literal("Bearer"),
  expires_in: z.number().int().describe("Seconds until the access token expires (3600)."),
  access_token: z.string().describe("An RS256 JWT; send it as `Authorization: Bearer <token>`."),
  refresh_token: z.string().describe("Valid 30 days; each use returns a new one and retires this one."),
  scope: z.string().optional(),
});
const oauthError = z.object({ error: z.string().describe("RFC 6749 error code, e.g. `invalid_grant`, `invalid_client`."), error_description: z.string().optional() });
const jwkSet = z.object({ keys: z.array(z.record(z.string(), z.unknown())) });
const revocationRequest = z.object({
  client_id: z.string(),
  client_secret: z.string(),
  token: z.string().describe("An access token (JWT) or a refresh token of this client."),
  token_type_hint: z.enum(["access_token", "refresh_token"]).optional(),
});

/**
 * The OAuth endpoints oidc-provider serves under /api/oauth (api/oauth/mount.ts). They are
 * not routes of the registry, so they are described here, for the document only.
 */
function oauthPaths(components: Components): Record<string, Record<string, JsonSchema>> {
  const json = (schema: ZodType) => ({ "application/json": { schema: schemaOf(components, schema, "output") } });
  const requestSchema = schemaOf(components, tokenRequest, "input");
  return {
    "/api/oauth/token": {
      post: {
        operationId: "postApiOauthToken",
        summary: "Issue tokens: password grant, or refresh grant (the refresh token rotates)",
        description:
          "OAuth 2.0 token endpoint. The body may be JSON, as the spec shows it, or the standard form encoding. Errors keep the OAuth format (`error`, `error_description`), not `{message, code}`: wrong client credentials, grant, password or refresh token, or a parameter with a NUL character, answer 400. Requests count against the caller's IP budget.",
        tags: ["Authentication"],
        security: [],
        requestBody: { required: true, content: { "application/json": { schema: requestSchema }, "application/x-www-form-urlencoded": { schema: requestSchema } } },
        responses: {
          "200": { description: "The token pair", content: json(tokenResponse) },
          "400": { description: "OAuth error: wrong client credentials, unsupported grant, wrong password, unknown or reused refresh token, scope beyond the user, a parameter with a NUL character (`invalid_request`)", content: json(oauthError) },
          "413": { description: "The body is larger than 64 KiB (`payload_too_large`).", content: { "application/json": { schema: errorBody } } },
          "429": { description: "Rate limit exceeded; see Retry-After.", content: { "application/json": { schema: errorBody } } },
        },
      },
    },
    "/api/oauth/token/revocation": {
      post: {
        operationId: "postApiOauthTokenRevocation",
        summary: "Revoke an access or refresh token of the calling client (RFC 7009)",
        description:
          "An access token stops working at once (its realtime subscriptions end too); a refresh token ends its whole session, access tokens included. A token that is invalid, expired or already revoked also answers 200; another client's token is 400 `invalid_request`. JSON or form encoding, as at the token endpoint.",
        tags: ["Authentication"],
        security: [],
        requestBody: { required: true, content: { "application/json": { schema: schemaOf(components, revocationRequest, "input") }, "application/x-www-form-urlencoded": { schema: schemaOf(components, revocationRequest, "input") } } },
        responses: {
          "200": { description: "Revoked, or nothing to revoke (empty body)" },
          "400": { description: "OAuth error: wrong client credentials (`invalid_client`), another client's token or a missing token (`invalid_request`)", content: json(oauthError) },
          "413": { description: "The body is larger than 64 KiB (`payload_too_large`).", content: { "application/json": { schema: errorBody } } },
          "429": { description: "Rate limit exceeded; see Retry-After.", content: { "application/json": { schema: errorBody } } },
        },
      },
    },
    "/api/oauth/jwks": {
      get: {
        operationId: "getApiOauthJwks",
        summary: "The public keys access tokens are signed with (JWK set)",
        tags: ["Authentication"],
        security: [],
        responses: { "200": { description: "JWK set", content: { "application/jwk-set+json": { schema: schemaOf(components, jwkSet, "output") } } } },
      },
    },
  };
}

/** Builds the OpenAPI document for `routes`, plus the OAuth endpoints served beside them. */
export function buildOpenApi(routes: RouteSpec[], info: { title: string; version: string; serverUrl: string }) {
  const components = new Components();
  const paths: Record<string, Record<string, JsonSchema>> = oauthPaths(components);
  for (const route of routes.filter((r) => !r.hidden)) {
    const path = route.root ? route.path : `/api${route.path}`;
    const operation: JsonSchema = {
      operationId: `${route.method}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_m, c?: string) => (c ? c.toUpperCase() : ""))}`,
      summary: route.summary,
      tags: route.tags,
      ...(route.description ? { description: route.description } : {}),
      parameters: parameters(route, components),
      responses: responses(route, components),
      ...(route.auth === "bearer" ? { security: [{ bearer: [] }] } : { security: [] }),
    };
    if (route.body) {
      const kinds = route.bodyKind === "multipart" ? ["multipart/form-data"] : route.bodyKind === "form" ? ["application/x-www-form-urlencoded"] : route.bodyKind === "json-or-form" ? ["application/json", "application/x-www-form-urlencoded"] : route.bodyKind === "json-or-multipart" ? ["application/json", "multipart/form-data"] : ["application/json"];
      const schema = schemaOf(components, route.body, "input");
      operation.requestBody = { required: true, content: Object.fromEntries(kinds.map((k) => [k, { schema }])) };
    }
    (paths[path] ??= {})[route.method] = operation;
  }
  return {
    openapi: "3.1.0",
    info: { title: info.title, version: info.version },
    servers: [{ url: info.serverUrl }],
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "OAuth access token (JWT) or personal API token." },
      },
    },
    paths,
  };
}
