/**
 * How deeply a parsed JSON value nests objects and arrays, counted without recursion. Code
 * that walks a value recursively (zod's JSON schema, serialising, copying) overflows the stack
 * a few thousand levels down, so JSON that arrives from outside is held to MAX_JSON_DEPTH:
 * request bodies (api/middleware/bodyDepth.ts) and JSON read from uploaded files.
 */

/** Deepest nesting of objects and arrays a value may have; the value itself is level 1. */
export const MAX_JSON_DEPTH = 64;

/**
 * The top-level field under which `value` nests deeper than `max` levels ("body" when the
 * body itself does), or null. Walks without recursion, so no depth can overflow it.
 */
export function tooDeepField(value: unknown, max = MAX_JSON_DEPTH): string | null {
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
