/**
 * One fuzzed request on the wire and its judgement: the URL and body a generated request
 * becomes for its operation in a fixture world, sending it, a short account of it for the
 * failure report, and what is wrong with the answer against the OpenAPI document.
 */
import type { FuzzRequest, Operation } from "./operations.ts";
import type { JsonSchema } from "./schemaArbitrary.ts";
import type { World } from "./world.ts";
import { readAnswer } from "../http.ts";

/** A request unanswered this long is a failure (a hung route). */
const REQUEST_TIMEOUT_MS = 30_000;

/** An answer as the checks read it. */
export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** The URL of `req` for `op` in `world`, and whether its path names only the world's resources, which a stranger must not reach. */
export async function urlOf(op: Operation, req: FuzzRequest, world: World): Promise<{ path: string; allKnown: boolean }> {
  const { values, allKnown } = await world.pathParams(op.path, op.pathParams);
  let path = op.path;
  for (const [name, value] of Object.entries({ ...values, ...req.pathParams })) {
    path = path.replace(`{${name}}`, value.includes("%") ? value : encodeURIComponent(value));
  }
  const query = new URLSearchParams(req.query).toString();
  // A route open to everybody (a published store template) is not the owner's alone.
  return { path: query ? `${path}?${query}` : path, allKnown: allKnown && Object.keys(req.pathParams).length === 0 && !world.isOpen(op.method, op.path) };
}

/** The body and content type of `req` as `op` reads bodies. */
function bodyOf(op: Operation, req: FuzzRequest): { body?: string | FormData | URLSearchParams; contentType?: string } {
  if (op.method === "GET" || op.method === "HEAD") return {}; // fetch sends no body with these
  if (req.raw !== undefined) return { body: req.raw, contentType: req.contentType };
  if (req.body === undefined) return {};
  const type = op.bodyTypes[0] ?? "application/json";
  const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  const entries = req.body && typeof req.body === "object" && !Array.isArray(req.body) ? Object.entries(req.body) : [["value", req.body] as const];
  if (type.startsWith("multipart/")) {
    const form = new FormData();
    // A file of a known-good fragment (bodyHints.ts) goes as a file part.
    for (const [k, v] of entries) form.append(k, v instanceof File ? v : text(v));
    return { body: form };
  }
  if (type === "application/x-www-form-urlencoded") return { body: new URLSearchParams(entries.map(([k, v]): [string, string] => [k, text(v)])), contentType: type };
  return { body: JSON.stringify(req.body), contentType: "application/json" };
}

/**
 * Public operations whose Authorization header is no bearer token: the OAuth token endpoint
 * reads it as client authentication (a second one beside the body's client_id and secret is a
 * 400 `invalid_request`), so a client sends none there.
 */
const NO_BEARER = new Set(["postApiOauthToken"]);

/** Sends `req` to `path` of `op` as the world's person it names; throws when no answer came. */
export async function send(baseUrl: string, op: Operation, req: FuzzRequest, path: string, world: World): Promise<Answer> {
  const { body, contentType } = bodyOf(op, req);
  const person = NO_BEARER.has(op.id) ? undefined : req.identity;
  const token = person === "owner" ? world.owner.token : person === "stranger" ? world.stranger.token : undefined;
  const headers: Record<string, string> = { accept: "application/json", ...req.headers, ...(token ? { authorization: `Bearer ${token}` } : {}), ...(contentType ? { "content-type": contentType } : {}) };
  return readAnswer(await fetch(`${baseUrl}${path}`, { method: op.method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
}

/** A short account of a request for the failure report, with what replays it. */
export function describe(op: Operation, req: FuzzRequest, path: string, index: number, replay: string): string {
  const sent = req.raw !== undefined ? req.raw : req.body === undefined ? "" : JSON.stringify(req.body);
  const body = sent.length > 300 ? `${sent.slice(0, 300)}… (${sent.length} chars)` : sent;
  return `${op.id} case ${index} [${req.identity}, ${req.label}] ${op.method} ${path.length > 300 ? `${path.slice(0, 300)}…` : path}${body ? ` body ${body}` : ""}${req.contentType ? ` as ${req.contentType}` : ""} (${replay} FUZZ_ONLY=${op.id})`;
}

/** What is wrong with the answer `res` to `req` (empty: nothing). */
export function problemsOf(op: Operation, req: FuzzRequest, res: Answer, allKnown: boolean): string[] {
  const problems: string[] = [];
  const documented = op.responses[String(res.status)];
  if (res.status >= 500 && !documented) problems.push(`server error ${res.status}`);
  else if (!documented) problems.push(`undocumented status ${res.status} (documented: ${Object.keys(op.responses).join(", ")})`);
  if (res.status >= 400) {
    const schema = documented?.content?.["application/json"]?.schema as JsonSchema | undefined;
    const required = (schema?.required as string[] | undefined) ?? ["message", "code"];
    if (!/json/.test(res.headers.get("content-type") ?? "")) problems.push(`error answered as ${res.headers.get("content-type")}, not JSON`);
    else for (const key of required) if (typeof res.body?.[key] !== "string" && !(key === "errors" && typeof res.body?.errors === "object")) problems.push(`error without its ${key}`);
  }
  if (req.identity === "anonymous" && op.bearer && res.status !== 401 && res.status !== 429) problems.push(`no token, yet ${res.status} instead of 401`);
  if (req.identity === "stranger" && allKnown && op.pathParams.length > 0 && res.status < 300) problems.push(`a stranger got ${res.status} on the owner's resource`);
  // A change whose body names the owner's resources (bodyHints.ts) is no stranger's to make.
  if (req.identity === "stranger" && req.names?.length && op.method !== "GET" && res.status < 300) problems.push(`a stranger got ${res.status} for a change naming the owner's ${req.names.join(", ")}`);
  return problems;
}
