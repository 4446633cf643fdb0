/**
 * Migration 0171: labels stored under a bare table name (`orders` for `public.orders`, as the
 * translations route stored them before it keyed labels by qualified name) move to the
 * qualified name when the bare name resolves to exactly one table of the schema's current
 * parse. A database migrated up to the one before it gets such labels, then the rest runs.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import t from "tap";
import { z } from "zod";
import { createPool, sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { migrate, migrationsDir, pendingMigrations, readMigrations } from "../../../shared/db/migrate.ts";
import { emptyDatabase } from "../../support/db.ts";
import { buildProject, buildUser } from "../../support/factories.ts";
import { buildSchema } from "../../support/templateFactories.ts";

const MIGRATION = 171;

const labelRow = z.object({ language: z.string(), table_name: z.string(), field_name: z.string().nullable(), label: z.string(), source: z.string() });

const shop = `
CREATE TABLE public.orders (id int PRIMARY KEY, total numeric(10,2));
CREATE TABLE public.customers (id int PRIMARY KEY, email text);
CREATE TABLE sales.items (id int PRIMARY KEY, sku text);
CREATE TABLE stock.items (id int PRIMARY KEY, sku text);`;

async function label(pool: DatabasePool, schemaId: number, l: Omit<z.infer<typeof labelRow>, "source"> & { source?: string }): Promise<void> {
  await pool.query(sql.type(z.object({}))`
    insert into schema_translations (schema_id, language, table_name, field_name, label, source)
    values (${schemaId}, ${l.language}, ${l.table_name}, ${l.field_name}, ${l.label}, ${l.source ?? "human"})`);
}

const labels = (pool: DatabasePool, schemaId: number) =>
  pool.any(sql.type(labelRow)`
    select language, table_name, field_name, label, source from schema_translations where schema_id = ${schemaId}
    order by language, table_name, field_name nulls first, label`);

t.test("0171 moves bare-named labels to their table's qualified name where the name is unambiguous", async (t) => {
  const url = await emptyDatabase(t);
  const dir = await mkdtemp(path.join(os.tmpdir(), "migrations-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const all = await readMigrations();
  t.ok(all.some((m) => m.version === MIGRATION), "the migration exists");
  for (const m of all.filter((m) => m.version < MIGRATION)) await cp(path.join(migrationsDir, m.file), path.join(dir, m.file));
  await migrate(url, () => {}, dir);

  const pool = await createPool(url, { maxPoolSize: 2 });
  t.teardown(() => pool.end());
  const user = await buildUser(pool);
  const project = await buildProject(pool, user.id);
  const schema = await buildSchema(pool, project, user.id, shop, "shop");
  const plain = await buildSchema(pool, project, user.id, "CREATE TABLE orders (id int PRIMARY KEY);", "plain");

  // Stored by the route before it qualified names.
  await label(pool, schema, { language: "en", table_name: "orders", field_name: null, label: "Orders" });
  await label(pool, schema, { language: "en", table_name: "orders", field_name: "total", label: "Total" });
  // A machine label at the qualified key, beside a person's label under the bare one.
  await label(pool, schema, { language: "de", table_name: "customers", field_name: null, label: "Kundschaft" });
  await label(pool, schema, { language: "de", table_name: "public.customers", field_name: null, label: "Kunden", source: "machine" });
  // Two labels a person wrote for the same table, one under each name.
  await label(pool, schema, { language: "fr", table_name: "customers", field_name: null, label: "Clientèle" });
  await label(pool, schema, { language: "fr", table_name: "public.customers", field_name: null, label: "Clients" });
  // Already qualified; ambiguous; no longer in the parse.
  await label(pool, schema, { language: "en", table_name: "public.customers", field_name: "email", label: "E-mail" });
  await label(pool, schema, { language: "en", table_name: "items", field_name: null, label: "Items" });
  await label(pool, schema, { language: "en", table_name: "invoices", field_name: null, label: "Invoices" });
  // A table without a schema name: its bare name is its qualified name.
  await label(pool, plain, { language: "en", table_name: "orders", field_name: null, label: "Plain orders" });

  t.same((await migrate(url)).applied.map((f) => Number(f.slice(0, 4))), all.filter((m) => m.version >= MIGRATION).map((m) => m.version));
  t.same(await pendingMigrations(url), []);

  t.same(await labels(pool, schema), [
    { language: "de", table_name: "public.customers", field_name: null, label: "Kundschaft", source: "human" },
    { language: "en", table_name: "invoices", field_name: null, label: "Invoices", source: "human" },
    { language: "en", table_name: "items", field_name: null, label: "Items", source: "human" },
    { language: "en", table_name: "public.customers", field_name: "email", label: "E-mail", source: "human" },
    { language: "en", table_name: "public.orders", field_name: null, label: "Orders", source: "human" },
    { language: "en", table_name: "public.orders", field_name: "total", label: "Total", source: "human" },
    { language: "fr", table_name: "customers", field_name: null, label: "Clientèle", source: "human" },
    { language: "fr", table_name: "public.customers", field_name: null, label: "Clients", source: "human" },
  ]);
  t.same(await labels(pool, plain), [{ language: "en", table_name: "orders", field_name: null, label: "Plain orders", source: "human" }]);
});
