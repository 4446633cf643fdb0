import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken, projectStateRefusals, setProjectState } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { startDeeplPeer } from "../support/peers/deeplPeer.ts";
import { buildSchema } from "../support/templateFactories.ts";
import { until } from "../support/wait.ts";

// 1 + 60 fields in one table and 1 + 2 in another: 64 labels, two batches.
const ddl = `create table order_items (${Array.from({ length: 60 }, (_, i) => `unit_price_${i} integer`).join(", ")});
create table customers (id integer primary key, fullName text);`;

const rows = (pool: DatabasePool, schemaId: number) =>
  pool.any(sql.type(z.object({ table_name: z.string(), field_name: z.string().nullable(), label: z.string(), source: z.string() }))`
    select table_name, field_name, label, source from schema_translations where schema_id = ${schemaId} and language = 'de' order by table_name, field_name nulls first`);

t.test("automatic translation against a DeepL-shaped provider keeps human entries", async (t) => {
  const deepl = await startDeeplPeer(t);
  const app = await startTestApp(t, { worker: true, env: { TRANSLATION_API_URL: deepl.url, TRANSLATION_API_KEY: deepl.key } });
  const owner = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const projectId = await buildProject(app.pool, owner.user.id);
  const schemaId = await buildSchema(app.pool, projectId, owner.user.id, ddl, "shop");
  const api = client(app.url, owner.token);
  const base = `/api/projects/${projectId}/schemas/${schemaId}/translations`;

  t.equal((await client(app.url, stranger.token).post(`${base}/auto`, { target_language: "de" })).status, 404, "a stranger does not see the project");
  t.equal((await api.post(`${base}/auto`, { target_language: "German!" })).status, 422);

  const human = await api.post(base, { language: "de", table_name: "customers", label: "Kundschaft" });
  t.equal(human.status, 201, human.text);
  const machineThenEdited = await api.post(base, { language: "de", table_name: "customers", field_name: "id", label: "Nummer" });
  t.equal(machineThenEdited.status, 201);

  const queued = await api.post(`${base}/auto`, { target_language: "de", source_language: "en" });
  t.equal(queued.status, 202, queued.text);
  const jobId = queued.body.job.id as number;
  const job = await until(async () => {
    const res = await api.get(`/api/jobs/${jobId}`);
    return ["succeeded", "failed"].includes(res.body?.job?.status ?? res.body?.status) ? res.body : undefined;
  }, { message: "the translation job" });
  const status = job.job?.status ?? job.status;
  t.equal(status, "succeeded", JSON.stringify(job));

  t.same(deepl.requests.map((r) => r.text.length), [50, 12], "two batches, none over 50 texts (64 labels, 2 kept)");
  t.ok(deepl.requests.every((r) => r.target_lang === "DE" && r.source_lang === "EN"));
  t.ok(deepl.requests[0]!.text.includes("Unit price 0"), "names are humanised before translation");
  const after = await rows(app.pool, schemaId);
  t.equal(after.length, 64);
  t.same(after.find((r) => r.table_name === "customers" && r.field_name === null), { table_name: "customers", field_name: null, label: "Kundschaft", source: "human" });
  t.same(after.find((r) => r.table_name === "customers" && r.field_name === "id"), { table_name: "customers", field_name: "id", label: "Nummer", source: "human" });
  t.same(after.find((r) => r.field_name === "fullname" || r.field_name === "fullName")?.label.startsWith("[DE] Full"), true);
  t.equal(after.filter((r) => r.source === "machine").length, 62);

  // A person edits a machine label; the next run keeps it and refreshes the others.
  const machine = (await api.get(`${base}?language=de`)).body.data.find((r: { table_name: string; field_name: string | null }) => r.table_name === "order_items" && r.field_name === null);
  t.equal((await api.put(`${base}/${machine.id}`, { label: "Bestellpositionen" })).status, 200);
  const again = await api.post(`${base}/auto`, { target_language: "de" });
  t.equal(again.status, 202);
  await until(async () => ((await api.get(`/api/jobs/${again.body.job.id}`)).body?.job?.status === "succeeded" ? true : undefined), { message: "the second run" });
  const kept = (await rows(app.pool, schemaId)).find((r) => r.table_name === "order_items" && r.field_name === null);
  t.same(kept, { table_name: "order_items", field_name: null, label: "Bestellpositionen", source: "human" });
  t.equal(deepl.requests.slice(2).reduce((n, r) => n + r.text.length, 0), 61, "the second run sent only the machine entries");
});

t.test("without a provider: 503 translation_unavailable, nothing queued", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const projectId = await buildProject(app.pool, owner.user.id);
  const schemaId = await buildSchema(app.pool, projectId, owner.user.id, ddl, "shop");
  const res = await client(app.url, owner.token).post(`/api/projects/${projectId}/schemas/${schemaId}/translations/auto`, { target_language: "de" });
  t.equal(res.status, 503);
  t.equal(res.body.code, "translation_unavailable");
  t.equal(await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from jobs`), 0);
});

t.test("a locked, expired or archived project refuses automatic translation with its state's answer, nothing queued", async (t) => {
  // A provider is configured (never called: no worker runs), so only the project's state refuses.
  const app = await startTestApp(t, { env: { TRANSLATION_API_URL: "https://translate.example.com", TRANSLATION_API_KEY: "key" } });
  const owner = await buildUserWithToken(app.pool);
  const projectId = await buildProject(app.pool, owner.user.id);
  const schemaId = await buildSchema(app.pool, projectId, owner.user.id, ddl, "shop");
  const auto = () => client(app.url, owner.token).post(`/api/projects/${projectId}/schemas/${schemaId}/translations/auto`, { target_language: "de" });
  const jobs = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from jobs`);
  for (const { state, status, code } of projectStateRefusals) {
    await setProjectState(app.pool, projectId, state);
    const res = await auto();
    t.match({ status: res.status, code: res.body?.code }, { status, code }, state);
  }
  t.equal(await jobs(), 0, "nothing queued");
  await setProjectState(app.pool, projectId, "normal");
  t.equal((await auto()).status, 202, "back to normal, it is queued");
});

t.test("a project locked after the request: the job fails with the state's answer, asks the provider nothing and writes no label", async (t) => {
  const deepl = await startDeeplPeer(t);
  const env = { TRANSLATION_API_URL: deepl.url, TRANSLATION_API_KEY: deepl.key };
  // No worker yet: the job waits in the queue while the project changes state.
  const app = await startTestApp(t, { env });
  const owner = await buildUserWithToken(app.pool);
  const projectId = await buildProject(app.pool, owner.user.id);
  const schemaId = await buildSchema(app.pool, projectId, owner.user.id, ddl, "shop");
  const api = client(app.url, owner.token);
  const queue = async () => {
    const res = await api.post(`/api/projects/${projectId}/schemas/${schemaId}/translations/auto`, { target_language: "de" });
    t.equal(res.status, 202, res.text);
    return res.body.job.id as number;
  };
  const locked = await queue();
  t.equal((await api.post(`/api/projects/${projectId}/lock`)).status, 200);
  await startTestApp(t, { db: app.db, worker: true, env });
  const finished = (id: number) => until(async () => {
    const job = (await api.get(`/api/jobs/${id}`)).body?.job;
    return ["succeeded", "failed"].includes(job?.status) ? job : undefined;
  }, { message: "the translation job" });
  t.match(await finished(locked), { status: "failed", error_code: "project_locked" });
  t.same(deepl.requests, [], "the provider was not asked");
  t.same(await rows(app.pool, schemaId), [], "no label written into the locked project");

  t.equal((await api.post(`/api/projects/${projectId}/unlock`)).status, 200);
  t.match(await finished(await queue()), { status: "succeeded" }, "unlocked, it translates");
  t.equal((await rows(app.pool, schemaId)).length, 64);
});
