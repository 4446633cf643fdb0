/**
 * Column and key changes as ALTER TABLE statements of PostgreSQL, MySQL, SQL Server and
 * Firebird (SQLite rebuilds instead). New columns and keys are written as the export
 * writes them; a changed column is restated whole in MySQL (MODIFY) and changed attribute
 * by attribute elsewhere.
 */
import { mssqlDropDefault } from "./dropSql.ts";
import { renderDefault } from "../export/defaults.ts";
import { foreignKeyClause } from "../export/tableSql.ts";
import type { ColumnChange } from "./compare.ts";
import type { ExportWriter } from "../export/writer.ts";
import type { ParsedConstraint, ParsedField, ParsedTable } from "../types.ts";

/** ADD COLUMN, placed where the new definition has it when the engine can (MySQL). */
export function addColumn(w: ExportWriter, table: ParsedTable, field: ParsedField): string[] {
  const ref = w.ref(table);
  const position = w.position(table, field);
  const after = position === 0 ? " FIRST" : ` AFTER ${w.q(table.fields[position - 1]!.field_name)}`;
  switch (w.target) {
    case "MySQL":
      return [`ALTER TABLE ${ref} ADD COLUMN ${w.column(table, field)}${after}`];
    case "MSSQL":
    case "Firebird":
      return [`ALTER TABLE ${ref} ADD ${w.column(table, field)}`];
    default:
      return [`ALTER TABLE ${ref} ADD COLUMN ${w.column(table, field)}`];
  }
}

/** DROP COLUMN (T-SQL drops the column's default constraint first). */
export function dropColumn(w: ExportWriter, table: ParsedTable, name: string): string[] {
  const ref = w.ref(table);
  if (w.target === "MSSQL") return [mssqlDropDefault(w, table, name), `ALTER TABLE ${ref} DROP COLUMN ${w.q(name)}`];
  if (w.target === "Firebird") return [`ALTER TABLE ${ref} DROP ${w.q(name)}`];
  return [`ALTER TABLE ${ref} DROP COLUMN ${w.q(name)}`];
}

/**
 * A changed column. Turning auto-increment on is left to `enableAutoIncrement`, which runs
 * after keys are added (MySQL needs the column indexed first).
 */
export function modifyColumn(w: ExportWriter, table: ParsedTable, field: ParsedField, change: ColumnChange): string[] {
  const ref = w.ref(table);
  const col = w.q(field.field_name);
  const c = change.changes;
  const def = renderDefault(w.target, w.source, field).sql;
  switch (w.target) {
    case "MySQL": {
      const enabling = c.is_auto_increment?.to === true;
      const text = w.column(table, field);
      return [`ALTER TABLE ${ref} MODIFY COLUMN ${enabling ? text.replace(/ AUTO_INCREMENT$/, "") : text}`];
    }
    case "PostgreSQL": {
      const out: string[] = [];
      if (c.is_auto_increment?.to === false) {
        // an identity column loses its identity; a serial one its sequence default
        out.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} DROP IDENTITY IF EXISTS`, `ALTER TABLE ${ref} ALTER COLUMN ${col} DROP DEFAULT`);
      }
      // an identity column has no default to drop or set
      const identity = w.isAutoIncrement(table, field) && !c.is_auto_increment;
      if (c.type) {
        const type = w.baseType(table, field);
        if (!identity) out.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} DROP DEFAULT`); // the old default may not cast
        out.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} TYPE ${type} USING ${col}::${type}`);
      }
      if ((c.default_value || c.type) && !identity) {
        if (def !== null) out.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} SET DEFAULT ${def}`);
        else if (!c.type) out.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} DROP DEFAULT`);
      }
      if (c.is_nullable) out.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} ${field.is_nullable ? "DROP" : "SET"} NOT NULL`);
      return out;
    }
    case "MSSQL": {
      const out: string[] = [];
      if (c.default_value || c.type) out.push(mssqlDropDefault(w, table, field.field_name));
      if (c.type || c.is_nullable) out.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} ${w.baseType(table, field)} ${field.is_nullable ? "NULL" : "NOT NULL"}`);
      if ((c.default_value || c.type) && def !== null) out.push(`ALTER TABLE ${ref} ADD DEFAULT ${def} FOR ${col}`);
      if (c.is_auto_increment) out.push(`-- ${table.table_name}.${field.field_name}: SQL Server cannot add or remove IDENTITY in place; rebuild the table by hand`);
      return out;
    }
    case "Firebird": {
      const out: string[] = [];
      if (c.type) out.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} TYPE ${w.baseType(table, field)}`);
      if (c.default_value) out.push(def === null ? `ALTER TABLE ${ref} ALTER COLUMN ${col} DROP DEFAULT` : `ALTER TABLE ${ref} ALTER COLUMN ${col} SET DEFAULT ${def}`);
      if (c.is_nullable) out.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} ${field.is_nullable ? "DROP" : "SET"} NOT NULL`);
      if (c.is_auto_increment) out.push(`-- ${table.table_name}.${field.field_name}: Firebird cannot add or remove an identity in place; rebuild the table by hand`);
      return out;
    }
    default:
      return [];
  }
}

/** Turns auto-increment on for a column that already exists. */
export function enableAutoIncrement(w: ExportWriter, table: ParsedTable, field: ParsedField): string[] {
  if (!w.isAutoIncrement(table, field)) return [];
  if (w.target === "MySQL") return [`ALTER TABLE ${w.ref(table)} MODIFY COLUMN ${w.column(table, field)}`];
  if (w.target === "PostgreSQL") {
    const col = w.q(field.field_name);
    if (w.serial(table, field)) {
      // serial is a sequence owned by the column and drawn by its default
      const { schema, name } = w.exportedName(table);
      const seq = `${schema ? `${w.q(schema)}.` : ""}${w.q(`${name}_${field.field_name}_seq`)}`;
      return [
        `CREATE SEQUENCE ${seq} OWNED BY ${w.ref(table)}.${col}`,
        `ALTER TABLE ${w.ref(table)} ALTER COLUMN ${col} SET DEFAULT nextval('${seq.replace(/'/g, "''")}'::regclass)`,
        `ALTER TABLE ${w.ref(table)} ALTER COLUMN ${col} SET NOT NULL`,
      ];
    }
    return [
      `ALTER TABLE ${w.ref(table)} ALTER COLUMN ${col} DROP DEFAULT`,
      `ALTER TABLE ${w.ref(table)} ALTER COLUMN ${col} SET NOT NULL`,
      `ALTER TABLE ${w.ref(table)} ALTER COLUMN ${col} ADD GENERATED ${field.identity === "always" ? "ALWAYS" : "BY DEFAULT"} AS IDENTITY`,
    ];
  }
  return [];
}

/** ADD PRIMARY KEY / UNIQUE / FOREIGN KEY. */
export function addConstraint(w: ExportWriter, table: ParsedTable, k: ParsedConstraint): string[] {
  const ref = w.ref(table);
  if (k.type === "foreign_key") return foreignKeyClause(w, table, k).map((clause) => `ALTER TABLE ${ref} ADD ${clause}`);
  const name = k.name && !(w.target === "MySQL" && k.type === "primary_key") ? `CONSTRAINT ${w.q(w.names.take(k.name))} ` : "";
  const parts = k.columns
    .map((c) => {
      const field = w.field(table, c);
      return `${w.q(c)}${w.target === "MySQL" && field && /^(tiny|medium|long)?(text|blob)$/i.test(w.type(table, field)) ? "(255)" : ""}`;
    })
    .join(", ");
  return [`ALTER TABLE ${ref} ADD ${name}${k.type === "primary_key" ? "PRIMARY KEY" : "UNIQUE"} (${parts})`];
}
