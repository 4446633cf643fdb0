/**
 * Hostile and broken input: empty, binary, garbage, 10 MB, deeply nested. The parser must
 * answer with a DdlParseError naming a line and column, or with warnings, and never crash,
 * overflow the stack or hang. Times are reported, not judged (`npm run bench` measures speed).
 */
import { randomBytes } from "node:crypto";
import t, { type Test } from "tap";
import { DdlParseError, normalizeDialect, parseDdl, type Dialect, type ParseResult } from "../../../shared/sqlddl/index.ts";

const DIALECTS: Dialect[] = ["MySQL", "PostgreSQL", "SQLite", "MSSQL", "Firebird"];

const timed = <T>(fn: () => T): [T | Error, number] => {
  const started = performance.now();
  try {
    return [fn(), performance.now() - started];
  } catch (error) {
    return [error as Error, performance.now() - started];
  }
};

/** The result, after asserting it is not an error. */
function parsed(t: Test, result: ParseResult | Error, what: string): ParseResult {
  t.notOk(result instanceof Error, `${what}${result instanceof Error ? `: ${result.message}` : ""}`);
  return result instanceof Error ? { schema: { dialect: "SQLite", tables: [] }, warnings: [], statements: { understood: 0, skipped: 0 } } : result;
}

t.test("dialect names and aliases", async (t) => {
  const cases: Record<string, Dialect> = {
    mariadb: "MySQL", MySQL: "MySQL", postgres: "PostgreSQL", PostgreSQL: "PostgreSQL", pg: "PostgreSQL", sqlite3: "SQLite",
    SQLite: "SQLite", sqlserver: "MSSQL", mssql: "MSSQL", "MS-SQL": "MSSQL", MSSQL: "MSSQL", firebird: "Firebird", " FireBird ": "Firebird",
  };
  for (const [alias, dialect] of Object.entries(cases)) t.equal(normalizeDialect(alias), dialect, alias);
  t.equal(normalizeDialect("oracle"), null);
  for (const inherited of ["__proto__", "constructor", "toString", "hasOwnProperty"]) t.equal(normalizeDialect(inherited), null, `${inherited} is no dialect`);
});

t.test("empty and whitespace-only input is a DdlParseError at 1:1", async (t) => {
  for (const text of ["", "   \n\t  ", "\uFEFF"]) {
    const [result] = timed(() => parseDdl(text, "PostgreSQL"));
    t.type(result, DdlParseError);
    t.match(result, { line: 1, column: 1, message: /empty/ });
  }
});

t.test("binary input is refused, located at the first NUL", async (t) => {
  const bytes = Buffer.concat([Buffer.from("CREATE TABLE a (id int);\n-- x\n"), randomBytes(4096)]);
  bytes[30] = 0; // first byte of line 3
  for (const dialect of DIALECTS) {
    const [result, ms] = timed(() => parseDdl(bytes.toString("latin1"), dialect));
    t.type(result, DdlParseError, dialect);
    t.match(result, { line: 3, column: 1, message: /binary/ });
    t.comment(`${dialect}: answered in ${ms.toFixed(1)} ms`);
  }
});

t.test("garbage is a DdlParseError naming the first problem's line and column", async (t) => {
  const text = "\n\n  hello there, this is not SQL at all;\nneither is this line (with an unbalanced paren;\n";
  for (const dialect of DIALECTS) {
    const [result] = timed(() => parseDdl(text, dialect));
    t.type(result, DdlParseError, dialect);
    t.match(result, { line: 3, column: 3 }, dialect);
  }
  const [unterminated] = timed(() => parseDdl("CREATE TABLE t (a varchar(10) DEFAULT 'never closed);", "MySQL"));
  t.match(unterminated, { name: "DdlParseError", message: /unterminated string/ });
});

t.test("a statement that cannot be understood is a warning; the rest is kept", async (t) => {
  const text = "CREATE TABLE good1 (id int primary key);\nCREATE TABLE broken (id int,, name);\nCREATE TABLE good2 (id int references good1);\nCREATE VIEW v AS SELECT 1;\n";
  for (const dialect of ["PostgreSQL", "MySQL", "SQLite"] as Dialect[]) {
    const result = parseDdl(text, dialect);
    t.same(result.schema.tables.map((x) => x.table_name), ["good1", "good2"], dialect);
    t.same(result.statements, { understood: 2, skipped: 2 });
    t.same(result.warnings.map((w) => w.line), [2, 4], "warnings name their lines");
    t.match(result.warnings[0]!.message, /could not understand CREATE TABLE broken/);
    t.match(result.warnings[1]!.message, /skipped CREATE VIEW v/);
  }
});

t.test("10 MB of DDL parses quickly; 10 MB of garbage fails quickly", async (t) => {
  const table = (i: number) => `CREATE TABLE t${i} (\n  id bigint NOT NULL PRIMARY KEY,\n  name varchar(100) NOT NULL DEFAULT 'x',\n  amount numeric(12,2),\n  parent bigint REFERENCES t${Math.max(0, i - 1)} (id) ON DELETE CASCADE\n);\n`;
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < 10 << 20; i++) {
    parts.push(table(i));
    size += parts[parts.length - 1]!.length;
  }
  const [result, ms] = timed(() => parseDdl(parts.join(""), "PostgreSQL"));
  t.equal(parsed(t, result, "10 MB of DDL parses").schema.tables.length, parts.length, `${parts.length} tables`);
  t.comment(`10 MB of DDL in ${ms.toFixed(0)} ms`);

  const garbage = "lorem ipsum (dolor) sit amet, 'consectetur' adipiscing; ".repeat(200_000);
  const [error, garbageMs] = timed(() => parseDdl(garbage, "MySQL"));
  t.type(error, DdlParseError);
  t.comment(`10 MB of garbage refused in ${garbageMs.toFixed(0)} ms`);

  const [oneString, stringMs] = timed(() => parseDdl(`CREATE TABLE a (b text DEFAULT '${"x".repeat(10 << 20)}`, "SQLite"));
  t.type(oneString, DdlParseError);
  t.comment(`a 10 MB unterminated string in ${stringMs.toFixed(0)} ms`);
});

t.test("deep nesting neither overflows the stack nor hangs", async (t) => {
  const depth = 100_000;
  const nested = (n: number) => `CREATE TABLE n (a int DEFAULT ${"(".repeat(n)}1${")".repeat(n)}, b int);`;
  const [result, ms] = timed(() => parseDdl(nested(depth), "PostgreSQL"));
  t.same(parsed(t, result, "balanced nesting parses").schema.tables[0]?.fields.length, 2);
  t.comment(`${depth} levels in ${ms.toFixed(0)} ms`);
  const [huge, hugeMs] = timed(() => parseDdl(`${nested(10 * depth)}\nCREATE TABLE m (id int);`, "PostgreSQL"));
  t.match(parsed(t, huge, "a statement too long to model is skipped").warnings[0], { line: 1, message: /too long/ });
  t.comment(`${10 * depth} levels in ${hugeMs.toFixed(0)} ms`);

  const [open] = timed(() => parseDdl(`CREATE TABLE n (a int CHECK ${"(".repeat(depth)}`, "MySQL"));
  t.type(open, DdlParseError, "unbalanced nesting is an error, not a crash");

  const ifs = `${"IF 1 = 1 BEGIN ".repeat(10_000)}CREATE TABLE deep (id int)${" END".repeat(10_000)}\nGO\nCREATE TABLE shallow (id int)\nGO\n`;
  const [mssql, ifMs] = timed(() => parseDdl(ifs, "MSSQL"));
  t.same(parsed(t, mssql, "nested IF blocks parse").schema.tables.map((x) => x.table_name), ["shallow"], "too-deep IF blocks are skipped, not followed");
  t.comment(`10,000 nested IF blocks in ${ifMs.toFixed(0)} ms`);
});

t.test("dump data is skipped, however it looks", async (t) => {
  const pg = "CREATE TABLE public.t (id integer NOT NULL, body text);\nCOPY public.t (id, body) FROM stdin;\n1\tit's; not SQL; CREATE TABLE fake (x int);\n2\t\\N\n\\.\n\nALTER TABLE ONLY public.t ADD CONSTRAINT t_pkey PRIMARY KEY (id);\n";
  const result = parseDdl(pg, "PostgreSQL");
  t.same(result.schema.tables.map((x) => x.table_name), ["t"], "COPY data lines are not statements");
  t.same(result.schema.tables[0]!.constraints.map((k) => k.name), ["t_pkey"], "the statement after the data still counts");
  t.match(result.warnings, [{ line: 2, message: /skipped COPY/ }]);
  const mysql = "CREATE TABLE t (id int PRIMARY KEY, s text);\nLOCK TABLES `t` WRITE;\nINSERT INTO `t` VALUES (1,'a;b\\'c'),(2,'CREATE TABLE x (y int);');\nUNLOCK TABLES;\n";
  const my = parseDdl(mysql, "MySQL");
  t.same(my.schema.tables.map((x) => x.table_name), ["t"]);
  t.same(my.statements, { understood: 3, skipped: 1 });
});

t.test("statements read one after another keep their own words; quoted keywords stay names", async (t) => {
  // The scanner reuses a statement's token objects for the next one once it has been read,
  // and the cursor tells keywords by their upper-case form, which only unquoted words have.
  const even = (i: number) => `CREATE TABLE \`t${i}\` (\`primary\` int NOT NULL, \`key\` varchar(${i + 1}) DEFAULT 'NOT NULL', \`not\` decimal(${i + 2},${i % 5}), PRIMARY KEY (\`primary\`, \`key\`), KEY \`using\` (\`not\`));`;
  const odd = (i: number) => `CREATE TABLE t${i} (id int, parent int, FOREIGN KEY (parent) REFERENCES t${i - 1} (\`primary\`));`;
  const lines = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? even(i) : odd(i)));
  const result = parsed(t, timed(() => parseDdl(`${lines.join("\n")}\nCREATE TABLE broken (a int DEFAULT 'unterminated`, "MySQL"))[0], "the dump parses");
  t.equal(result.schema.tables.length, 200, "every whole table");
  for (let i = 0; i < 200; i++) {
    const table = result.schema.tables[i]!;
    t.equal(table.table_name, `t${i}`);
    if (i % 2 === 0) {
      t.same(table.fields.map((f) => [f.field_name, f.field_type, f.length, f.scale, f.is_nullable, f.default_value]), [
        ["primary", "int", null, null, false, null],
        ["key", "varchar", i + 1, null, false, "'NOT NULL'"],
        ["not", "decimal", i + 2, i % 5, true, null],
      ], `t${i}: the columns named like keywords, with their own sizes`);
      t.same(table.constraints.map((k) => [k.type, k.columns]), [["primary_key", ["primary", "key"]]]);
      t.same(table.indexes, [{ name: "using", columns: ["not"], unique: false, method: null }]);
    } else {
      t.same(table.constraints.map((k) => [k.type, k.columns, k.references_table, k.references_columns]), [["foreign_key", ["parent"], `t${i - 1}`, ["primary"]]]);
    }
  }
  t.match(result.warnings, [{ line: 201, message: /unterminated string/ }], "the unterminated string is located on its line");
});

t.test("a time limit stops a parse", async (t) => {
  const [result] = timed(() => parseDdl("CREATE TABLE a (id int);\nCREATE TABLE b (id int);", "SQLite", { maxMs: -1 }));
  t.match(result, { name: "DdlParseError", message: /too long/ });
});
