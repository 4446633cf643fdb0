/**
 * SQLite migrations. ALTER TABLE there can only add a plain column at the end (and rename),
 * so every other change rebuilds the table by the procedure of the SQLite manual
 * (lang_altertable.html §7): with foreign keys off, create the new table, copy the rows,
 * drop the old one, rename the new one into place, recreate its indexes, check the keys.
 */
import { createIndexes, createTable } from "../export/tableSql.ts";
import type { Comparison } from "./compare.ts";
import type { ExportWriter } from "../export/writer.ts";
import type { ParsedField, ParsedTable } from "../types.ts";

/** The statements of a SQLite migration. */
export function sqliteMigration(cmp: Comparison, wFrom: ExportWriter, wTo: ExportWriter): string[] {
  const out: string[] = ["PRAGMA foreign_keys = OFF", "BEGIN"];
  for (const table of cmp.removed) out.push(`DROP TABLE ${wFrom.ref(table)}`);
  const added = new Set(cmp.added);
  for (const table of wTo.index.dependencyOrder().filter((t) => added.has(t))) {
    out.push(createTable(wTo, table), ...createIndexes(wTo, table));
  }
  for (const m of cmp.modified) {
    const c = m.changes;
    const onlyAdds = c.removed_columns.length === 0 && c.modified_columns.length === 0 && c.added_constraints.length === 0 && c.removed_constraints.length === 0;
    const addedNames = new Set(c.added_columns);
    const columns = m.to.fields.filter((f) => addedNames.has(f.field_name));
    const appended = columns.every((f) => wTo.position(m.to, f) >= m.to.fields.length - columns.length);
    if (onlyAdds && appended && columns.every((f) => addable(wTo, m.to, f))) {
      for (const f of columns) out.push(`ALTER TABLE ${wTo.ref(m.to)} ADD COLUMN ${wTo.column(m.to, f)}`);
      for (const i of m.removedIndexes) if (i.name) out.push(`DROP INDEX IF EXISTS ${wFrom.q(i.name)}`);
      out.push(...createIndexes(wTo, m.to, m.addedIndexes));
      continue;
    }
    out.push(...rebuild(wTo, m.from, m.to));
  }
  out.push("PRAGMA foreign_key_check", "COMMIT", "PRAGMA foreign_keys = ON");
  return out;
}

/** Whether ALTER TABLE ADD COLUMN can add the column (SQLite's documented restrictions). */
function addable(w: ExportWriter, table: ParsedTable, field: ParsedField): boolean {
  if (table.constraints.some((k) => k.type !== "foreign_key" && k.columns.includes(field.field_name))) return false;
  if (field.computed && field.computed_stored) return false;
  const def = w.column(table, field);
  if (!field.is_nullable && field.default_value === null) return false;
  // the default must be a constant: no CURRENT_TIME/DATE/TIMESTAMP, no parenthesised expression
  return !/DEFAULT (CURRENT_|\()/i.test(def);
}

function rebuild(w: ExportWriter, from: ParsedTable, to: ParsedTable): string[] {
  const temp = w.q(`_sqlddl_new_${to.table_name}`);
  const before = new Set(from.fields.map((g) => g.field_name.toLowerCase()));
  const copied = to.fields.filter((f) => !f.computed && before.has(f.field_name.toLowerCase()));
  const cols = copied.map((f) => w.q(f.field_name)).join(", ");
  return [
    createTable(w, to, temp),
    ...(cols ? [`INSERT INTO ${temp} (${cols}) SELECT ${cols} FROM ${w.ref(to)}`] : []),
    `DROP TABLE ${w.ref(to)}`,
    `ALTER TABLE ${temp} RENAME TO ${w.q(w.exportedName(to).name)}`,
    ...createIndexes(w, to),
  ];
}
