import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { parseDdl } from "../../shared/sqlddl/index.ts";
import { KEPT_PARSES } from "../../api/routes/schemas/sqlParse.router.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";

const shopMysql = `-- MySQL dump 10.13
/*!40101 SET NAMES utf8mb4 */;
DROP TABLE IF EXISTS \`customers\`;
CREATE TABLE \`customers\` (
  \`id\` int unsigned NOT NULL AUTO_INCREMENT,
  \`email\` varchar(190) NOT NULL,
  \`name\` varchar(100) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  UNIQUE KEY \`customers_email\` (\`email\`)
) ENGINE=InnoDB AUTO_INCREMENT=4 DEFAULT CHARSET=utf8mb4;
CREATE TABLE \`orders\` (
  \`id\` bigint NOT NULL AUTO_INCREMENT,
  \`customer_id\` int unsigned NOT NULL,
  \`total\` decimal(10,2) NOT NULL DEFAULT '0.00',
  PRIMARY KEY (\`id\`),
  KEY \`orders_customer\` (\`customer_id\`),
  CONSTRAINT \`orders_customer_fk\` FOREIGN KEY (\`customer_id\`) REFERENCES \`customers\` (\`id\`) ON DELETE CASCADE
) ENGINE=InnoDB;
CREATE DEFINER=\`root\`@\`localhost\` PROCEDURE noop() BEGIN END;
`;

const count = (pool: DatabasePool, table: "schemas" | "schema_revisions" | "sql_parses") =>
  pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from ${sql.identifier([table])}`);

t.test("schemas", async (t) => {
  const app = await startTestApp(t, { worker: true, env: { SCHEMA_SQL_MAX_BYTES: "20000" } });
  const alice = await buildUserWithToken(app.pool);
  const api = client(app.url, alice.token);
  const projectId = await buildProject(app.pool, alice.user.id);
  const base = `/api/projects/${projectId}/schemas`;

  let shopId = 0;
  let changed = "";
  t.test("create parses the dump: tables, fields with ids, keys; warnings name the line", async (t) => {
    const res = await api.post(base, { name: "Shop", sql_text: shopMysql, database_type: "mariadb" });
    t.equal(res.status, 201, res.text);
    const schema = res.body.schema;
    shopId = schema.id;
    t.match(schema, { name: "Shop", database_type: "MySQL", tables_count: 2, project_id: projectId });
    const [customers, orders] = schema.tables;
    t.equal(customers.table_name, "customers");
    t.match(customers.fields[0], { field_name: "id", field_type: "int", is_nullable: false, is_auto_increment: true, is_primary_key: true, is_unsigned: true });
    t.match(customers.fields[1], { field_name: "email", field_type: "varchar", length: 190, is_nullable: false });
    t.type(customers.id, "number");
    t.type(customers.fields[0].id, "number");
    t.ok(customers.constraints.some((c: { type: string; columns: string[] }) => c.type === "unique" && c.columns[0] === "email"));
    t.match(orders.constraints.find((c: { type: string }) => c.type === "foreign_key"), {
      name: "orders_customer_fk", columns: ["customer_id"], references_table: "customers", references_columns: ["id"], on_delete: "CASCADE",
    });
    t.match(orders.fields[2], { field_name: "total", field_type: "decimal", length: 10, scale: 2 });
    const procedureLine = shopMysql.split("\n").findIndex((l) => l.includes("PROCEDURE")) + 1;
    t.match(schema.warnings, [{ line: procedureLine, column: 1, message: /PROCEDURE/ }]);
    const events = await app.pool.any(sql.type(z.object({ event_type: z.string(), payload: z.record(z.string(), z.unknown()) }))`
      select event_type, payload from outbox_events where project_id = ${projectId} and event_type = 'DatabaseParsed'`);
    t.match(events, [{ payload: { schema_id: shopId, tables_count: 2 } }]);
  });

  t.test("list, read, counts", async (t) => {
    const list = await api.get(base);
    t.equal(list.status, 200);
    t.match(list.body.data, [{ id: shopId, name: "Shop", database_type: "MySQL", tables_count: 2 }]);
    t.match(list.body.meta, { total: 1, current_page: 1 });
    const one = await api.get(`${base}/${shopId}`);
    t.equal(one.body.schema.tables.length, 2);
    t.equal((await api.get(`/api/projects/${projectId}`)).body.project.schemas_count, 1);
    t.equal((await api.get(`${base}/999999`)).status, 404);
    t.equal((await api.get(`${base}/abc`)).status, 404);
  });

  t.test("SQL that means nothing: 422 with line and column, and nothing is left behind", async (t) => {
    const before = await count(app.pool, "schemas");
    const res = await api.post(base, { name: "Bad", sql_text: "\n\n  this is not sql at all;", database_type: "PostgreSQL" });
    t.equal(res.status, 422, res.text);
    t.equal(res.body.code, "sql_parse_failed");
    t.match(res.body.errors.sql_text[0], /^Line 3, column \d+: /);
    t.equal(await count(app.pool, "schemas"), before);
    t.equal(await count(app.pool, "schema_revisions"), 0);
  });

  t.test("validation: dialect names, required fields, size limit (422) and body limit (413)", async (t) => {
    const unknown = await api.post(base, { name: "X", sql_text: "create table a (id int);", database_type: "oracle" });
    t.equal(unknown.status, 422);
    t.match(unknown.body.errors.database_type[0], /MySQL, PostgreSQL, SQLite, MSSQL, Firebird/);
    // Names an object inherits were once taken for aliases (a 500, found by fuzzing).
    for (const inherited of ["__proto__", "constructor"]) {
      t.match((await api.post(base, { name: "X", sql_text: "create table a (id int);", database_type: inherited })).body, { code: "validation_failed", errors: { database_type: [/one of/] } }, inherited);
    }
    const missing = await api.post(base, { sql_text: " " });
    t.same(Object.keys(missing.body.errors).sort(), ["database_type", "name", "sql_text"]);
    const big = `create table a (id int);\n${"-- padding\n".repeat(2500)}`;
    const tooBig = await api.post(base, { name: "Big", sql_text: big, database_type: "sqlite" });
    t.equal(tooBig.status, 422);
    t.match(tooBig.body.errors.sql_text[0], /the limit is 20 KB/);
    const huge = await api.post(base, { name: "Huge", sql_text: "x".repeat(200_000), database_type: "sqlite" });
    t.equal(huge.status, 413);
    t.equal((await api.get(base)).body.meta.total, 1, "none of these created anything");
  });

  t.test("hostile inputs answer 4xx quickly and the worker keeps parsing", async (t) => {
    const started = Date.now();
    const attempts = [
      { sql_text: "\u0001\u0002\u0003\u00ff binary \u0004", expect: 422 },
      { sql_text: "", expect: 422 },
      { sql_text: "((((((((((".repeat(900), expect: 422 },
      { sql_text: `CREATE TABLE deep (id int CHECK (${"(".repeat(9000)}1${")".repeat(9000)}));`, expect: [201, 422] },
      { sql_text: "x".repeat(10 * 1024 * 1024), expect: 413 },
      { sql_text: "CREATE TABLE ok (id int);\u0000", expect: 422 },
    ];
    for (const [index, attempt] of attempts.entries()) {
      const res = await api.post(base, { name: `Hostile ${index}`, sql_text: attempt.sql_text, database_type: "PostgreSQL" });
      const expected = Array.isArray(attempt.expect) ? attempt.expect : [attempt.expect];
      t.ok(expected.includes(res.status), `input ${index}: ${res.status} ${res.text.slice(0, 200)}`);
      if (res.status === 201) await api.delete(`${base}/${res.body.schema.id}`);
    }
    t.ok(Date.now() - started < 15_000, `answered in ${Date.now() - started} ms`);
    const fine = await api.post(base, { name: "After", sql_text: "CREATE TABLE after_all (id serial primary key);", database_type: "PostgreSQL" });
    t.equal(fine.status, 201, "the worker still parses");
    await api.delete(`${base}/${fine.body.schema.id}`);
  });

  t.test("Prefer: respond-async answers 202 with the job; the job's result names the schema", async (t) => {
    const res = await api.post(base, { name: "Later", sql_text: "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT) WITHOUT ROWID;", database_type: "sqlite" }, { headers: { prefer: "respond-async" } });
    t.equal(res.status, 202, res.text);
    t.equal(res.headers.get("location"), `/api/jobs/${res.body.job.id}`);
    let job = res.body.job;
    for (let i = 0; i < 100 && !["succeeded", "failed"].includes(job.status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await api.get(`/api/jobs/${job.id}`)).body.job;
    }
    t.equal(job.status, "succeeded");
    const schema = (await api.get(`${base}/${job.result.schema_id}`)).body.schema;
    t.match(schema.tables[0], { table_name: "t", options: { without_rowid: "true" } });
    t.equal((await api.delete(`${base}/${schema.id}`)).status, 200);
  });

  t.test("update: rename without a parse; new SQL keeps the ids of tables and fields that stay", async (t) => {
    const before = (await api.get(`${base}/${shopId}`)).body.schema;
    const renamed = await api.put(`${base}/${shopId}`, { name: "Shop v1" });
    t.equal(renamed.status, 200);
    t.equal(renamed.body.schema.name, "Shop v1");
    changed = shopMysql.replace("`name` varchar(100) DEFAULT NULL,", "`name` varchar(120) DEFAULT NULL,\n  `phone` varchar(30) DEFAULT NULL,");
    const res = await api.put(`${base}/${shopId}`, { name: "Shop v2", sql_text: changed });
    t.equal(res.status, 200, res.text);
    const after = res.body.schema;
    t.equal(after.name, "Shop v2");
    t.equal(after.tables[0].id, before.tables[0].id, "the table keeps its id");
    t.equal(after.tables[0].fields[2].id, before.tables[0].fields[2].id, "a changed field keeps its id");
    t.equal(after.tables[0].fields[2].length, 120);
    t.equal(after.tables[0].fields[3].field_name, "phone");
    t.notOk(before.tables[0].fields.some((f: { id: number }) => f.id === after.tables[0].fields[3].id), "a new field gets a new id");
    const bad = await api.put(`${base}/${shopId}`, { sql_text: "garbage garbage;" });
    t.equal(bad.status, 422);
    const unchanged = (await api.get(`${base}/${shopId}`)).body.schema;
    t.equal(unchanged.sql_text, changed, "a failed update leaves the schema as it was");
    t.equal(unchanged.tables_count, 2);
    const dialect = await api.put(`${base}/${shopId}`, { database_type: "PostgreSQL" });
    t.equal(dialect.status, 200, "the same text read as another dialect (it still parses, with warnings)");
    t.equal(dialect.body.schema.database_type, "PostgreSQL");
    t.equal((await api.put(`${base}/${shopId}`, { database_type: "MySQL" })).status, 200);
  });

  t.test("concurrent updates: the schema ends as exactly one of them", async (t) => {
    const texts = [1, 2, 3, 4].map((n) => `CREATE TABLE c${n} (id int primary key);`);
    const results = await Promise.all(texts.map((sql_text) => api.put(`${base}/${shopId}`, { sql_text, database_type: "MySQL" })));
    t.same(results.map((r) => r.status), [200, 200, 200, 200]);
    const final = (await api.get(`${base}/${shopId}`)).body.schema;
    t.ok(texts.includes(final.sql_text));
    t.same(final.tables.map((x: { table_name: string }) => x.table_name), [final.sql_text.match(/CREATE TABLE (\w+)/)![1]], "tables match the text");
    t.equal(await count(app.pool, "schema_revisions"), 0);
    t.equal((await api.put(`${base}/${shopId}`, { sql_text: changed })).status, 200);
  });

  /** A schema "Shop v2" (the dump with a phone column) of a user and project of its own, for subtests that must not lean on earlier ones. */
  const freshShopV2 = async () => {
    const owner = await buildUserWithToken(app.pool);
    const ownApi = client(app.url, owner.token);
    const own = `/api/projects/${await buildProject(app.pool, owner.user.id)}/schemas`;
    const v2 = shopMysql.replace("`name` varchar(100) DEFAULT NULL,", "`name` varchar(120) DEFAULT NULL,\n  `phone` varchar(30) DEFAULT NULL,");
    const res = await ownApi.post(own, { name: "Shop v2", sql_text: v2, database_type: "mariadb" });
    if (res.status !== 201) throw new Error(res.text);
    return { api: ownApi, base: own, shopId: res.body.schema.id as number };
  };

  t.test("export: SQL in its own or another dialect, JSON in the response shape; download headers", async (t) => {
    const { api, base, shopId } = await freshShopV2();
    const own = await api.get(`${base}/${shopId}/export`);
    t.equal(own.status, 200);
    t.match(own.headers.get("content-type"), /^application\/sql/);
    t.match(own.headers.get("content-disposition"), /^attachment; filename="Shop-v2\.mysql\.sql"$/);
    t.same(parseDdl(own.text, "MySQL").schema.tables.map((x) => x.table_name), ["customers", "orders"]);
    const pg = await api.get(`${base}/${shopId}/export?database_type=postgres`);
    const reparsed = parseDdl(pg.text, "PostgreSQL").schema;
    t.same(reparsed.tables.map((x) => x.fields.map((f) => f.field_name)), [["id", "email", "name", "phone"], ["id", "customer_id", "total"]]);
    t.ok(reparsed.tables[1]!.constraints.some((c) => c.type === "foreign_key" && c.references_table === "customers"));
    const json = await api.get(`${base}/${shopId}/export?format=json`);
    t.match(json.headers.get("content-disposition"), /filename="Shop-v2\.json"/);
    t.same(JSON.parse(json.text), (await api.get(`${base}/${shopId}`)).body);
    t.equal((await api.get(`${base}/${shopId}/export?format=xml`)).status, 422);
  });

  t.test("compare: differences as the spec and migration SQL in the target's dialect", async (t) => {
    const v3 = shopMysql
      .replace("`name` varchar(100) DEFAULT NULL,", "`name` varchar(200) NOT NULL,\n  `vip` tinyint(1) NOT NULL DEFAULT 0,")
      .replace(/CREATE TABLE `orders`[\s\S]*?ENGINE=InnoDB;/, "")
      .concat("CREATE TABLE `invoices` (`id` int NOT NULL AUTO_INCREMENT PRIMARY KEY, `customer_id` int unsigned NOT NULL, FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`));\n");
    const other = (await api.post(base, { name: "Shop v3", sql_text: v3, database_type: "MySQL" })).body.schema;
    const res = await api.post(`${base}/compare`, { schema_id_1: shopId, schema_id_2: other.id });
    t.equal(res.status, 200, res.text);
    const d = res.body.differences;
    t.same(d.added_tables, ["invoices"]);
    t.same(d.removed_tables, ["orders"]);
    t.same(d.modified_tables.customers.added_columns, ["vip"]);
    t.same(d.modified_tables.customers.removed_columns, ["phone"]);
    t.same(d.modified_tables.customers.modified_columns.map((c: { name: string }) => c.name), ["name"]);
    t.match(res.body.migration_sql, /CREATE TABLE `invoices`/);
    t.match(res.body.migration_sql, /DROP TABLE `orders`/);
    t.equal(res.body.database_type, "MySQL");
    const same = await api.post(`${base}/compare`, { schema_id_1: shopId, schema_id_2: shopId });
    t.same(same.body.differences, { added_tables: [], removed_tables: [], modified_tables: {} });
    t.equal(same.body.migration_sql, "");
    const missing = await api.post(`${base}/compare`, { schema_id_1: shopId, schema_id_2: 987654 });
    t.equal(missing.status, 422);
    t.same(Object.keys(missing.body.errors), ["schema_id_2"]);
  });

  t.test("translations: add, refuse duplicates and unknown names, update, list, export JSON and CSV, delete", async (t) => {
    const tr = `${base}/${shopId}/translations`;
    const table = await api.post(tr, { language: "de", table_name: "customers", label: "Kunden" });
    t.equal(table.status, 201, table.text);
    const field = await api.post(tr, { language: "de", table_name: "customers", field_name: "email", label: "=E-Mail", description: "Adresse" });
    t.equal(field.status, 201);
    t.equal((await api.post(tr, { language: "de", table_name: "customers", label: "Again" })).status, 422);
    t.match((await api.post(tr, { language: "de", table_name: "nope", label: "X" })).body.errors, { table_name: [/no table named nope/] });
    t.match((await api.post(tr, { language: "de", table_name: "customers", field_name: "nope", label: "X" })).body.errors, { field_name: [/no field named nope/] });
    t.equal((await api.post(tr, { language: "German", table_name: "customers", label: "X" })).status, 422);
    await api.post(tr, { language: "en", table_name: "customers", label: "Customers" });
    const updated = await api.put(`${tr}/${table.body.translation.id}`, { label: "Kundschaft" });
    t.equal(updated.body.translation.label, "Kundschaft");
    t.same((await api.get(`${tr}?language=de`)).body.data.map((x: { label: string }) => x.label), ["Kundschaft", "=E-Mail"]);
    const json = await api.get(`/api/projects/${projectId}/translations/export`);
    t.match(json.headers.get("content-disposition"), /attachment; filename=".*translations\.json"/);
    t.same(JSON.parse(json.text).de["Shop v2"].customers, { label: "Kundschaft", description: "", fields: { email: { label: "=E-Mail", description: "Adresse" } } });
    const csv = await api.get(`/api/projects/${projectId}/translations/export?format=csv&language=de`);
    t.match(csv.headers.get("content-type"), /^text\/csv/);
    t.same(csv.text.replace(/^\uFEFF/, "").trim().split("\n"), [
      "schema,language,table_name,field_name,label,description",
      "Shop v2,de,customers,,Kundschaft,",
      "Shop v2,de,customers,email,'=E-Mail,Adresse",
    ]);
    t.equal((await api.delete(`${tr}/${field.body.translation.id}`)).status, 200);
    t.equal((await api.delete(`${tr}/${field.body.translation.id}`)).status, 404);
  });

  t.test("translations of a schema-qualified table are kept under its qualified name, however it was named", async (t) => {
    const project = await buildProject(app.pool, alice.user.id);
    const schemas = `/api/projects/${project}/schemas`;
    const sqlText = "CREATE TABLE public.users (id int, email text);\nCREATE TABLE audit.users (id int);\nCREATE TABLE public.orders (id int);\n";
    const created = await api.post(schemas, { name: "Qualified", sql_text: sqlText, database_type: "PostgreSQL" });
    t.equal(created.status, 201, created.text);
    const tr = `${schemas}/${created.body.schema.id}/translations`;
    const bare = await api.post(tr, { language: "de", table_name: "orders", label: "Bestellungen" });
    t.equal(bare.status, 201, bare.text);
    t.equal(bare.body.translation.table_name, "public.orders", "the key the automatic translation and the export use");
    const again = await api.post(tr, { language: "de", table_name: "public.orders", label: "Aufträge" });
    t.equal(again.status, 422, "one label per table and language, whichever way the table is named");
    t.match(again.body.errors.language, [/exists already/]);
    const field = await api.post(tr, { language: "de", table_name: "public.users", field_name: "email", label: "E-Mail" });
    t.equal(field.status, 201, field.text);
    const ambiguous = await api.post(tr, { language: "de", table_name: "users", label: "Benutzer" });
    t.equal(ambiguous.status, 422, ambiguous.text);
    t.match(ambiguous.body.errors.table_name, ["Several tables are named users; name one with its schema: audit.users, public.users."]);
    t.same((await api.get(tr)).body.data.map((x: { table_name: string; field_name: string | null }) => [x.table_name, x.field_name]), [["public.orders", null], ["public.users", "email"]]);

    // A bundle exported before labels were keyed by qualified name names its tables bare.
    const bundle = JSON.parse((await api.get(`/api/projects/${project}/export`)).text);
    const labels = bundle.sections.schemas[0].translations as { language: string; table_name: string; field_name: string | null }[];
    for (const label of labels) if (label.field_name === null) label.table_name = "orders";
    labels.push({ ...labels[0]!, language: "fr", table_name: "users", field_name: null });
    const imported = await api.post("/api/projects/import", bundle);
    t.equal(imported.status, 201, imported.text);
    const copy = (await api.get(`/api/projects/${imported.body.project.id}/schemas`)).body.data[0].id;
    t.same(
      (await api.get(`/api/projects/${imported.body.project.id}/schemas/${copy}/translations`)).body.data.map((x: { language: string; table_name: string; field_name: string | null }) => [x.language, x.table_name, x.field_name]),
      [["de", "public.orders", null], ["de", "public.users", "email"], ["fr", "users", null]],
      "imported under the qualified name where the bare one means one table; an ambiguous one as it came",
    );
  });

  t.test("translations export: schemas that share a name are keyed `name (#id)` and never merge", async (t) => {
    const project = await buildProject(app.pool, alice.user.id);
    const schemas = `/api/projects/${project}/schemas`;
    const create = async (name: string) => {
      const res = await api.post(schemas, { name, sql_text: shopMysql, database_type: "MySQL" });
      t.equal(res.status, 201, res.text);
      return res.body.schema.id as number;
    };
    const label = async (id: number, language: string, label: string, field_name?: string) => {
      const res = await api.post(`${schemas}/${id}/translations`, { language, table_name: "customers", field_name, label });
      t.equal(res.status, 201, res.text);
    };
    const first = await create("Shop");
    const second = await create("Shop");
    const other = await create("Other");
    await label(first, "de", "Kunden A");
    await label(first, "en", "Customers A");
    await label(second, "de", "Kunden B");
    await label(second, "de", "Mail B", "email");
    await label(other, "de", "Kunden C");
    const exported = async (query = "") => JSON.parse((await api.get(`/api/projects/${project}/translations/export${query}`)).text);

    const json = await exported();
    t.same(Object.keys(json.de).sort(), ["Other", `Shop (#${first})`, `Shop (#${second})`].sort());
    t.same(json.de[`Shop (#${first})`].customers, { label: "Kunden A", description: "", fields: {} });
    t.same(json.de[`Shop (#${second})`].customers, { label: "Kunden B", description: "", fields: { email: { label: "Mail B", description: "" } } });
    t.same(json.de.Other.customers.label, "Kunden C", "a name of its own stays plain");
    t.same(Object.keys(json.en), [`Shop (#${first})`]);
    t.same(Object.keys((await exported("?language=en")).en), [`Shop (#${first})`], "the key does not depend on the language exported");

    const csv = await api.get(`/api/projects/${project}/translations/export?format=csv&language=de`);
    t.same(csv.text.replace(/^\uFEFF/, "").trim().split("\n"), [
      "schema,language,table_name,field_name,label,description",
      "Other,de,customers,,Kunden C,",
      `Shop (#${first}),de,customers,,Kunden A,`,
      `Shop (#${second}),de,customers,,Kunden B,`,
      `Shop (#${second}),de,customers,email,Mail B,`,
    ]);

    const lookalike = await create(`Shop (#${first})`);
    await label(lookalike, "de", "Kunden D");
    const withLookalike = (await exported()).de;
    t.same(withLookalike[`Shop (#${first})`].customers.label, "Kunden A", "a schema named like another's key does not take it");
    t.same(withLookalike[`Shop (#${first}) (#${lookalike})`].customers.label, "Kunden D");
    t.equal(Object.keys(withLookalike).length, 4);

    t.equal((await api.put(`${schemas}/${second}`, { name: "Shop 2" })).status, 200);
    t.same(Object.keys((await exported()).de).sort(), ["Other", "Shop", "Shop 2", `Shop (#${first})`].sort(), "unique names again: plain names");
  });

  t.test("/sql-parse: parse without a project, read it back; only its author can", async (t) => {
    const res = await api.post("/api/sql-parse", { sql_text: "CREATE TABLE dbo.[Users] ([Id] INT IDENTITY(1,1) NOT NULL, CONSTRAINT [PK_Users] PRIMARY KEY CLUSTERED ([Id] ASC)) ON [PRIMARY]\nGO\n", database_type: "sqlserver" });
    t.equal(res.status, 200, res.text);
    t.match(res.body.parse, { database_type: "MSSQL", tables_count: 1, tables: [{ id: null, table_name: "Users", fields: [{ id: null, field_name: "Id", is_auto_increment: true }] }] });
    const again = await api.get(`/api/sql-parse/${res.body.parse.id}/schema`);
    t.same(again.body, res.body);
    const bob = await buildUserWithToken(app.pool);
    t.equal((await client(app.url, bob.token).get(`/api/sql-parse/${res.body.parse.id}/schema`)).status, 404);
    const bad = await api.post("/api/sql-parse", { sql_text: "\u0000\u0001binary", database_type: "MySQL" });
    t.equal(bad.status, 422);
    t.equal(await count(app.pool, "sql_parses"), 1, "a failed parse is not kept");
  });

  t.test("/sql-parse: a user keeps only the newest parses, without their SQL text", async (t) => {
    const carol = await buildUserWithToken(app.pool);
    const c = client(app.url, carol.token);
    const ids: number[] = [];
    for (let i = 0; i <= KEPT_PARSES; i += 1) {
      const res = await c.post("/api/sql-parse", { sql_text: `create table t${i} (id int);`, database_type: "MySQL" });
      t.equal(res.status, 200, res.text);
      ids.push(res.body.parse.id);
    }
    t.equal((await c.get(`/api/sql-parse/${ids[0]}/schema`)).status, 404, "the oldest beyond the cap is gone");
    const newest = await c.get(`/api/sql-parse/${ids.at(-1)}/schema`);
    t.equal(newest.status, 200);
    t.equal(newest.body.parse.tables[0].table_name, `t${KEPT_PARSES}`);
    t.equal((await c.get(`/api/sql-parse/${ids[1]}/schema`)).status, 200, "the cap's worth of newest ones stay");
    const kept = await app.pool.one(sql.type(z.object({ count: z.number(), text_bytes: z.number() }))`
      select count(*)::int as count, coalesce(sum(octet_length(sql_text)), 0)::int as text_bytes from sql_parses where user_id = ${carol.user.id}`);
    t.same(kept, { count: KEPT_PARSES, text_bytes: 0 }, "the cap holds, and parsed texts are not kept");
    t.equal((await api.get(`/api/sql-parse/${ids.at(-1)}/schema`)).status, 404, "another user's parses stay theirs");
  });

  t.test("/sql-parse: a burst beyond the cap answers every request with its own parse; the cap holds again after", async (t) => {
    const dave = await buildUserWithToken(app.pool);
    const d = client(app.url, dave.token);
    const burst = KEPT_PARSES + 8;
    const answers = await Promise.all(
      Array.from({ length: burst }, (_, i) => d.post("/api/sql-parse", { sql_text: `create table burst${i} (id int);`, database_type: "MySQL" })),
    );
    answers.forEach((res, i) => {
      t.equal(res.status, 200, `request ${i}: ${res.text}`);
      t.equal(res.body.parse?.tables[0].table_name, `burst${i}`, `request ${i} gets its own parse`);
    });
    // Every request has read its parse: the next one takes the user back to the cap.
    const next = await d.post("/api/sql-parse", { sql_text: "create table after_burst (id int);", database_type: "MySQL" });
    t.equal(next.status, 200, next.text);
    const kept = await app.pool.anyFirst(sql.type(z.object({ id: z.number() }))`select id from sql_parses where user_id = ${dave.user.id} order by id`);
    t.equal(kept.length, KEPT_PARSES, "the newest parses only");
    t.equal(kept.at(-1), next.body.parse.id);
    const held = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from sql_parses where user_id = ${dave.user.id} and held_until is not null`);
    t.equal(await held(), 0, "a parse its request has read is held no more");
    const async = await d.post("/api/sql-parse", { sql_text: "create table later (id int);", database_type: "MySQL" }, { headers: { prefer: "respond-async" } });
    t.equal(async.status, 202, async.text);
    t.equal(await held(), 0, "nor one whose request answered 202 at once");
  });

  t.test("authorization: viewers read, members write, strangers see nothing; a locked project refuses changes", async (t) => {
    const viewer = await buildUserWithToken(app.pool);
    const member = await buildUserWithToken(app.pool);
    const stranger = await buildUserWithToken(app.pool);
    await buildTeam(app.pool, alice.user.id, { [viewer.user.id]: 4, [member.user.id]: 3 }, [projectId]);
    const v = client(app.url, viewer.token);
    const s = client(app.url, stranger.token);
    const body = { name: "V", sql_text: "create table v (id int);", database_type: "MySQL" };
    t.equal((await v.get(`${base}/${shopId}`)).status, 200);
    t.equal((await v.get(`${base}/${shopId}/export`)).status, 200);
    t.equal((await v.post(base, body)).status, 403);
    t.equal((await v.delete(`${base}/${shopId}`)).status, 403);
    t.equal((await s.get(base)).status, 404);
    t.equal((await s.get(`${base}/${shopId}/export`)).status, 404);
    t.equal((await s.post(`${base}/compare`, { schema_id_1: shopId, schema_id_2: shopId })).status, 404);
    t.equal((await s.get(`/api/projects/${projectId}/translations/export`)).status, 404);
    const created = await client(app.url, member.token).post(base, body);
    t.equal(created.status, 201, "a team member adds content");
    t.equal((await api.post(`/api/projects/${projectId}/lock`)).status, 200);
    t.equal((await api.post(base, body)).status, 423);
    t.equal((await api.put(`${base}/${shopId}`, { name: "locked" })).status, 423);
    t.equal((await api.post(`${base}/${shopId}/translations`, { language: "fr", table_name: "customers", label: "Clients" })).status, 423);
    t.equal((await api.get(`${base}/${shopId}`)).status, 200, "reads still work");
    t.equal((await api.post(`/api/projects/${projectId}/unlock`)).status, 200);
    t.equal((await api.delete(`${base}/${created.body.schema.id}`)).status, 200);
  });

  t.test("project bundles carry schemas and their translations", async (t) => {
    const exported = await api.get(`/api/projects/${projectId}/export`);
    t.equal(exported.status, 200);
    const bundle = JSON.parse(exported.text);
    t.equal(bundle.sections.schemas.length, 2);
    const imported = await api.post("/api/projects/import", bundle);
    t.equal(imported.status, 201, imported.text);
    const copyId = imported.body.project.id;
    t.equal(imported.body.project.schemas_count, 2);
    const copies = (await api.get(`/api/projects/${copyId}/schemas`)).body.data;
    const copy = (await api.get(`/api/projects/${copyId}/schemas/${copies.find((c: { name: string }) => c.name === "Shop v2").id}`)).body.schema;
    const original = (await api.get(`${base}/${shopId}`)).body.schema;
    const strip = (s: typeof original) => s.tables.map(({ id: _, fields, ...rest }: { id: number; fields: { id: number }[] }) => ({ ...rest, fields: fields.map(({ id: _f, ...f }) => f) }));
    t.same(strip(copy), strip(original));
    t.same((await api.get(`/api/projects/${copyId}/schemas/${copy.id}/translations`)).body.data.map((x: { label: string }) => x.label).sort(), ["Customers", "Kundschaft"]);
    bundle.sections.schemas[0].sql_text = "nothing sql here";
    const broken = await api.post("/api/projects/import", bundle);
    t.equal(broken.status, 422);
    t.match(Object.keys(broken.body.errors)[0], /^sections\.schemas\.0\.sql_text$/);
  });

  t.test("bundles: SCHEMA_SQL_MAX_BYTES per schema, and validate parses the SQL as import does", async (t) => {
    const bundle = JSON.parse((await api.get(`/api/projects/${projectId}/export`)).text);
    const projects = async () => (await api.get("/api/projects")).body.meta.total;
    const before = await projects();
    const check = async (changed: unknown) => {
      const validated = await api.post("/api/projects/import/validate", changed);
      const imported = await api.post("/api/projects/import", changed);
      return { validated: validated.body, imported };
    };

    const valid = await check(bundle);
    t.same([valid.validated.valid, valid.validated.summary.schemas], [true, 2]);
    t.equal(valid.imported.status, 201);
    await api.delete(`/api/projects/${valid.imported.body.project.id}`);

    const oversized = structuredClone(bundle);
    oversized.sections.schemas[1].sql_text = `create table a (id int);\n${"-- padding\n".repeat(2500)}`;
    const big = await check(oversized);
    t.equal(big.validated.valid, false);
    t.same(Object.keys(big.validated.errors), ["sections.schemas.1.sql_text"]);
    t.match(big.validated.errors["sections.schemas.1.sql_text"][0], /the limit is 20 KB/);
    t.equal(big.imported.status, 422);
    t.same(big.imported.body.errors, big.validated.errors, "import refuses what validate refuses, with the same errors");

    const unparsable = structuredClone(bundle);
    unparsable.sections.schemas[1].sql_text = "\n  not sql at all;";
    const bad = await check(unparsable);
    t.equal(bad.validated.valid, false, "validate parses the SQL");
    t.match(bad.validated.errors["sections.schemas.1.sql_text"][0], /^Line 2, column \d+: /);
    t.equal(bad.imported.status, 422);
    t.same(bad.imported.body.errors, bad.validated.errors);

    const nul = structuredClone(bundle);
    nul.sections.schemas[0].translations[0].label = "bad\u0000label";
    const form = (file: unknown) => {
      const data = new FormData();
      data.set("bundle", new Blob([JSON.stringify(file)], { type: "application/json" }), "project.json");
      return data;
    };
    const upload = (path: string) => fetch(`${app.url}/api${path}`, { method: "POST", headers: { authorization: `Bearer ${alice.token}` }, body: form(nul) });
    const nulValidated = (await (await upload("/projects/import/validate")).json()) as { valid: boolean; errors: Record<string, string[]> };
    t.same(nulValidated, { valid: false, errors: { "sections.schemas.0.translations.0.label": ["The value contains a NUL character; send text, not binary data."] }, summary: null });
    const nulImported = await upload("/projects/import");
    t.equal(nulImported.status, 422, "a NUL in an uploaded bundle file is a 422, not a database error");
    t.equal(await projects(), before, "none of the refused bundles left a project");
  });
});

t.test("bundle import: all of a bundle's SQL parses within SCHEMA_PARSE_TIMEOUT_MS, off the web process's event loop", async (t) => {
  const app = await startTestApp(t, { env: { SCHEMA_PARSE_TIMEOUT_MS: "300" } });
  const alice = await buildUserWithToken(app.pool);
  const api = client(app.url, alice.token);
  // 10,000 tables (about 1 MB): the parser spends 90 ms or more on each copy, so eight take far more than the 300 ms budget.
  const wide = Array.from({ length: 10_000 }, (_, i) => `CREATE TABLE t${i} (id int PRIMARY KEY, name varchar(100) NOT NULL DEFAULT 'x', at timestamp);`).join("\n");
  const schemas = Array.from({ length: 8 }, (_, i) => ({ id: i + 1, name: `Wide ${i}`, database_type: "PostgreSQL", sql_text: wide }));
  const bundle = { format: "schemaforge-project", version: 1, project: { name: "Wide" }, sections: { schemas } };

  // While the parses run on their threads, this event loop answers /api/health (no clock judges it).
  let pending = true;
  let healthAnswers = 0;
  const validating = api.post("/api/projects/import/validate", bundle).finally(() => (pending = false));
  while (pending) if ((await client(app.url).get("/api/health")).status === 200 && pending) healthAnswers += 1;
  const validated = await validating;
  t.equal(validated.body.valid, false, validated.text.slice(0, 300));
  const [key, messages] = Object.entries(validated.body.errors as Record<string, string[]>)[0]!;
  t.match(key, /^sections\.schemas\.\d\.sql_text$/);
  t.match(messages[0], /took too long to parse|took longer than the limit of 0\.3 s/, "stopped at the bundle's budget");
  t.ok(healthAnswers >= 1, `requests kept being served while it parsed (${healthAnswers} health answers)`);

  const imported = await api.post("/api/projects/import", bundle);
  t.equal(imported.status, 422);
  t.equal((await api.get("/api/projects")).body.meta.total, 0);
});
