/**
 * A bound on how deeply a request body may nest objects and arrays, checked once where
 * bodies are parsed, for every route. JSON.parse itself reads any depth, but code after it
 * that walks a value recursively (serialising a bundle, validating a template value, copying
 * a layout) overflowed the stack on a body nested a few thousand levels deep and answered 500.
 * The counting itself is shared/jsonDepth.ts (uploaded JSON files are held to it too).
 */
import { invalidField } from "../../shared/errors.ts";
import { jsonTextDepth, MAX_JSON_DEPTH, tooDeepField } from "../../shared/jsonDepth.ts";

export { jsonTextDepth, tooDeepField };

/** Deepest nesting of objects and arrays a body may have; the body itself is level 1. */
export const MAX_BODY_DEPTH = MAX_JSON_DEPTH;

/** Refuses a body nested deeper than MAX_BODY_DEPTH with a 422 on the field that does. @throws AppError */
export function refuseDeepBody(body: unknown): void {
  const field = tooDeepField(body);
  if (field !== null) throw invalidField(field, `The value is nested deeper than ${MAX_BODY_DEPTH} levels of objects and arrays.`);
}
