/**
 * A column's type written for a target dialect. Into its own dialect a type is written as
 * parsed (its spelling, sizes, enum values, arrays, user type); into another dialect it
 * goes through its kind (typeKinds.ts) to the closest type the target has, within the
 * target's limits (MySQL keys cannot be TEXT, SQL Server keys cannot be (max), Firebird
 * NUMERIC stops at 18 digits).
 */
import { literal } from "./names.ts";
import { typeKind, type Kind } from "./typeKinds.ts";
import type { Dialect, ParsedField } from "../types.ts";

/** Where the column is used, which decides between types the target cannot key on. */
export interface TypeContext {
  /** The column is part of a key or index. */
  keyed: boolean;
  /** Write `type_name` (a domain/enum the export creates, or a qualified extension type). */
  useTypeName: boolean;
}

/** The type as written in its own dialect. */
export function writtenType(dialect: Dialect, field: ParsedField, useTypeName: boolean): string {
  if (useTypeName && field.type_name) return withSize(field.type_name, field);
  let name = field.field_type;
  if (dialect === "MySQL" && (name === "enum" || name === "set") && field.enum_values) {
    name = `${name}(${field.enum_values.map((v) => literal(dialect, v)).join(",")})`;
  } else name = withSize(name, field);
  if (field.is_unsigned && dialect === "MySQL") name += " unsigned";
  if (field.charset && dialect === "MySQL") name += ` character set ${field.charset}`;
  if (dialect === "PostgreSQL") name += "[]".repeat(field.array_dimensions ?? 0);
  return name;
}

function withSize(name: string, field: ParsedField): string {
  if (field.length === null) return name;
  const size = field.length === -1 ? "(max)" : field.scale !== null ? `(${field.length},${field.scale})` : `(${field.length})`;
  // PostgreSQL writes the precision before the time-zone words: timestamp(3) with time zone
  const zone = /^(timestamp|time)( with(out)? time zone)$/.exec(name);
  return zone ? `${zone[1]}${size}${zone[2]}` : `${name}${size}`;
}

/** The type for `target` of a field parsed in `source`. */
export function renderType(target: Dialect, source: Dialect, field: ParsedField, context: TypeContext): string {
  if (target === source) return writtenType(source, field, context.useTypeName);
  const k = typeKind(source, field);
  const length = k.length;
  const sized = (name: string, max: number, fallback: string) => (length !== null && length > 0 && length <= max ? `${name}(${length})` : fallback);
  const decimal = (name: string, maxPrecision: number) =>
    k.length === null ? name : `${name}(${Math.min(k.length, maxPrecision)},${Math.min(k.scale ?? 0, maxPrecision)})`;
  const enumLength = Math.max(1, ...(field.enum_values ?? []).map((v) => v.length));
  switch (target) {
    case "PostgreSQL":
      return pick(k.kind, {
        tinyint: "smallint", smallint: "smallint", mediumint: "integer", int: "integer", bigint: "bigint", decimal: decimal("numeric", 1000),
        real: "real", double: "double precision", boolean: "boolean", bit: `bit(${length ?? 1})`, char: `character(${length ?? 1})`,
        varchar: sized("character varying", 10485760, "character varying"), text: "text", binary: "bytea", varbinary: "bytea", blob: "bytea",
        date: "date", time: "time without time zone", datetime: "timestamp without time zone", timestamptz: "timestamp with time zone",
        interval: "interval", year: "smallint", uuid: "uuid", json: "jsonb", xml: "xml", enum: `character varying(${enumLength})`,
        set: "character varying(255)", money: "numeric(19,4)", other: "text",
      });
    case "MySQL":
      return pick(k.kind, {
        tinyint: "tinyint", smallint: "smallint", mediumint: "mediumint", int: "int", bigint: "bigint", decimal: decimal("decimal", 65),
        real: "float", double: "double", boolean: "tinyint(1)", bit: `bit(${Math.min(length ?? 1, 64)})`, char: sized("char", 255, "varchar(255)"),
        varchar: sized("varchar", 16383, context.keyed ? "varchar(255)" : "text"), text: context.keyed ? "varchar(255)" : "longtext",
        binary: sized("binary", 255, "varbinary(255)"), varbinary: sized("varbinary", 65535, context.keyed ? "varbinary(255)" : "longblob"),
        blob: context.keyed ? "varbinary(255)" : "longblob", date: "date", time: "time", datetime: "datetime", timestamptz: "datetime",
        interval: "varchar(64)", year: "year", uuid: "char(36)", json: "json", xml: "longtext",
        enum: field.enum_values ? `enum(${field.enum_values.map((v) => literal(target, v)).join(",")})` : "varchar(255)",
        set: field.enum_values ? `set(${field.enum_values.map((v) => literal(target, v)).join(",")})` : "varchar(255)",
        money: "decimal(19,4)", other: context.keyed ? "varchar(255)" : "longtext",
      });
    case "SQLite":
      return pick(k.kind, {
        tinyint: "TINYINT", smallint: "SMALLINT", mediumint: "MEDIUMINT", int: "INTEGER", bigint: "BIGINT", decimal: decimal("NUMERIC", 1000),
        real: "REAL", double: "DOUBLE", boolean: "BOOLEAN", bit: "INTEGER", char: `CHAR(${length ?? 1})`, varchar: sized("VARCHAR", 1e9, "VARCHAR"),
        text: "TEXT", binary: "BLOB", varbinary: "BLOB", blob: "BLOB", date: "DATE", time: "TIME", datetime: "DATETIME", timestamptz: "TIMESTAMP",
        interval: "TEXT", year: "SMALLINT", uuid: "CHAR(36)", json: "JSON", xml: "TEXT", enum: `VARCHAR(${enumLength})`, set: "VARCHAR(255)",
        money: "NUMERIC(19,4)", other: "TEXT",
      });
    case "MSSQL":
      return pick(k.kind, {
        tinyint: "smallint", smallint: "smallint", mediumint: "int", int: "int", bigint: "bigint", decimal: decimal("decimal", 38), real: "real",
        double: "float", boolean: "bit", bit: `binary(${Math.ceil((length ?? 1) / 8)})`, char: sized("nchar", 4000, "nvarchar(max)"),
        varchar: sized("nvarchar", 4000, context.keyed ? "nvarchar(450)" : "nvarchar(max)"), text: context.keyed ? "nvarchar(450)" : "nvarchar(max)",
        binary: sized("binary", 8000, "varbinary(max)"), varbinary: sized("varbinary", 8000, context.keyed ? "varbinary(900)" : "varbinary(max)"),
        blob: context.keyed ? "varbinary(900)" : "varbinary(max)", date: "date", time: "time", datetime: "datetime2", timestamptz: "datetimeoffset",
        interval: "varchar(64)", year: "smallint", uuid: "uniqueidentifier", json: "nvarchar(max)", xml: "xml", enum: `nvarchar(${enumLength})`,
        set: "nvarchar(255)", money: "money", other: context.keyed ? "nvarchar(450)" : "nvarchar(max)",
      });
    case "Firebird":
      return pick(k.kind, {
        tinyint: "smallint", smallint: "smallint", mediumint: "integer", int: "integer", bigint: "bigint", decimal: decimal("numeric", 18),
        real: "float", double: "double precision", boolean: "boolean", bit: "integer", char: sized("char", 8191, "blob sub_type text"),
        varchar: sized("varchar", 8191, context.keyed ? "varchar(255)" : "blob sub_type text"), text: context.keyed ? "varchar(255)" : "blob sub_type text",
        binary: sized("char", 32767, "blob sub_type binary") + (length ? " character set octets" : ""), varbinary: "blob sub_type binary",
        blob: "blob sub_type binary", date: "date", time: "time", datetime: "timestamp", timestamptz: "timestamp", interval: "varchar(64)",
        year: "smallint", uuid: "char(36)", json: "blob sub_type text", xml: "blob sub_type text", enum: `varchar(${enumLength})`,
        set: "varchar(255)", money: "numeric(18,4)", other: context.keyed ? "varchar(255)" : "blob sub_type text",
      });
  }
}

function pick(kind: Kind, table: Record<Kind, string>): string {
  return table[kind];
}

/** Whether the kind is an integer the target can auto-increment. */
export function isIntegerKind(kind: Kind): boolean {
  return kind === "tinyint" || kind === "smallint" || kind === "mediumint" || kind === "int" || kind === "bigint";
}
