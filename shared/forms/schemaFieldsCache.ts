/**
 * The field maps of parsed schemas (schemaFields.ts), kept per process so that a layout
 * write does not rebuild, send and check every table and field name of a project's schemas
 * on each request.
 *
 * Glossary: a *schema key* names the ready schema rows a form set's placements may use and
 * their row versions, `id:xmin` in id order. Any committed change of a schema row (a new
 * parse, a rename, a raw SQL update) gives it a new xmin, and adding or removing a schema
 * changes the list, so a key read in the same query as the window never maps to fields that
 * are out of date. A map is stored under the key it was read with.
 */
import { LRUCache } from "lru-cache";
import type { FragmentSqlToken } from "slonik";
import { sql } from "../db/pool.ts";
import type { SchemaFields } from "./schemaFields.ts";

/** Field names (and table names) the cache holds at most, over all its maps. */
export const SCHEMA_FIELDS_CACHE_NAMES = 500_000;

const maps = new LRUCache<string, SchemaFields>({
  maxSize: SCHEMA_FIELDS_CACHE_NAMES,
  sizeCalculation: (fields) => {
    let names = 1;
    for (const set of fields.values()) names += 1 + set.size;
    return names;
  },
});

/** The schema key each window was last read with, so that its next read can leave out the tables when they are cached. */
const windowKeys = new LRUCache<number, string>({ max: 10_000 });

/**
 * SQL: the schema key of project `projectId`'s ready schemas (only schema `schemaId` when that
 * is not null); both may be SQL expressions of the caller's query.
 */
export function schemaKeyFragment(projectId: FragmentSqlToken | number, schemaId: FragmentSqlToken | number | null): FragmentSqlToken {
  return sql.fragment`(select coalesce(string_agg(s.id::text || ':' || s.xmin::text, ',' order by s.id), '')
    from schemas s
    where s.project_id = ${projectId} and s.status = 'ready' and s.parsed is not null
      and (${schemaId}::int8 is null or s.id = ${schemaId}))`;
}

/** The key window `windowId` was last read with by this process, if any. */
export function lastSchemaKey(windowId: number): string | null {
  return windowKeys.get(windowId) ?? null;
}

/**
 * Remembers the fields read under `key` (when the read sent them) and returns the fields
 * cached under `key`, if any; window `windowId`'s next read names `key` only while they are.
 */
export function rememberSchemaFields(windowId: number, key: string, fields: SchemaFields | undefined): SchemaFields | undefined {
  if (fields) maps.set(key, fields);
  const cached = fields ?? maps.get(key);
  if (cached) windowKeys.set(windowId, key);
  else windowKeys.delete(windowId);
  return cached;
}

/** The fields cached under schema key `key`, if any. */
export function cachedSchemaFields(key: string): SchemaFields | undefined {
  return maps.get(key);
}
