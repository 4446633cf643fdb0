/**
 * Numbers that arrive as text (query parameters, and the id fields of JSON bodies that also
 * take an id as a string) are read in their canonical decimal form only. zod's coercion reads
 * `Number(text)`, which also takes "1e2" (100), "0x10" (16), " 2", "+2", "02" and "" (0), so a
 * malformed value passed as some other number. Anything else is a 422 on its field, as path
 * ids are 404 (routes/pathIds.ts). A JSON number is taken as it is.
 *
 * The schemas are preprocessing pipes into `z.number()`, so the OpenAPI document still shows
 * each field as an integer or number with its bounds, and `.optional()` and `.default()` work
 * on them as on any schema.
 */
import { z } from "zod";

/** `0` or digits without a leading zero. */
const wholeDigits = /^(?:0|[1-9][0-9]*)$/;
/** A whole number in digits, with an optional fraction after a point (`0.5`, `12.50`). */
const decimalDigits = /^(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;

/** The bounds of a number field, and the value an absent field takes. */
export interface NumberBounds {
  min: number;
  /** Whole numbers are kept within the safe integer range without one. */
  max?: number;
  /** Given here, not by `.default()` on the result, so that the OpenAPI document shows it. */
  default?: number;
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

/** `base` with the bounds and default applied (a pipe's outer `.default()` is lost from the document). */
function bounded(base: z.ZodNumber, bounds: NumberBounds): z.ZodType<number> {
  let schema = base.min(bounds.min);
  if (bounds.max !== undefined) schema = schema.max(bounds.max);
  return bounds.default === undefined ? schema : schema.default(bounds.default);
}

const wholeText = "a whole number written in digits (such as 2)";
const decimalText = "a number written in digits, with an optional fraction after a point (such as 4.50)";

/** A whole number, written `0` or as digits without a leading zero (not `1e2`, `0x10`, `+2`, `02`, ` 2` or ``). */
export const wholeNumber = (bounds: NumberBounds) => z.preprocess(fromDigits(wholeDigits, wholeText), bounded(z.number().int(), bounds));

/** An id: a whole number from 1 up. */
export const idNumber = () => wholeNumber({ min: 1 });

/** A number in digits with an optional fraction (`12`, `0.5`; not `.5`, `5.`, `1e3` or `012`). */
export const decimalNumber = (bounds: NumberBounds & { max: number }) => z.preprocess(fromDigits(decimalDigits, decimalText), bounded(z.number(), bounds));
