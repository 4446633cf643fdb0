/**
 * Variable values: checking a value against a variable's type, and merging the layers a
 * run's scope is made of (declared defaults < values saved in the project < the
 * generator's values < the request's values).
 *
 * Names that no variable declares pass through unchecked: a template may read any value
 * it is given (the spec's execute example sends a class name and a property list).
 */
import { dict, own } from "../dict.ts";
import type { FieldErrors } from "../errors.ts";
import type { VariableType } from "./store.ts";

/** What checking needs of a variable. */
export interface VariableSpec {
  name: string;
  type: VariableType;
  required: boolean;
  default_value: unknown;
}

const typeWords: Record<VariableType, string> = {
  string: "a string",
  number: "a number",
  boolean: "true or false",
  list: "a list (JSON array)",
  object: "an object (JSON object)",
  schema: "the id of a schema of this project",
};

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether `value` (not null) fits `type`; a schema id may be an integer or a string of digits. */
export function fitsType(type: VariableType, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "list":
      return Array.isArray(value);
    case "object":
      return isPlainObject(value);
    case "schema":
      return schemaIdOf(value) !== null;
  }
}

/** The schema id a `schema` variable's value names, or null. */
export function schemaIdOf(value: unknown): number | null {
  const id = typeof value === "string" && /^\d{1,15}$/.test(value) ? Number(value) : value;
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? id : null;
}

/** The message for a value of the wrong type. */
export const typeMessage = (name: string, type: VariableType) => `The ${name} variable must be ${typeWords[type]}.`;

/** Checks a default value for a variable of `type`; returns a message or null. */
export function checkDefault(type: VariableType, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (type === "schema") return "A schema variable has no default value; pick the schema when running the template.";
  return fitsType(type, value) ? null : `The default value must be ${typeWords[type]}.`;
}

/** Checks values to be saved (types only; nothing is required). */
export function checkSavedValues(variables: readonly VariableSpec[], values: Record<string, unknown>): FieldErrors {
  // Variable names are the author's (`constructor`, `__proto__` are valid names): read own values only, key errors without a prototype.
  const errors = dict<string[]>();
  for (const variable of variables) {
    const value = own(values, variable.name);
    if (value !== undefined && value !== null && !fitsType(variable.type, value)) errors[variable.name] = [typeMessage(variable.name, variable.type)];
  }
  return errors;
}

export interface MergedValues {
  /** The values of the run by name (schema variables still hold the schema id). */
  values: Record<string, unknown>;
  /** Problems: errors in execute mode, warnings in preview mode. */
  problems: FieldErrors;
}

/**
 * Merges the layers (later wins; `undefined` leaves a name to the layer below) and checks
 * the declared variables: a required variable without a value, or a value of the wrong
 * type, is a problem. In lenient mode (preview) a value of the wrong type is dropped.
 */
export function mergeValues(variables: readonly VariableSpec[], layers: readonly Record<string, unknown>[], lenient: boolean): MergedValues {
  // Keyed by names from templates and requests: no prototype, so `__proto__` is a value like any other and `constructor` is not pre-filled.
  const values = dict<unknown>();
  for (const variable of variables) {
    if (variable.default_value !== null && variable.default_value !== undefined) values[variable.name] = variable.default_value;
  }
  for (const layer of layers) {
    for (const [name, value] of Object.entries(layer)) if (value !== undefined) values[name] = value;
  }
  const problems = dict<string[]>();
  for (const variable of variables) {
    const value = values[variable.name];
    if (value === undefined || value === null || value === "") {
      if (variable.required) problems[variable.name] = [`The ${variable.name} variable is required.`];
      continue;
    }
    if (!fitsType(variable.type, value)) {
      problems[variable.name] = [typeMessage(variable.name, variable.type)];
      if (lenient) delete values[variable.name];
    }
  }
  return { values, problems };
}
