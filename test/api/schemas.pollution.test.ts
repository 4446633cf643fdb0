/**
 * Names users choose (schema, table, field and template variable names) that are also
 * property names of Object.prototype: `__proto__`, `constructor`, and the option names of
 * the project guard (`allowLocked`, `allowExpired`, `allowArchived`). The test app runs in
 * this process, so a write that landed on Object.prototype in the web process would show
 * here, and would switch off the guards that refuse changes to locked, expired and
 * archived projects.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { buildTemplate } from "../support/templateFactories.ts";

const guardOptions = ["allowLocked", "allowExpired", "allowArchived"] as const;

const hostileSql = `CREATE TABLE \`allowLocked\` (\`id\` int NOT NULL, \`__proto__\` int, \`constructor\` varchar(20), PRIMARY KEY (\`id\`));
CREATE TABLE \`allowExpired\` (\`id\` int NOT NULL);
CREATE TABLE \`allowArchived\` (\`id\` int NOT NULL);
CREATE TABLE \`constructor\` (\`toString\` int, \`__proto__\` int);
`;
const ctorSql = "CREATE TABLE `__proto__` (`hasOwnProperty` int, `constructor` int);";

/** The own property `key` of `value` (never an inherited one). */
const ownValue = (value: unknown, key: string): any => {
  if (typeof value !== "object" || value === null) return undefined;
  return Object.getOwnPropertyDescriptor(value, key)?.value;
};

t.test("names that are prototype properties", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const alice = await buildUserWithToken(app.pool);
  const api = client(app.url, alice.token);
  const projectId = await buildProject(app.pool, alice.user.id);
  const base = `/api/projects/${projectId}/schemas`;
  t.teardown(() => {
    // Should the fix regress, leave no pollution behind for anything else in this process.
    for (const key of guardOptions) delete (Object.prototype as Record<string, unknown>)[key];
  });

  const proto = await api.post(base, { name: "__proto__", sql_text: hostileSql, database_type: "MySQL" });
  t.equal(proto.status, 201, proto.text);
  const ctor = await api.post(base, { name: "constructor", sql_text: ctorSql, database_type: "MySQL" });
  t.equal(ctor.status, 201, ctor.text);
  const protoId: number = proto.body.schema.id;
  const ctorId: number = ctor.body.schema.id;

  t.test("translations on those names, exported as JSON, pollute nothing and round-trip", async (t) => {
    const add = async (schemaId: number, body: Record<string, unknown>) => {
      const res = await api.post(`${base}/${schemaId}/translations`, { language: "de", ...body });
      t.equal(res.status, 201, res.text);
    };
    for (const table of guardOptions) await add(protoId, { table_name: table, label: `T ${table}` });
    await add(protoId, { table_name: "allowLocked", field_name: "__proto__", label: "F proto" });
    await add(protoId, { table_name: "allowLocked", field_name: "constructor", label: "F ctor" });
    await add(protoId, { table_name: "constructor", label: "T ctor" });
    await add(protoId, { table_name: "constructor", field_name: "__proto__", label: "F ctor.proto" });
    await add(ctorId, { table_name: "__proto__", label: "T proto" });
    await add(ctorId, { table_name: "__proto__", field_name: "hasOwnProperty", label: "F own" });
    await add(ctorId, { table_name: "__proto__", field_name: "constructor", label: "F proto.ctor" });

    const res = await api.get(`/api/projects/${projectId}/translations/export`);
    t.equal(res.status, 200, res.text);
    for (const key of guardOptions) {
      t.equal(({} as Record<string, unknown>)[key], undefined, `({}).${key} is undefined`);
      t.notOk(Object.hasOwn(Object.prototype, key), `Object.prototype has no ${key}`);
    }
    const de = ownValue(JSON.parse(res.text), "de");
    t.same(Object.keys(de).sort(), ["__proto__", "constructor"]);
    const protoSchema = ownValue(de, "__proto__");
    t.same(Object.keys(protoSchema).sort(), ["allowArchived", "allowExpired", "allowLocked", "constructor"]);
    t.equal(ownValue(protoSchema, "allowLocked").label, "T allowLocked");
    t.same(ownValue(ownValue(protoSchema, "allowLocked").fields, "__proto__"), { label: "F proto", description: "" });
    t.same(ownValue(ownValue(protoSchema, "allowLocked").fields, "constructor"), { label: "F ctor", description: "" });
    t.equal(ownValue(protoSchema, "constructor").label, "T ctor");
    t.same(ownValue(ownValue(protoSchema, "constructor").fields, "__proto__"), { label: "F ctor.proto", description: "" });
    const ctorTable = ownValue(ownValue(de, "constructor"), "__proto__");
    t.same(ctorTable, { label: "T proto", description: "", fields: { hasOwnProperty: { label: "F own", description: "" }, constructor: { label: "F proto.ctor", description: "" } } });

    const csv = await api.get(`/api/projects/${projectId}/translations/export?format=csv`);
    t.ok(csv.text.includes("__proto__,de,allowLocked,__proto__,F proto,"), "CSV carries the names as they are");
  });

  t.test("after the export the guards still refuse changes: locked 423, expired 402, archived 409", async (t) => {
    const change = () => api.put(`${base}/${protoId}`, { name: "changed" });
    const translate = () => api.post(`${base}/${protoId}/translations`, { language: "fr", table_name: "allowLocked", label: "x" });
    t.equal((await api.post(`/api/projects/${projectId}/lock`)).status, 200);
    t.equal((await change()).status, 423);
    t.equal((await translate()).status, 423);
    t.equal((await api.post(`/api/projects/${projectId}/unlock`)).status, 200);

    await app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() - interval '1 day' where project_id = ${projectId}`);
    t.equal((await change()).status, 402);
    await app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() + interval '1 year' where project_id = ${projectId}`);

    t.equal((await api.post(`/api/projects/${projectId}/archive`)).status, 200);
    t.equal((await change()).status, 409);
    t.equal((await api.post(`/api/projects/${projectId}/unarchive`)).status, 200);
    t.equal((await change()).status, 200, "and allow them again once the project is writable");
    t.equal((await api.put(`${base}/${protoId}`, { name: "__proto__" })).status, 200);
  });

  t.test("the schema's own JSON export, the single read and compare keep such names", async (t) => {
    const exported = await api.get(`${base}/${protoId}/export?format=json`);
    t.equal(exported.status, 200);
    const schema = ownValue(JSON.parse(exported.text), "schema");
    t.equal(schema.name, "__proto__");
    t.same(schema.tables.map((x: { table_name: string }) => x.table_name), ["allowLocked", "allowExpired", "allowArchived", "constructor"]);
    t.same(schema.tables[0].fields.map((f: { field_name: string }) => f.field_name), ["id", "__proto__", "constructor"]);
    t.same(schema.tables[3].fields.map((f: { field_name: string }) => f.field_name), ["toString", "__proto__"]);
    t.same(JSON.parse(exported.text), (await api.get(`${base}/${protoId}`)).body);

    const table = (await api.get(`${base}/${ctorId}/export?format=json`)).body.schema.tables[0];
    t.same([table.table_name, table.fields.map((f: { field_name: string }) => f.field_name)], ["__proto__", ["hasOwnProperty", "constructor"]]);

    const other = await api.post(base, { name: "constructor 2", sql_text: ctorSql.replace("`constructor` int", "`constructor` bigint, `extra` int"), database_type: "MySQL" });
    t.equal(other.status, 201, other.text);
    const compared = await api.post(`${base}/compare`, { schema_id_1: ctorId, schema_id_2: other.body.schema.id });
    t.equal(compared.status, 200, compared.text);
    const modified = ownValue(JSON.parse(compared.text).differences.modified_tables, "__proto__");
    t.same(modified.added_columns, ["extra"]);
    t.same(modified.modified_columns.map((c: { name: string }) => c.name), ["constructor"]);
  });

  t.test("template variables named constructor and __proto__ are values like any other", async (t) => {
    const templates = `/api/projects/${projectId}/templates`;
    const id = await buildTemplate(app.pool, { projectId }, alice.user.id, {
      content: "{:constructor:}/{:__proto__:}",
      variables: [
        { name: "constructor", type: "string", required: true },
        { name: "__proto__", type: "string", default_value: "fallback" },
      ],
      files: [],
    });
    const missing = await api.post(`${templates}/${id}/execute`, {});
    t.equal(missing.status, 422, missing.text);
    t.same(missing.body.errors, { constructor: ["The constructor variable is required."] }, "not taken from Object.prototype");
    const ran = await api.post(`${templates}/${id}/execute`, { constructor: "Given" });
    t.equal(ran.status, 200, ran.text);
    t.equal(ran.body.output, "Given/fallback", "a default under the name __proto__ is kept");
    const saved = await api.put(`${templates}/${id}/values`, {});
    t.equal(saved.status, 200, `saving values checks only what is given: ${saved.text}`);
  });

  t.test("a generated file named __proto__ is recorded; a loop variable named __proto__ reaches code blocks", async (t) => {
    const templates = `/api/projects/${projectId}/templates`;
    const id = await buildTemplate(app.pool, { projectId }, alice.user.id, {
      content: "{:for __proto__ in items:}{:code:}__proto__.n * 2{:codeend:},{:endfor:}",
      variables: [
        { name: "items", type: "list", default_value: [{ n: 1 }, { n: 2 }] },
        { name: "fname", type: "string", default_value: "__proto__" },
      ],
      // A file name starting with _ is a partial; a rendered name is not.
      files: [{ file_name: "{:fname:}", content: "special" }, { file_name: "plain.txt", content: "plain" }],
    });
    const ran = await api.post(`${templates}/${id}/execute`, {});
    t.equal(ran.status, 200, ran.text);
    t.equal(ran.body.output, "2,4,");
    const paths = await app.pool.anyFirst(sql.type(z.object({ path: z.string() }))`
      select f.path from code_generation_files f where f.code_generation_id = ${ran.body.code_generation_id} order by f.path`);
    t.same(paths, ["__proto__", "plain.txt"]);
  });

  t.test("project bundles carry a schema named __proto__ with its translations", async (t) => {
    const bundle = JSON.parse((await api.get(`/api/projects/${projectId}/export`)).text);
    const imported = await api.post("/api/projects/import", bundle);
    t.equal(imported.status, 201, imported.text);
    const copies = (await api.get(`/api/projects/${imported.body.project.id}/schemas?q=proto`)).body.data;
    t.same(copies.map((c: { name: string }) => c.name), ["__proto__"]);
    const labels = await api.get(`/api/projects/${imported.body.project.id}/schemas/${copies[0].id}/translations`);
    t.equal(labels.body.data.length, 7);
  });
});
