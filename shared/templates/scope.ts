/**
 * The scope of a run: merged variable values with every `schema` variable's id replaced
 * by the parsed schema it names (DESIGN §9: `tables` with `fields` and `constraints`, plus
 * the schema's `id`, `name` and `database_type`).
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { dict } from "../dict.ts";
import type { FieldErrors } from "../errors.ts";
import { mergeValues, schemaIdOf, type VariableSpec } from "./values.ts";

const schemaRow = z.object({ id: z.number(), name: z.string(), database_type: z.string(), parsed: z.record(z.string(), z.unknown()) });

/** The parsed form of a ready schema of the project as a template sees it, or null. */
export async function loadSchemaInput(conn: CommonQueryMethods, projectId: number, schemaId: number): Promise<Record<string, unknown> | null> {
  const row = await conn.maybeOne(sql.type(schemaRow)`
    select id, name, database_type, parsed from schemas
    where id = ${schemaId} and project_id = ${projectId} and status = 'ready' and parsed is not null`);
  if (!row) return null;
  return { ...row.parsed, id: row.id, name: row.name, database_type: row.database_type };
}

export interface ScopeResult {
  scope: Record<string, unknown>;
  /** Errors (execute) or warnings (preview), keyed by variable name. */
  problems: FieldErrors;
  /** The first schema a schema variable resolved to (recorded with a generation). */
  schemaId: number | null;
  /** The values as given, schema ids unresolved (recorded with a generation). */
  values: Record<string, unknown>;
}

/**
 * Builds the scope of one template's run in project `projectId` from `layers` (lowest
 * first). Schema variables resolve to ready schemas of the same project only.
 */
export async function buildScope(
  conn: CommonQueryMethods,
  projectId: number,
  variables: readonly VariableSpec[],
  layers: readonly Record<string, unknown>[],
  lenient: boolean,
): Promise<ScopeResult> {
  const { values, problems } = mergeValues(variables, layers, lenient);
  // Prototype-less like `values`: a schema variable named `__proto__` must be an entry, not the scope's prototype.
  const scope = Object.assign(dict<unknown>(), values);
  let schemaId: number | null = null;
  for (const variable of variables) {
    if (variable.type !== "schema" || problems[variable.name]) continue;
    const id = schemaIdOf(values[variable.name]);
    if (id === null) continue;
    const input = await loadSchemaInput(conn, projectId, id);
    if (!input) {
      problems[variable.name] = [`Schema ${id} is not a parsed schema of this project.`];
      if (lenient) delete scope[variable.name];
      continue;
    }
    scope[variable.name] = input;
    schemaId ??= id;
  }
  return { scope, problems, schemaId, values };
}
