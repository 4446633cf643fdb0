/**
 * Numbers that arrive as text (query parameters, form fields, and the ids and config numbers a
 * JSON body may also give as a string) are read in their canonical decimal form only. zod's
 * coercion reads `Number(text)`, which also takes "1e2" (100), "0x10" (16), " 2", "+2", "02"
 * and "" (0), so a malformed value passed as some other number. Anything else is a 422 on its
 * field, as a malformed path id is a 404 (api/routes/pathIds.ts). A JSON number is taken as it is.
 *
 * The schemas are preprocessing pipes into `z.number()`, so the OpenAPI document still shows
 * each field as an integer or number with its bounds; `.optional()` works on them as on any
 * schema, and a default is given in the bounds.
 */
import { z } from "zod";

/** `0` or digits without a leading zero: a whole number's one written form (path ids use it too). */
export const wholeDigits = /^(?:0|[1-9][0-9]*)$/;
/** A whole number in digits, with an optional fraction after a point (`0.5`, `12.50`). */
const decimalDigits = /^(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;

/** The bounds of a number field. */
export interface NumberBounds {
  min: number;
  /** Whole numbers are kept within the safe integer range without one. */
  max?: number;
}

/** Bounds with the value an absent field takes. */
export interface DefaultedBounds extends NumberBounds {
  /** Given here, not by `.default()` on the result, so that the OpenAPI document shows it. */
  default: number;
}

/**
 * Reads canonical digit text as its number and answers other text with an issue whose
 * message shared/validation.ts words with the field's name (`The page field must be …`).
 */
const fromDigits = (pattern: RegExp, expected: string) => (value: unknown, ctx: z.core.$RefinementCtx) => {
  // A JSON number, an absent field and null are left to z.number's own checks and messages.
  if (typeof value === "number" || value === undefined || value === null) return value;
  if (typeof value !== "string" || !pattern.test(value)) {
    ctx.addIssue({ code: "custom", input: value, params: { mustBe: expected } });
    return value;
  }
  // Hundreds of digits read as Infinity, which z.number refuses as "not a number": the bound says it better.
  const number = Number(value);
  return Number.isFinite(number) ? number : Number.MAX_VALUE;
};

const bounded = (base: z.ZodNumber, bounds: NumberBounds) => (bounds.max === undefined ? base.min(bounds.min) : base.min(bounds.min).max(bounds.max));

const plain = (pattern: RegExp, expected: string, number: z.ZodNumber) => z.preprocess(fromDigits(pattern, expected), number);

/**
 * The outer default makes the field optional to zod (its types and its parse); the inner one
 * is what the OpenAPI document shows, since zod's JSON Schema drops a default around a pipe.
 */
const defaulted = (pattern: RegExp, expected: string, number: z.ZodNumber, value: number) => z.preprocess(fromDigits(pattern, expected), number.default(value)).default(value);

const wholeText = "a whole number written in digits (such as 2)";
const decimalText = "a number written in digits, with an optional fraction after a point (such as 4.50)";

/** A whole number, written `0` or as digits without a leading zero (not `1e2`, `0x10`, `+2`, `02`, ` 2` or ``). */
export function wholeNumber(bounds: DefaultedBounds): ReturnType<typeof defaulted>;
export function wholeNumber(bounds: NumberBounds): ReturnType<typeof plain>;
export function wholeNumber(bounds: NumberBounds & { default?: number }) {
  const number = bounded(z.number().int(), bounds);
  return bounds.default === undefined ? plain(wholeDigits, wholeText, number) : defaulted(wholeDigits, wholeText, number, bounds.default);
}

/** An id: a whole number from 1 up. */
export const idNumber = () => wholeNumber({ min: 1 });

/** A number in digits with an optional fraction (`12`, `0.5`; not `.5`, `5.`, `1e3` or `012`). */
export const decimalNumber = (bounds: NumberBounds & { max: number }) => plain(decimalDigits, decimalText, bounded(z.number(), bounds));
