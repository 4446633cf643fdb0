/**
 * The operations of the OpenAPI document, and the requests the fuzz sends them: valid ones
 * generated from the documented schemas, and invalid ones made from a valid one by a single
 * mutation (a wrong type, a missing or extra field, a huge string or number, a unicode edge
 * case, a NUL byte, deep nesting, a wrong content type, broken JSON, an invalid path
 * parameter or query value).
 */
import fc from "fast-check";
import type { Naming } from "./bodyHints.ts";
import { valueOf, type JsonSchema, type ResolveRef } from "./schemaArbitrary.ts";

/** Who sends a request. */
export type Identity = "owner" | "stranger" | "anonymous";

/** One documented operation. */
export interface Operation {
  id: string;
  method: string;
  /** The documented path, e.g. `/api/projects/{projectId}`. */
  path: string;
  pathParams: string[];
  query: { name: string; required: boolean; schema: JsonSchema }[];
  body: JsonSchema | undefined;
  /** Content types the body may be sent as, in the document's order. */
  bodyTypes: string[];
  responses: Record<string, JsonSchema>;
  bearer: boolean;
}

/** A request to send. */
export interface FuzzRequest {
  identity: Identity;
  /** What the case tries, for the report. */
  label: string;
  /** Path parameter values; missing ones come from the fixture world. */
  pathParams: Record<string, string>;
  query: Record<string, string>;
  /** A value sent in the operation's first body type, or nothing. */
  body?: unknown;
  /** Sent as it is instead of `body`, with `contentType`. */
  raw?: string;
  contentType?: string;
  /** The resource kinds of the world a valid request's body or query names (`bodyHints.ts`), if any. */
  names?: string[];
}

/** The operations of `doc`, in document order. */
export function operationsOf(doc: JsonSchema): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, JsonSchema>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const parameters = (op.parameters ?? []) as JsonSchema[];
      const content = (op.requestBody?.content ?? {}) as Record<string, JsonSchema>;
      const bodyTypes = Object.keys(content);
      out.push({
        id: op.operationId as string,
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === "path").map((p) => p.name as string),
        query: parameters.filter((p) => p.in === "query").map((p) => ({ name: p.name as string, required: Boolean(p.required), schema: p.schema as JsonSchema })),
        body: bodyTypes.length ? (content[bodyTypes[0]!]!.schema as JsonSchema) : undefined,
        bodyTypes,
        responses: op.responses as Record<string, JsonSchema>,
        bearer: ((op.security ?? []) as unknown[]).length > 0,
      });
    }
  }
  return out;
}

/**
 * A number as a client writes it in a query string: in digits. JSON (and String) would write a
 * tiny or huge one as `5e-324` or `1e+21`, which the service reads in plain decimal form only
 * (shared/canonicalNumbers.ts); the fuzz's odd values send such forms on purpose.
 */
function digits(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  if (Number.isInteger(value)) return BigInt(value).toString();
  return value.toFixed(20).replace(/0+$/, "").replace(/\.$/, "");
}

/** A query string value as a client would write it. */
const queryText = (value: unknown) => (typeof value === "string" ? value : typeof value === "number" ? digits(value) : JSON.stringify(value));

/** Valid query parameters and body of `op`. */
function validParts(op: Operation, resolve: ResolveRef): fc.Arbitrary<{ query: Record<string, string>; body?: unknown }> {
  const query = fc.record(
    Object.fromEntries(op.query.map((q) => [q.name, valueOf(q.schema, resolve).map(queryText)])),
    { requiredKeys: op.query.filter((q) => q.required).map((q) => q.name) },
  ) as fc.Arbitrary<Record<string, string>>;
  return op.body ? fc.record({ query, body: valueOf(op.body, resolve) }) : fc.record({ query });
}

/** `parts` with the fields `naming` fills (an object body only: another has no fields to name). */
function named(parts: { query: Record<string, string>; body?: unknown }, naming: Naming): { query: Record<string, string>; body?: unknown } {
  const body = parts.body;
  const isObject = body !== null && typeof body === "object" && !Array.isArray(body);
  return { query: { ...parts.query, ...naming.query }, ...("body" in parts ? { body: isObject ? { ...body, ...naming.body } : body } : {}) };
}

/**
 * A valid request of `op` sent as `identity`. With a `naming`, three in four carry the world's
 * ids and known-good values it holds (labelled "valid, … filled in"); the rest stay random.
 */
export function validRequest(op: Operation, resolve: ResolveRef, identity: Identity, naming?: Naming): fc.Arbitrary<FuzzRequest> {
  const random = validParts(op, resolve);
  const plain = random.map((parts): FuzzRequest => ({ identity, label: "valid", pathParams: {}, ...parts }));
  if (!naming) return plain;
  const label = `valid, ${[...Object.keys(naming.body), ...Object.keys(naming.query)].join(", ")} filled in`;
  const filled = random.map((parts): FuzzRequest => ({ identity, label, pathParams: {}, ...named(parts, naming), names: naming.resources }));
  return fc.oneof({ weight: 1, arbitrary: plain }, { weight: 3, arbitrary: filled });
}

const WRONG_TYPES: unknown[] = [0, -1, 1.5, "text", "", true, false, null, [], {}, [1, "a"], { nested: { value: 1 } }];
const HUGE_NUMBERS = ["1e308", "-1e308", "1e400", "9007199254740993", "-0", "1e-400", "123456789012345678901234567890"];
const UNICODE = ["\u202e\u0644\u0627", "\ud800", "\udfff\ud800", "👩‍👩‍👧‍👦", "\ufeff", "e\u0301\u0301\u0301", "\u0000", "\u2028\u2029", "Ω≈ç√∫", "𝕳𝖊𝖑𝖑𝖔", "<script>alert(1)</script>", "' OR 1=1 --", "../../etc/passwd", "${7*7}{{7*7}}"];
const PATH_VALUES = ["0", "-1", "abc", "1.5", "1e3", "99999999999999999999", "9007199254740993", " 1", "%00", "%2e%2e%2f", "null", "[]", "\u0661", "1;drop table users"];
const EXTRA_KEYS = ["__proto__", "constructor", "prototype", "unexpected_field", "id", "user_id", "owner_id", "roles", "is_admin", "created_at"];
const BAD_TYPES = ["text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-16", "image/png"];

/** The value of an extra field (built once: a new JSON arbitrary per operation costs more than its requests). */
const EXTRA_VALUE = fc.jsonValue({ maxDepth: 2 });

/** Nested arrays `levels` deep, as JSON text. */
const nestedText = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

type Mutation = { label: string; apply: (req: FuzzRequest, op: Operation) => FuzzRequest };

/** Replaces the value at top-level key number `n` of the body (or the body itself when it has none). */
function atField(label: string, value: fc.Arbitrary<unknown>, text?: (v: unknown) => string): fc.Arbitrary<Mutation> {
  return fc.tuple(fc.nat(), value).map(([n, v]) => ({
    label,
    apply: (req) => {
      const body = req.body;
      if (body && typeof body === "object" && !Array.isArray(body) && Object.keys(body).length > 0) {
        const keys = Object.keys(body);
        const key = keys[n % keys.length]!;
        if (text) {
          // A value JSON cannot carry as a number (1e400, 2^53 + 1): spliced into the text.
          const marker = `"__fuzz_${n}__"`;
          return { ...req, label: `${label} at ${key}`, raw: JSON.stringify({ ...body, [key]: marker.slice(1, -1) }).replace(marker, text(v)), contentType: "application/json" };
        }
        return { ...req, label: `${label} at ${key}`, body: { ...body, [key]: v } };
      }
      if (text) return { ...req, label: `${label} as the body`, raw: text(v), contentType: "application/json" };
      return { ...req, label: `${label} as the body`, body: v };
    },
  }));
}

/** Replaces query parameter number `n` (or adds one named `q`). */
function atQuery(label: string, value: fc.Arbitrary<string>): fc.Arbitrary<Mutation> {
  return fc.tuple(fc.nat(), value).map(([n, v]) => ({
    label,
    apply: (req, op) => {
      const names = op.query.map((q) => q.name);
      const name = names.length ? names[n % names.length]! : "q";
      return { ...req, label: `${label} in query ${name}`, query: { ...req.query, [name]: v } };
    },
  }));
}

/** The single mutations one invalid request carries. */
function mutations(op: Operation): fc.Arbitrary<Mutation> {
  const list: fc.Arbitrary<Mutation>[] = [
    atField("wrong type", fc.constantFrom(...WRONG_TYPES)),
    atField("huge string", fc.constantFrom(70_000, 300_000), (n) => JSON.stringify("x".repeat(n as number))),
    atField("huge or odd number", fc.constantFrom(...HUGE_NUMBERS), (v) => v as string),
    atField("unicode edge case", fc.constantFrom(...UNICODE)),
    atField("NUL byte", fc.constantFrom("a\u0000b", "\u0000")),
    atField("deep nesting", fc.constantFrom(70, 5_000), (n) => nestedText(n as number)),
    fc.tuple(fc.nat(), fc.constantFrom(...EXTRA_KEYS), EXTRA_VALUE).map(([, key, value]) => ({
      label: `extra field ${key}`,
      apply: (req) => {
        const base = req.body && typeof req.body === "object" && !Array.isArray(req.body) ? req.body : {};
        // Spliced as text: an object literal would make "__proto__" a prototype, not a key.
        const text = JSON.stringify(base).replace(/^\{/, `{${JSON.stringify(key)}:${JSON.stringify(value)}${Object.keys(base).length ? "," : ""}`);
        return { ...req, label: `extra field ${key}`, raw: text, contentType: "application/json" };
      },
    })),
    fc.nat().map((n) => ({
      label: "missing field",
      apply: (req) => {
        if (!req.body || typeof req.body !== "object" || Array.isArray(req.body)) return { ...req, label: "no body", body: undefined };
        const keys = Object.keys(req.body);
        if (!keys.length) return { ...req, label: "empty body", body: {} };
        const key = keys[n % keys.length]!;
        const { [key]: _dropped, ...rest } = req.body as Record<string, unknown>;
        return { ...req, label: `missing field ${key}`, body: rest };
      },
    })),
    fc.constantFrom(...BAD_TYPES).map((type) => ({
      label: `content type ${type}`,
      apply: (req) => ({ ...req, label: `body sent as ${type}`, raw: JSON.stringify(req.body ?? { a: 1 }), contentType: type }),
    })),
    fc.nat().map((n) => ({
      label: "broken JSON",
      apply: (req) => {
        const text = JSON.stringify(req.body ?? { a: 1 });
        return { ...req, label: "broken JSON", raw: text.slice(0, Math.max(1, n % text.length)), contentType: "application/json" };
      },
    })),
    atQuery("odd query value", fc.constantFrom(...PATH_VALUES, "x".repeat(10_000), "\u0000")),
  ];
  if (op.pathParams.length) {
    list.push(
      fc.tuple(fc.nat(), fc.constantFrom(...PATH_VALUES)).map(([n, value]) => ({
        label: "invalid path parameter",
        apply: (req, o) => {
          const name = o.pathParams[n % o.pathParams.length]!;
          return { ...req, label: `invalid path parameter ${name}=${JSON.stringify(value)}`, pathParams: { ...req.pathParams, [name]: value } };
        },
      })),
    );
  }
  return fc.oneof(...list);
}

/** An invalid request of `op` (a valid one, named or not, with one mutation), sent by the owner. */
export function invalidRequest(op: Operation, resolve: ResolveRef, naming?: Naming): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(validRequest(op, resolve, "owner", naming), mutations(op)).map(([req, mutation]) => mutation.apply(req, op));
}
