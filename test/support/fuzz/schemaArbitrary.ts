/**
 * fast-check arbitraries of the values a JSON Schema (as the OpenAPI document renders the
 * routes' zod schemas, 2020-12) accepts: types, enums and constants, string lengths, patterns
 * and formats, number bounds, arrays, objects with their required keys, unions, and
 * references into `components.schemas` (recursive ones bottom out at a depth).
 *
 * "Valid" means what the document says. Rules the document cannot express (zod refinements,
 * trimming, business checks) may still refuse a generated value, which is fine: the fuzz
 * asserts how the service answers, not that it accepts.
 */
import fc from "fast-check";

/** A JSON Schema node of the document. */
export type JsonSchema = Record<string, any>;

/** Looks up `#/components/schemas/…` references. */
export type ResolveRef = (ref: string) => JsonSchema | undefined;

/** Beyond this depth of references and containers, only the smallest values are generated. */
const MAX_DEPTH = 4;
/** Generated valid strings stay short: huge ones are the invalid cases' business. */
const MAX_VALID_STRING = 40;

/** Any JSON value, for a schema that does not narrow it (built once: see `strings`). */
const ANY_JSON = fc.jsonValue({ maxDepth: 1 });

/** Whether a schema (shallowly, as JSON) refers to another. */
const refersOn = (schema: JsonSchema) => JSON.stringify(schema).includes('"$ref"');

/** An arbitrary of values `schema` accepts. */
export function valueOf(schema: JsonSchema | undefined, resolve: ResolveRef, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || Object.keys(schema).length === 0) return ANY_JSON;
  if (typeof schema.$ref === "string") {
    const target = resolve(schema.$ref);
    return target ? valueOf(target, resolve, depth + 1) : fc.constant(null);
  }
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  for (const key of ["anyOf", "oneOf"] as const) {
    if (!Array.isArray(schema[key])) continue;
    let branches = schema[key] as JsonSchema[];
    if (depth >= MAX_DEPTH) branches = branches.filter((b) => !refersOn(b)).length ? branches.filter((b) => !refersOn(b)) : branches;
    return fc.oneof(...branches.map((b) => valueOf(b, resolve, depth + 1)));
  }
  if (Array.isArray(schema.allOf)) return valueOf(Object.assign({}, ...(schema.allOf as JsonSchema[])), resolve, depth);
  if (Array.isArray(schema.type)) return fc.oneof(...(schema.type as string[]).map((type) => valueOf({ ...schema, type }, resolve, depth)));
  switch (schema.type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return integerOf(schema);
    case "number":
      return numberOf(schema);
    case "string":
      return stringOf(schema);
    case "array":
      return arrayOf(schema, resolve, depth);
    case "object":
      return objectOf(schema, resolve, depth);
    default:
      // No type: properties still describe an object; anything else is open.
      return schema.properties ? objectOf(schema, resolve, depth) : ANY_JSON;
  }
}

function bounds(schema: JsonSchema, integer: boolean): { min: number; max: number } {
  const step = integer ? 1 : Number.EPSILON;
  let min = typeof schema.minimum === "number" ? schema.minimum : typeof schema.exclusiveMinimum === "number" ? schema.exclusiveMinimum + step : -1_000_000;
  let max = typeof schema.maximum === "number" ? schema.maximum : typeof schema.exclusiveMaximum === "number" ? schema.exclusiveMaximum - step : 1_000_000;
  if (integer) {
    min = Math.max(Math.ceil(min), Number.MIN_SAFE_INTEGER);
    max = Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER);
  }
  return { min, max: Math.max(min, max) };
}

function integerOf(schema: JsonSchema): fc.Arbitrary<number> {
  const { min, max } = bounds(schema, true);
  // Small values first: ids and counts near the bounds and near zero find the interesting paths.
  return fc.oneof(fc.integer({ min, max }), fc.constantFrom(...[min, max, Math.min(Math.max(0, min), max), Math.min(Math.max(1, min), max)]));
}

function numberOf(schema: JsonSchema): fc.Arbitrary<number> {
  const { min, max } = bounds(schema, false);
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/**
 * String arbitraries by their schema: building one is costly (fast-check tokenizes its
 * built-in edge-case strings for every new string arbitrary, and builds a URL's character
 * tables), while an arbitrary is pure, so one built per distinct schema serves every request.
 */
const strings = new Map<string, fc.Arbitrary<string>>();

function stringOf(schema: JsonSchema): fc.Arbitrary<string> {
  const key = JSON.stringify(schema);
  let arbitrary = strings.get(key);
  if (!arbitrary) {
    arbitrary = newStringOf(schema);
    strings.set(key, arbitrary);
  }
  return arbitrary;
}

/**
 * Web URLs of a domain and a short path. Not `fc.webUrl()`: its first use builds a table of
 * every Unicode code point (over a second of CPU), and each later one still ~0.1 s.
 */
const URL_CHAR = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789-._~");
const WEB_URL = fc
  .tuple(fc.constantFrom("https", "http"), fc.domain(), fc.array(fc.string({ unit: URL_CHAR, minLength: 1, maxLength: 8 }), { maxLength: 3 }))
  .map(([scheme, domain, path]) => `${scheme}://${domain}/${path.join("/")}`);

function newStringOf(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === "number" ? schema.minLength : 0;
  const maxLength = Math.max(minLength, Math.min(typeof schema.maxLength === "number" ? schema.maxLength : MAX_VALID_STRING, MAX_VALID_STRING));
  const fits = (s: string) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity);
  if (typeof schema.pattern === "string") {
    try {
      return fc.stringMatching(new RegExp(schema.pattern), { size: "xsmall" }).filter(fits);
    } catch {
      // a pattern fast-check cannot read: fall through to the format or a plain string
    }
  }
  switch (schema.format) {
    case "email":
      return fc.emailAddress().filter(fits);
    case "date-time":
      return fc.date({ min: new Date("2000-01-01"), max: new Date("2099-12-31"), noInvalidDate: true }).map((d) => d.toISOString());
    case "date":
      return fc.date({ min: new Date("2000-01-01"), max: new Date("2099-12-31"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case "uri":
    case "url":
      return WEB_URL.filter(fits);
    case "uuid":
      return fc.uuid();
    default:
      return fc.string({ minLength, maxLength, unit: "grapheme" });
  }
}

function arrayOf(schema: JsonSchema, resolve: ResolveRef, depth: number): fc.Arbitrary<unknown[]> {
  const minLength = typeof schema.minItems === "number" ? schema.minItems : 0;
  const maxLength = depth >= MAX_DEPTH ? minLength : Math.max(minLength, Math.min(schema.maxItems ?? 3, 3));
  const items = valueOf(schema.items as JsonSchema | undefined, resolve, depth + 1);
  return schema.uniqueItems ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) }) : fc.array(items, { minLength, maxLength });
}

function objectOf(schema: JsonSchema, resolve: ResolveRef, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  const names = Object.keys(properties).filter((name) => depth < MAX_DEPTH || required.has(name));
  if (names.length === 0 && schema.additionalProperties && typeof schema.additionalProperties === "object") {
    const key = stringOf({ type: "string", minLength: 1, maxLength: 20, ...(schema.propertyNames ?? {}) });
    return fc.dictionary(key, valueOf(schema.additionalProperties as JsonSchema, resolve, depth + 1), { maxKeys: depth >= MAX_DEPTH ? 0 : 3 });
  }
  const model = Object.fromEntries(names.map((name) => [name, valueOf(properties[name], resolve, depth + 1)]));
  return fc.record(model, { requiredKeys: names.filter((name) => required.has(name)) });
}
