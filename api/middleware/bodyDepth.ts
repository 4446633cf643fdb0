/**
 * A bound on how deeply a request body may nest objects and arrays, checked once where
 * bodies are parsed, for every route. JSON.parse itself reads any depth, but code after it
 * that walks a value recursively (serialising a bundle, validating a template value, copying
 * a layout) overflowed the stack on a body nested a few thousand levels deep and answered 500.
 */
import { invalidField } from "../../shared/errors.ts";

/** Deepest nesting of objects and arrays a body may have; the body itself is level 1. */
export const MAX_BODY_DEPTH = 64;

/**
 * The top-level field under which `value` nests deeper than `max` levels ("body" when the
 * body itself does), or null. Walks without recursion, so no depth can overflow it.
 */
export function tooDeepField(value: unknown, max = MAX_BODY_DEPTH): string | null {
  const stack: { value: unknown; depth: number; field: string }[] = [{ value, depth: 1, field: "body" }];
  while (stack.length > 0) {
    const { value: node, depth, field } = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth > max) return field;
    const top = depth === 1 && !Array.isArray(node);
    for (const key in node) {
      const item: unknown = (node as Record<string, unknown>)[key];
      if (item !== null && typeof item === "object" && Object.hasOwn(node, key)) stack.push({ value: item, depth: depth + 1, field: top ? key : field });
    }
  }
  return null;
}

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * The deepest nesting of objects and arrays in JSON text `text` (0 for a scalar): the same
 * count as `tooDeepField` makes on the parsed value, taken from the text in one pass without
 * allocating, so a body within the bound (nearly all) needs no walk of its parsed value.
 * Brackets inside strings do not count; `text` must be valid JSON (it parsed).
 */
export function jsonTextDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: to the next quote that no backslash escapes.
      for (i += 1; i < text.length && text.charCodeAt(i) !== QUOTE; i += 1) if (text.charCodeAt(i) === BACKSLASH) i += 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth -= 1;
  }
  return deepest;
}

/** Refuses a body nested deeper than MAX_BODY_DEPTH with a 422 on the field that does. @throws AppError */
export function refuseDeepBody(body: unknown): void {
  const field = tooDeepField(body);
  if (field !== null) throw invalidField(field, `The value is nested deeper than ${MAX_BODY_DEPTH} levels of objects and arrays.`);
}
