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

/** Refuses a body nested deeper than MAX_BODY_DEPTH with a 422 on the field that does. @throws AppError */
export function refuseDeepBody(body: unknown): void {
  const field = tooDeepField(body);
  if (field !== null) throw invalidField(field, `The value is nested deeper than ${MAX_BODY_DEPTH} levels of objects and arrays.`);
}
