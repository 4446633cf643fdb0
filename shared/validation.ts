/**
 * Validation messages. zod's global error map is set once so that every failed field reads
 * like "The password field must be at least 8 characters." (the wording clients of such
 * services already show to users); a schema's own `error` message still wins.
 * `fieldErrors` turns a ZodError into the `errors` map of a 422 body.
 */
import { z, type ZodError } from "zod";
import { dict } from "./dict.ts";
import type { FieldErrors } from "./errors.ts";

type Issue = z.core.$ZodRawIssue;

const label = (path: readonly PropertyKey[] | undefined) => {
  const last = [...(path ?? [])].reverse().find((p) => typeof p === "string");
  return typeof last === "string" ? last.replace(/_/g, " ") : "input";
};

const kinds: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "an array",
  object: "an object",
  date: "a date",
};

function message(issue: Issue): string | undefined {
  const field = `The ${label(issue.path)} field`;
  switch (issue.code) {
    case "invalid_type": {
      if (issue.input === undefined) return `${field} is required.`;
      if (issue.input === null) return `${field} must not be null.`;
      return `${field} must be ${kinds[issue.expected] ?? issue.expected}.`;
    }
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "string") return min === 1 ? `${field} is required.` : `${field} must be at least ${min} characters.`;
      if (issue.origin === "array" || issue.origin === "set") return `${field} must have at least ${min} item${min === 1 ? "" : "s"}.`;
      return issue.inclusive ? `${field} must be at least ${min}.` : `${field} must be greater than ${min}.`;
    }
    case "too_big": {
      const max = Number(issue.maximum);
      if (issue.origin === "string") return `${field} must not be greater than ${max} characters.`;
      if (issue.origin === "array" || issue.origin === "set") return `${field} must not have more than ${max} items.`;
      return issue.inclusive ? `${field} must not be greater than ${max}.` : `${field} must be less than ${max}.`;
    }
    case "invalid_format": {
      if (issue.format === "email") return `${field} must be a valid email address.`;
      if (issue.format === "url") return `${field} must be a valid URL.`;
      if (issue.format === "datetime") return `${field} must be an ISO 8601 date-time.`;
      if (issue.format === "date") return `${field} must be a date (YYYY-MM-DD).`;
      return `${field} format is invalid.`;
    }
    case "invalid_value":
      return `The selected ${label(issue.path)} is invalid; allowed: ${issue.values.map((v) => String(v)).join(", ")}.`;
    case "not_multiple_of":
      return `${field} must be a multiple of ${String(issue.divisor)}.`;
    case "custom":
      // A schema that knows what the field must be and leaves the wording with the field's name here (shared/canonicalNumbers.ts).
      return typeof issue.params?.mustBe === "string" ? `${field} must be ${issue.params.mustBe}.` : undefined;
    case "unrecognized_keys":
      return `Unknown field${issue.keys.length === 1 ? "" : "s"}: ${issue.keys.join(", ")}.`;
    default:
      return undefined;
  }
}

z.config({ customError: (issue) => message(issue) });

/** The `errors` map of a 422 body: dotted field path → messages. */
export function fieldErrors(error: ZodError, prefix: readonly PropertyKey[] = []): FieldErrors {
  // Paths hold record keys the client chose; on a plain {} `errors["constructor"] ??= []` would be Object.
  const errors = dict<string[]>();
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) (errors[[...path, key].join(".")] ??= []).push(`The ${key} field is not allowed.`);
      continue;
    }
    const key = path.length ? path.map(String).join(".") : "body";
    (errors[key] ??= []).push(issue.message);
  }
  return errors;
}
