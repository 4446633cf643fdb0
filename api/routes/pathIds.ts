/**
 * Numeric path parameters (ids) are read in their canonical decimal form only. zod's coercion
 * reads `Number(text)`, which also takes " 1", "1.0", "+1", "1e0", "0x1" and "01", so one
 * resource answered at many addresses and a malformed id could reach a real resource. Any
 * other form is a malformed id, answered 404 like every malformed id (docs/decisions.md).
 */
import { z, type ZodType } from "zod";
import { wholeDigits } from "../../shared/canonicalNumbers.ts";

/** The names of the numeric parameters of a route's params schema. */
export function numericParamNames(schema: ZodType | undefined): string[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, ZodType>)
    .filter(([, field]) => field instanceof z.ZodNumber)
    .map(([name]) => name);
}

/** Whether every named parameter present in `raw` is written as a plain decimal number. */
export function canonicalIds(names: readonly string[], raw: Readonly<Record<string, string | undefined>>): boolean {
  for (const name of names) {
    const value = raw[name];
    if (value !== undefined && !wholeDigits.test(value)) return false;
  }
  return true;
}
