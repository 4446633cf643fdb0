/**
 * Generated DDL of a chosen size, shared by the engine's scaling test (what a large input
 * parses to) and its benchmark (how cost grows with size).
 */
import type { Dialect } from "../../shared/sqlddl/index.ts";

const TYPES = ["integer", "bigint", "text", "varchar(120)", "numeric(12,2)", "date"];

/** One CREATE TABLE of `n` (+ `extra`) columns, keys and an index added afterwards, and a comment on its last column. */
export function wideTable(n: number, dialect: Dialect, extra = 0): string {
  const q = (s: string) => (dialect === "MySQL" ? `\`${s}\`` : `"${s}"`);
  const columns = Array.from({ length: n + extra }, (_, c) => `  ${q(`Col_${c}`)} ${TYPES[c % TYPES.length]}${c % 3 === 0 ? " NOT NULL" : ""}`);
  const comment = dialect === "MySQL" ? `ALTER TABLE ${q("wide")} MODIFY ${q(`Col_${n - 1}`)} integer COMMENT 'last'` : `COMMENT ON COLUMN ${q("wide")}.${q(`Col_${n - 1}`)} IS 'last'`;
  return [
    `CREATE TABLE ${q("wide")} (\n${columns.join(",\n")}\n);`,
    `ALTER TABLE ${q("wide")} ADD PRIMARY KEY (${q("Col_0")}, ${q(`Col_${n - 1}`)});`,
    `ALTER TABLE ${q("wide")} ADD CONSTRAINT ${q("wide_unique")} UNIQUE (${q(`Col_${n - 2}`)});`,
    `CREATE INDEX ${q("wide_mid")} ON ${q("wide")} (${q(`Col_${Math.floor(n / 2)}`)});`,
    `${comment};`,
  ].join("\n");
}

/** A pg_dump-shaped dump of `n` tables, each referencing the one before; `variant` changes some. */
export function manyTables(n: number, variant = false): string {
  const out: string[] = [];
  const after: string[] = [];
  for (let i = 0; i < n; i++) {
    const columns = ["    id integer NOT NULL", ...(i > 0 ? ["    parent_id integer"] : [])];
    for (let c = 0; c < 8 + (i % 5) + (variant && i % 7 === 0 ? 1 : 0); c++) columns.push(`    col_${c} ${TYPES[(i + c + (variant && i % 11 === 0 ? 1 : 0)) % TYPES.length]}`);
    out.push(`CREATE TABLE public.t_${i} (\n${columns.join(",\n")}\n);`, `COMMENT ON COLUMN public.t_${i}.col_1 IS 'c';`);
    after.push(`ALTER TABLE ONLY public.t_${i} ADD CONSTRAINT t_${i}_pkey PRIMARY KEY (id);`, `CREATE INDEX created_idx ON public.t_${i} USING btree (col_0);`);
    if (i > 0) after.push(`ALTER TABLE ONLY public.t_${i} ADD CONSTRAINT t_${i}_parent_fkey FOREIGN KEY (parent_id) REFERENCES public.t_${i - 1}(id);`);
  }
  if (variant) for (let i = 0; i < n; i += 13) out.push(`DROP TABLE public.t_${i};`);
  return [...out, ...after].join("\n");
}

/** One T-SQL batch of `n` statements with neither GO nor semicolons between them, as some generators write it. */
export function tsqlBatch(n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      i % 10 === 9
        ? `IF NOT EXISTS (SELECT * FROM sys.objects WHERE name = N't_${i}') CREATE TABLE [dbo].[t_${i}] ([id] INT NOT NULL PRIMARY KEY, [name] NVARCHAR(50) NULL)`
        : `CREATE TABLE [dbo].[t_${i}] ([id] INT IDENTITY(1,1) NOT NULL, [parent_id] INT NULL, [name] NVARCHAR(50) NULL, CONSTRAINT [pk_t_${i}] PRIMARY KEY ([id]))`,
    );
  }
  return out.join("\n");
}
