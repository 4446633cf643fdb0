/**
 * PostgreSQL fidelity: every corpus file and the schemas written here are loaded into the
 * real server, and the parser's reading of the same text must match what the catalog
 * says (tables, columns, types, sizes, nullability, auto-increment, keys). The server's
 * own dump of each goes through the parser too, on a server the pg_dump on PATH can dump
 * (the test cluster's, or another one this machine runs; see support/pgServers.ts); the
 * file says why it skips that part when there is none.
 */
import t, { type Test } from "tap";
import { parseDdl } from "../../../shared/sqlddl/index.ts";
import { corpusFiles, noCorpus } from "./support/corpus.ts";
import { pgRules, pgScratch, pgScratchOn, pgTruth, type PgScratch } from "./support/pgEngine.ts";
import { clusterMajor, needsNewer, pgDumpServer } from "./support/pgServers.ts";
import { compareWithTruth } from "./support/truth.ts";
import { pgDumpStyleSql, pgSchemaSql } from "./fixtures/pgSchema.ts";

/** Tables a corpus file defines that this server cannot create, and why. */
const UNLOADABLE: Record<string, { table: string; because: RegExp }[]> = {
  "postgresql/pagila.sql": [{ table: "public.film_embedding", because: /type "public\.vector" does not exist/ }],
};

/** Corpus scripts that create and connect to their own database: run them in ours instead. */
const forOurDatabase = (sql: string) => sql.replace(/^[ \t]*(drop|create)[ \t]+database\b[^;\n]*;/gim, "").replace(/^\\c(onnect)?\b.*$/gm, "");

async function check(t: Test, scratch: PgScratch, sql: string, expected: string[] = [], what = "parsed schema matches the catalog") {
  const parsed = parseDdl(sql, "PostgreSQL");
  const truth = await pgTruth(scratch);
  const rules = await pgRules(scratch.client, parsed.schema.tables.flatMap((x) => x.fields));
  t.same(compareWithTruth(parsed.schema, truth, rules), expected, what);
  return { parsed, truth };
}

const major = await clusterMajor();
const PG_DUMP_17 = "pg_dump 17-shaped dump";

t.test("corpus files", { skip: corpusFiles("PostgreSQL") ? false : noCorpus }, async (t) => {
  for (const file of corpusFiles("PostgreSQL")!) {
    t.test(file.name, { skip: needsNewer(file.name, major) }, async (t) => {
      const scratch = await pgScratch(t);
      const errors = await scratch.load(forOurDatabase(file.text));
      const unloadable = UNLOADABLE[file.name] ?? [];
      for (const u of unloadable) t.ok(errors.some((e) => u.because.test(e)), `the server refuses ${u.table}: ${u.because.source}`);
      await check(t, scratch, file.text, unloadable.map((u) => `table ${u.table}: parsed, but not in the catalog`));
    });
  }
});

t.test("a schema written for the tests", async (t) => {
  const scratch = await pgScratch(t);
  t.same(await scratch.load(pgSchemaSql), [], "the server accepts the schema");
  const { parsed } = await check(t, scratch, pgSchemaSql);
  t.equal(parsed.schema.tables.length, 6);
  t.equal(parsed.warnings.length, 0, "nothing skipped");
});

t.test("a dump in pg_dump 17's shape", { skip: needsNewer(PG_DUMP_17, major) }, async (t) => {
  const scratch = await pgScratch(t);
  t.same(await scratch.load(pgDumpStyleSql), [], "the server accepts the dump");
  const { parsed } = await check(t, scratch, pgDumpStyleSql);
  t.same(parsed.warnings, [], "every statement understood");
  t.same(parsed.schema.tables.map((x) => `${x.schema_name}.${x.table_name}`), ["billing.accounts", "billing.invoices", "billing.invoices_2025"]);
});

const dumpServer = await pgDumpServer();

t.test("pg_dump --schema-only of each, parsed, matches the catalog of the server it dumped", { skip: "skip" in dumpServer ? dumpServer.skip : false }, async (t) => {
  if ("skip" in dumpServer) return;
  const corpus = corpusFiles("PostgreSQL");
  if (!corpus) t.comment(noCorpus);
  const sources = [
    ...(corpus ?? []).map((f) => ({ name: f.name, sql: forOurDatabase(f.text) })),
    { name: "the schema written for the tests", sql: pgSchemaSql },
    { name: PG_DUMP_17, sql: pgDumpStyleSql },
  ];
  t.comment(`dumping with a PostgreSQL ${dumpServer.major} server`);
  for (const source of sources) {
    t.test(source.name, async (t) => {
      const scratch = await pgScratchOn(t, dumpServer.adminUrl);
      // what the server refuses (an extension it lacks, syntax newer than it) is simply not in its dump
      await scratch.load(source.sql);
      const dump = await scratch.dump();
      const { parsed, truth } = await check(t, scratch, dump, [], "pg_dump's output, parsed, matches the catalog");
      t.ok(truth.length > 0, `the server created ${truth.length} tables`);
      t.same(parsed.warnings.filter((w) => !/^skipped /.test(w.message)), [], "the dump parses with no warning but skipped objects");
    });
  }
});
