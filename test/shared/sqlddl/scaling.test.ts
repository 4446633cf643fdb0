/**
 * The engine's cost grows linearly with the schema: a CREATE TABLE of 30,000 columns and a
 * dump of 3,000 tables are each 100 times a small case, and parsing, exporting and
 * comparing them must cost less than 1,000 times as much. Linear code measures 75–320 times
 * (the large case pays for garbage collection of a bigger heap, the more so on a busy
 * machine); a lookup by name that scans a list inside a loop made it 2,300–14,000 times.
 * A T-SQL batch without GO or semicolons is one statement to the splitter: its statements were
 * read by copying the rest of the batch each time (quadratic: 5,000 statements took seconds).
 * Ratios, not absolute times, so a slow or busy machine does not fail the test; each side is
 * the best of a few runs, after a warm-up.
 */
import t, { type Test } from "tap";
import { diffSchemas, exportSql, parseDdl, type Dialect, type ParsedSchema } from "../../../shared/sqlddl/index.ts";

const GROWTH = 100;
const BOUND = 1000;
const TYPES = ["integer", "bigint", "text", "varchar(120)", "numeric(12,2)", "date"];

/** One CREATE TABLE of `n` (+ `extra`) columns, keys and an index added afterwards, and a comment on its last column. */
function wideTable(n: number, dialect: Dialect, extra = 0): string {
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
function manyTables(n: number, variant = false): string {
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

/** Best time of `runs` calls, in milliseconds, after one unmeasured call. */
function best(fn: () => unknown, runs: number): number {
  fn();
  let min = Infinity;
  for (let k = 0; k < runs; k++) {
    const started = performance.now();
    fn();
    min = Math.min(min, performance.now() - started);
  }
  return min;
}

/** The small case's time is taken over batches of GROWTH calls, so timer resolution does not matter. */
function ratio(small: () => unknown, large: () => unknown): { ratio: number; smallMs: number; largeMs: number } {
  const smallMs = best(() => {
    for (let k = 0; k < GROWTH; k++) small();
  }, 3) / GROWTH;
  const largeMs = best(large, 3);
  return { ratio: largeMs / smallMs, smallMs, largeMs };
}

function checkRatio(t: Test, what: string, small: () => unknown, large: () => unknown): void {
  const r = ratio(small, large);
  t.ok(r.ratio < BOUND, `${what}: ${GROWTH}x the size costs ${r.ratio.toFixed(0)}x the time (${r.smallMs.toFixed(2)} ms, ${r.largeMs.toFixed(0)} ms; bound ${BOUND}x)`);
}

const parse = (sql: string, dialect: Dialect): ParsedSchema => parseDdl(sql, dialect, { maxMs: 120_000 }).schema;

t.test("a table of 30,000 columns costs about 100 times one of 300", async (t) => {
  for (const dialect of ["PostgreSQL", "MySQL"] as const) {
    const small = wideTable(300, dialect);
    const large = wideTable(300 * GROWTH, dialect);
    const parsed = parse(large, dialect);
    const [table] = parsed.tables;
    t.equal(table?.fields.length, 300 * GROWTH, `${dialect}: every column parsed`);
    t.same(table?.constraints.find((k) => k.type === "primary_key")?.columns, ["Col_0", `Col_${300 * GROWTH - 1}`], `${dialect}: the key found its last column`);
    t.equal(table?.fields.at(-1)?.comment, "last", `${dialect}: the comment found the last column`);
    checkRatio(t, `${dialect} parse`, () => parse(small, dialect), () => parse(large, dialect));

    const smallSchema = parse(small, dialect);
    const largeSchema = parsed;
    for (const target of ["PostgreSQL", "MySQL", "SQLite", "MSSQL"] as const) {
      checkRatio(t, `${dialect} export to ${target}`, () => exportSql(smallSchema, target), () => exportSql(largeSchema, target));
    }
    const smallChanged = parse(wideTable(300, dialect, 3), dialect);
    const largeChanged = parse(wideTable(300 * GROWTH, dialect, 3), dialect);
    const diff = diffSchemas(largeSchema, largeChanged, dialect);
    t.equal(diff.differences.modified_tables.wide?.added_columns.length, 3, `${dialect}: the comparison found the added columns`);
    checkRatio(t, `${dialect} compare and migration`, () => diffSchemas(smallSchema, smallChanged, dialect), () => diffSchemas(largeSchema, largeChanged, dialect));
  }
});

t.test("a dump of 3,000 tables costs about 100 times one of 30", async (t) => {
  const small = manyTables(30);
  const large = manyTables(30 * GROWTH);
  const smallSchema = parse(small, "PostgreSQL");
  const largeSchema = parse(large, "PostgreSQL");
  t.equal(largeSchema.tables.length, 30 * GROWTH, "every table parsed");
  t.equal(largeSchema.tables.filter((x) => x.constraints.some((k) => k.type === "foreign_key")).length, 30 * GROWTH - 1, "every foreign key found its table");
  checkRatio(t, "parse", () => parse(small, "PostgreSQL"), () => parse(large, "PostgreSQL"));
  for (const target of ["PostgreSQL", "MySQL", "SQLite", "MSSQL"] as const) {
    checkRatio(t, `export to ${target}`, () => exportSql(smallSchema, target), () => exportSql(largeSchema, target));
  }
  const smallChanged = parse(manyTables(30, true), "PostgreSQL");
  const largeChanged = parse(manyTables(30 * GROWTH, true), "PostgreSQL");
  for (const target of ["PostgreSQL", "MySQL", "SQLite"] as const) {
    checkRatio(t, `compare and migration for ${target}`, () => diffSchemas(smallSchema, smallChanged, target), () => diffSchemas(largeSchema, largeChanged, target));
  }
});

/** One T-SQL batch of `n` statements with neither GO nor semicolons between them, as some generators write it. */
function tsqlBatch(n: number): string {
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

t.test("a T-SQL batch of 5,000 statements without GO or semicolons costs about 100 times one of 50", async (t) => {
  const small = tsqlBatch(50);
  const large = tsqlBatch(50 * GROWTH);
  const parsed = parse(large, "MSSQL");
  t.equal(parsed.tables.length, 50 * GROWTH, "every statement of the batch is a table");
  t.same(parsed.tables.at(-1)?.constraints.find((k) => k.type === "primary_key")?.columns, ["id"], "the last one complete");
  checkRatio(t, "T-SQL batch parse", () => parse(small, "MSSQL"), () => parse(large, "MSSQL"));
});
