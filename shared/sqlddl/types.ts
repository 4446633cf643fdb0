/**
 * The parsed schema shape (DESIGN §9, spec "Schema, table and field"), as TypeScript types
 * and as the zod schema that validates it when it is read back from JSON storage.
 *
 * Glossary:
 * - field_type: the lower-case base type as written (`varchar`, `int`, `character varying`),
 *   with domains, user-defined types and serial pseudo-types resolved to their base type.
 * - length: the type's first parameter (character length, numeric precision, fractional
 *   seconds); scale: the second (numeric scale).
 * - A unique index on plain columns (no expression, no WHERE) is a `unique` constraint: the
 *   engines enforce both alike and code generators need the rule, not its spelling.
 */
import { z } from "zod";

/** The five dialects, spelled as DESIGN §9 fixes `database_type`. */
export const DIALECTS = ["MySQL", "PostgreSQL", "SQLite", "MSSQL", "Firebird"] as const;
/** A dialect name. */
export type Dialect = (typeof DIALECTS)[number];

/** zod: a dialect name. */
export const dialectSchema = z.enum(DIALECTS);

const referentialAction = z.enum(["CASCADE", "SET NULL", "SET DEFAULT", "RESTRICT", "NO ACTION"]);
/** What a foreign key does on delete or update, as declared (null: not declared). */
export type ReferentialAction = z.infer<typeof referentialAction>;

/** zod: a column. */
export const parsedFieldSchema = z.object({
  field_name: z.string(),
  field_type: z.string(),
  length: z.number().int().nullable(),
  scale: z.number().int().nullable(),
  is_nullable: z.boolean(),
  is_auto_increment: z.boolean(),
  is_primary_key: z.boolean(),
  default_value: z.string().nullable(),
  comment: z.string().nullable(),
  /** MySQL `UNSIGNED`. */
  is_unsigned: z.boolean().optional(),
  /** Values of an `enum`/`set` column (MySQL) or of a PostgreSQL enum type. */
  enum_values: z.array(z.string()).nullable().optional(),
  /** Array dimensions (PostgreSQL `text[]`, Firebird `INTEGER [4]`); 0 or absent: scalar. */
  array_dimensions: z.number().int().optional(),
  collation: z.string().nullable().optional(),
  /** MySQL column `CHARACTER SET`. */
  charset: z.string().nullable().optional(),
  /** Expression of a computed/generated column (`AS (…)`, `COMPUTED BY (…)`). */
  computed: z.string().nullable().optional(),
  /** Whether a computed column is stored (true) or virtual (false). */
  computed_stored: z.boolean().optional(),
  /** The domain, user type or enum type the column was declared with, before resolution. */
  type_name: z.string().nullable().optional(),
  /** Standard identity generation (`GENERATED ALWAYS|BY DEFAULT AS IDENTITY`, MSSQL IDENTITY). */
  identity: z.enum(["always", "by_default"]).nullable().optional(),
  /** MySQL `ON UPDATE …` expression. */
  on_update: z.string().nullable().optional(),
  /**
   * SQLite `INTEGER PRIMARY KEY AUTOINCREMENT`: the key never takes a deleted row's value again.
   * A plain `INTEGER PRIMARY KEY` (the rowid alias, also auto-increment) may reuse values.
   */
  sqlite_autoincrement: z.boolean().optional(),
});
/** A column. */
export type ParsedField = z.infer<typeof parsedFieldSchema>;

/** zod: a primary, foreign or unique key. */
export const parsedConstraintSchema = z.object({
  type: z.enum(["primary_key", "foreign_key", "unique"]),
  name: z.string().nullable(),
  columns: z.array(z.string()),
  references_table: z.string().nullable(),
  references_columns: z.array(z.string()).nullable(),
  on_delete: referentialAction.nullable(),
  on_update: referentialAction.nullable(),
  /** Schema of the referenced table when the reference was qualified. */
  references_schema: z.string().nullable().optional(),
  /** A PostgreSQL partition's copy of its partitioned parent's key (the engine makes it). */
  inherited: z.boolean().optional(),
});
/** A primary, foreign or unique key. */
export type ParsedConstraint = z.infer<typeof parsedConstraintSchema>;

/** zod: an index that is not a key. */
export const parsedIndexSchema = z.object({
  name: z.string().nullable(),
  /** Column names, or the expression text for expression parts. */
  columns: z.array(z.string()),
  /** True only for unique indexes that are not plain-column constraints (partial or expression). */
  unique: z.boolean(),
  /** Access method or kind as written (`btree`, `gist`, `fulltext`, `clustered`), lower case. */
  method: z.string().nullable().optional(),
  /** Partial index predicate. */
  where: z.string().nullable().optional(),
});
/** An index that is not a key. */
export type ParsedIndex = z.infer<typeof parsedIndexSchema>;

/** zod: a CHECK constraint (expression as written). */
export const parsedCheckSchema = z.object({ name: z.string().nullable(), expression: z.string() });
/** A CHECK constraint. */
export type ParsedCheck = z.infer<typeof parsedCheckSchema>;

/** zod: a table. */
export const parsedTableSchema = z.object({
  table_name: z.string(),
  schema_name: z.string().nullable(),
  comment: z.string().nullable(),
  fields: z.array(parsedFieldSchema),
  constraints: z.array(parsedConstraintSchema),
  indexes: z.array(parsedIndexSchema).optional(),
  checks: z.array(parsedCheckSchema).optional(),
  /** Table options worth keeping for a faithful export (`engine`, `without_rowid`, `strict`, …). */
  options: z.record(z.string(), z.string()).optional(),
});
/** A table. */
export type ParsedTable = z.infer<typeof parsedTableSchema>;

/** zod: a PostgreSQL enum type. */
export const parsedEnumSchema = z.object({ name: z.string(), schema_name: z.string().nullable(), values: z.array(z.string()) });
/** A PostgreSQL enum type. */
export type ParsedEnum = z.infer<typeof parsedEnumSchema>;

/** zod: a domain or user-defined type over a base type. */
export const parsedDomainSchema = z.object({
  name: z.string(),
  schema_name: z.string().nullable(),
  field_type: z.string(),
  length: z.number().int().nullable(),
  scale: z.number().int().nullable(),
  is_nullable: z.boolean(),
  default_value: z.string().nullable(),
  check: z.string().nullable().optional(),
});
/** A domain or user-defined type. */
export type ParsedDomain = z.infer<typeof parsedDomainSchema>;

/** zod: a sequence or generator. */
export const parsedSequenceSchema = z.object({
  name: z.string(),
  schema_name: z.string().nullable(),
  start: z.number().nullable(),
  increment: z.number().nullable(),
});
/** A sequence or generator. */
export type ParsedSequence = z.infer<typeof parsedSequenceSchema>;

/** zod: the whole parsed schema, as stored. */
export const parsedSchemaSchema = z.object({
  dialect: dialectSchema,
  tables: z.array(parsedTableSchema),
  enums: z.array(parsedEnumSchema).optional(),
  domains: z.array(parsedDomainSchema).optional(),
  sequences: z.array(parsedSequenceSchema).optional(),
});
/** The whole parsed schema. */
export type ParsedSchema = z.infer<typeof parsedSchemaSchema>;

/** One thing the parser skipped or could not understand, located in the input. */
export interface ParseWarning {
  line: number;
  column: number;
  message: string;
}

/** What `parseDdl` returns. */
export interface ParseResult {
  schema: ParsedSchema;
  warnings: ParseWarning[];
  /** Statements modelled or recognised as harmless session noise, and statements skipped. */
  statements: { understood: number; skipped: number };
}
