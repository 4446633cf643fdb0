/**
 * PostgreSQL fidelity: every corpus file and a schema written here are loaded into the
 * real server, and the parser's reading of the same text must match what the catalog
 * says (tables, columns, types, sizes, nullability, auto-increment, keys). The server's
 * own dump goes through the parser too when the pg_dump on PATH can dump this server.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import t, { type Test } from "tap";
import { parseDdl } from "../../../shared/sqlddl/index.ts";
import { corpusFiles, noCorpus } from "./support/corpus.ts";
import { pgRules, pgScratch, pgTruth, type PgScratch } from "./support/pgEngine.ts";
import { compareWithTruth } from "./support/truth.ts";
import { pgDumpStyleSql, pgSchemaSql } from "./fixtures/pgSchema.ts";

const run = promisify(execFile);

/** Tables a corpus file defines that this server cannot create, and why. */
const UNLOADABLE: Record<string, { table: string; because: RegExp }[]> = {
  "postgresql/pagila.sql": [{ table: "public.film_embedding", because: /type "public\.vector" does not exist/ }],
};

/** Corpus scripts that create and connect to their own database: run them in ours instead. */
const forOurDatabase = (sql: string) => sql.replace(/^[ \t]*(drop|create)[ \t]+database\b[^;\n]*;/gim, "").replace(/^\\c(onnect)?\b.*$/gm, "");

async function check(t: Test, scratch: PgScratch, sql: string, expected: string[] = []) {
  const parsed = parseDdl(sql, "PostgreSQL");
  const truth = await pgTruth(scratch);
  const rules = await pgRules(scratch.client, parsed.schema.tables.flatMap((x) => x.fields));
  t.same(compareWithTruth(parsed.schema, truth, rules), expected, "parsed schema matches the catalog");
  return parsed;
}

t.test("corpus files", { skip: corpusFiles("PostgreSQL") ? false : noCorpus }, async (t) => {
  for (const file of corpusFiles("PostgreSQL")!) {
    t.test(file.name, async (t) => {
      const scratch = await pgScratch(t);
      const errors = await scratch.load(forOurDatabase(file.text));
      const unloadable = UNLOADABLE[file.name] ?? [];
      for (const u of unloadable) t.ok(errors.some((e) => u.because.test(e)), `the server refuses ${u.table}: ${u.because.source}`);
      await check(t, scratch, file.text, unloadable.map((u) => `table ${u.table}: parsed, but not in the catalog`));
    });
  }
});

t.test("a schema written for the tests, and the server's own dump of it", async (t) => {
  const scratch = await pgScratch(t);
  t.same(await scratch.load(pgSchemaSql), [], "the server accepts the schema");
  const parsed = await check(t, scratch, pgSchemaSql);
  t.equal(parsed.schema.tables.length, 6);
  t.equal(parsed.warnings.length, 0, "nothing skipped");
  const dump = await run("pg_dump", ["--schema-only", "-d", scratch.url], { maxBuffer: 64 << 20 }).catch((e: { stderr?: string; message: string }) => ({
    stdout: null,
    stderr: e.stderr ?? e.message,
  }));
  if (dump.stdout === null) {
    t.pass("pg_dump's output, parsed, matches the catalog", { skip: `pg_dump on PATH cannot dump this server: ${dump.stderr.trim().split("\n").pop()}` });
    return;
  }
  await check(t, scratch, dump.stdout);
});

t.test("a dump in pg_dump 17's shape", async (t) => {
  const scratch = await pgScratch(t);
  t.same(await scratch.load(pgDumpStyleSql), [], "the server accepts the dump");
  const parsed = await check(t, scratch, pgDumpStyleSql);
  t.same(parsed.warnings, [], "every statement understood");
  t.same(parsed.schema.tables.map((x) => `${x.schema_name}.${x.table_name}`), ["billing.accounts", "billing.invoices", "billing.invoices_2025"]);
});
