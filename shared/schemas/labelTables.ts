/**
 * Which table a label's `table_name` means. Labels are keyed by the table's qualified name
 * (`public.users`), as the automatic translation and the export key it; a bare name
 * (`users`) means the one table of that name, when only one has it.
 */
import type { ParsedSchema, ParsedTable } from "../sqlddl/index.ts";
import { qualifiedName } from "./store.ts";

/** The tables `name` means in `parsed`: those whose qualified name it is, else those of that bare name. */
export function tablesNamed(parsed: Pick<ParsedSchema, "tables">, name: string): ParsedTable[] {
  const exact = parsed.tables.filter((t) => qualifiedName(t) === name);
  return exact.length > 0 ? exact : parsed.tables.filter((t) => t.table_name === name);
}

/** The key a label for `name` is kept under: the one table's qualified name, or null when `name` means none or several. */
export function labelKey(parsed: Pick<ParsedSchema, "tables">, name: string): string | null {
  const names = new Set(tablesNamed(parsed, name).map(qualifiedName));
  return names.size === 1 ? [...names][0]! : null;
}
