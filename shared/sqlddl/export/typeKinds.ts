/**
 * Type kinds: what a column's type means independent of spelling, so that a type written
 * in one dialect can be written in another (and two spellings compared). Each dialect's
 * names map to a kind; SQLite's free-form names go by its type-affinity rules.
 */
import type { Dialect, ParsedField } from "../types.ts";

/** The meaning of a type, independent of dialect. */
export type Kind =
  | "tinyint" | "smallint" | "mediumint" | "int" | "bigint" | "decimal" | "real" | "double" | "boolean" | "bit"
  | "char" | "varchar" | "text" | "binary" | "varbinary" | "blob" | "date" | "time" | "datetime" | "timestamptz"
  | "interval" | "year" | "uuid" | "json" | "xml" | "enum" | "set" | "money" | "other";

/** A type's meaning: kind plus the sizes that matter for it. */
export interface TypeKind {
  kind: Kind;
  length: number | null;
  scale: number | null;
}

const COMMON: Record<string, Kind> = {
  tinyint: "tinyint", int1: "tinyint", smallint: "smallint", int2: "smallint", mediumint: "mediumint", int3: "mediumint", middleint: "mediumint",
  int: "int", integer: "int", int4: "int", bigint: "bigint", int8: "bigint", decimal: "decimal", numeric: "decimal", dec: "decimal",
  fixed: "decimal", number: "decimal", real: "real", float4: "real", "double precision": "double", double: "double", float8: "double",
  boolean: "boolean", bool: "boolean", bit: "bit", "bit varying": "bit", varbit: "bit", char: "char", character: "char", nchar: "char",
  "national char": "char", "national character": "char", bpchar: "char", varchar: "varchar", "character varying": "varchar",
  nvarchar: "varchar", "national varchar": "varchar", "national character varying": "varchar", "national char varying": "varchar",
  "char varying": "varchar", varchar2: "varchar", nvarchar2: "varchar", "varying character": "varchar", "native character": "char",
  text: "text", ntext: "text", tinytext: "text", mediumtext: "text", longtext: "text", clob: "text", nclob: "text", citext: "text",
  "long varchar": "text", long: "text", "blob sub_type text": "text", string: "text", binary: "binary", varbinary: "varbinary",
  blob: "blob", tinyblob: "blob", mediumblob: "blob", longblob: "blob", bytea: "blob", image: "blob", "long varbinary": "blob",
  raw: "varbinary", date: "date", time: "time", "time without time zone": "time", "time with time zone": "time", timetz: "time",
  datetime: "datetime", datetime2: "datetime", smalldatetime: "datetime", "timestamp without time zone": "datetime",
  "timestamp with time zone": "timestamptz", timestamptz: "timestamptz", datetimeoffset: "timestamptz", interval: "interval",
  year: "year", uuid: "uuid", uniqueidentifier: "uuid", json: "json", jsonb: "json", xml: "xml", enum: "enum", set: "set",
  money: "money", smallmoney: "money", rowversion: "binary",
};

const UNSIZED = new Set<Kind>(["tinyint", "smallint", "mediumint", "int", "bigint", "real", "double", "boolean", "text", "blob", "date", "interval", "year", "uuid", "json", "xml", "enum", "set", "money"]);

/** What `field`, written in `dialect`, means; sizes normalised (display widths dropped, `char` = `char(1)`). */
export function typeKind(dialect: Dialect, field: Pick<ParsedField, "field_type" | "length" | "scale">): TypeKind {
  const raw = rawKind(dialect, field);
  if (UNSIZED.has(raw.kind)) return { kind: raw.kind, length: null, scale: null };
  if (raw.kind === "char" || raw.kind === "binary" || raw.kind === "bit") return { kind: raw.kind, length: raw.length ?? 1, scale: null };
  if (raw.kind === "decimal") return { kind: raw.kind, length: raw.length, scale: raw.scale ?? (raw.length === null ? null : 0) };
  if (raw.kind === "other") return raw;
  return { kind: raw.kind, length: raw.length, scale: null };
}

function rawKind(dialect: Dialect, field: Pick<ParsedField, "field_type" | "length" | "scale">): TypeKind {
  const name = field.field_type.toLowerCase();
  const sized = (kind: Kind): TypeKind => ({ kind, length: field.length, scale: field.scale });
  if (name === "timestamp") return sized(dialect === "MySQL" ? "timestamptz" : dialect === "MSSQL" ? "binary" : "datetime");
  if (name === "float") {
    const single = dialect === "MySQL" || dialect === "Firebird" || (field.length !== null && field.length <= 24);
    return { kind: single ? "real" : "double", length: null, scale: null };
  }
  if (name === "bit" && (dialect === "MSSQL" || (dialect === "MySQL" && (field.length ?? 1) === 1))) return { kind: "boolean", length: null, scale: null };
  if (name === "tinyint" && dialect === "MySQL" && field.length === 1) return { kind: "boolean", length: null, scale: null };
  if (name.startsWith("interval")) return { kind: "interval", length: null, scale: null };
  if (name.startsWith("blob sub_type") && name !== "blob sub_type text") return sized("blob");
  if ((name === "varchar" || name === "nvarchar" || name === "varbinary") && field.length === -1) {
    return { kind: name === "varbinary" ? "blob" : "text", length: null, scale: null };
  }
  const kind = COMMON[name];
  if (kind) return sized(kind);
  if (dialect === "SQLite") return sized(sqliteAffinity(name));
  return sized("other");
}

/** SQLite's type-affinity rules (datatype3.html §3.1) for names it has no kind for. */
function sqliteAffinity(name: string): Kind {
  if (name.includes("int")) return "int";
  if (name.includes("char") || name.includes("clob") || name.includes("text")) return "text";
  if (name.includes("blob") || name === "") return "blob";
  if (name.includes("real") || name.includes("floa") || name.includes("doub")) return "double";
  return "decimal";
}

/** Spellings each dialect takes as the very same type. */
const ALIASES: Record<Dialect, Record<string, string>> = {
  PostgreSQL: {
    int: "integer", int4: "integer", int2: "smallint", int8: "bigint", varchar: "character varying", char: "character", bpchar: "character",
    bool: "boolean", float8: "double precision", float4: "real", decimal: "numeric", timestamp: "timestamp without time zone",
    timestamptz: "timestamp with time zone", time: "time without time zone", timetz: "time with time zone", varbit: "bit varying",
  },
  MySQL: {
    integer: "int", int4: "int", int1: "tinyint", int2: "smallint", int3: "mediumint", middleint: "mediumint", int8: "bigint", bool: "boolean",
    dec: "decimal", numeric: "decimal", fixed: "decimal", "double precision": "double", real: "double", nvarchar: "varchar",
    "national varchar": "varchar", "character varying": "varchar", nchar: "char", "national char": "char", character: "char",
  },
  MSSQL: {
    integer: "int", dec: "decimal", numeric: "decimal", "double precision": "float", character: "char", "character varying": "varchar",
    "char varying": "varchar", "national character varying": "nvarchar", "national char varying": "nvarchar", "national character": "nchar",
    "national char": "nchar", rowversion: "timestamp",
  },
  SQLite: {},
  Firebird: { int: "integer", dec: "decimal", character: "char", "character varying": "varchar", "char varying": "varchar" },
};

/** Whether two fields, each in its own dialect, have the same type (kind and sizes). */
export function sameType(a: ParsedField, aDialect: Dialect, b: ParsedField, bDialect: Dialect): boolean {
  const ka = typeKind(aDialect, a);
  const kb = typeKind(bDialect, b);
  if (!sameValues(a, b) || (a.array_dimensions ?? 0) !== (b.array_dimensions ?? 0)) return false;
  if (aDialect === bDialect) {
    // same dialect: the same type name (aliases aside), sizes as the engine reads them
    const name = (f: ParsedField) => ALIASES[aDialect][f.field_type.toLowerCase()] ?? f.field_type.toLowerCase();
    if (name(a) !== name(b) || (a.is_unsigned ?? false) !== (b.is_unsigned ?? false)) return false;
    if (ka.kind === "other") return a.length === b.length && a.scale === b.scale;
    return ka.length === kb.length && ka.scale === kb.scale;
  }
  if (ka.kind === "other" || kb.kind === "other") return false;
  return ka.kind === kb.kind && ka.length === kb.length && ka.scale === kb.scale;
}

function sameValues(a: ParsedField, b: ParsedField): boolean {
  return JSON.stringify(a.enum_values ?? null) === JSON.stringify(b.enum_values ?? null);
}
