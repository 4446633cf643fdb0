/**
 * Store templates through the API: the seller profile gate, create from one's own
 * templates only, update, publish freezing a version (a later publish a new one), the
 * plagiarism check at publish and by administrators, delete and withdraw; browsing a
 * seeded catalogue of 240 templates: typo queries, filters, sorts and the page envelope.
 */
import pg from "pg";
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { untilWaitingOnLocks } from "../../support/lockWaits.ts";
import { catalogue } from "../../support/storeCatalogue.ts";
import { buildSeller, seedCatalogue } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

const crudTemplate = {
  name: "CRUD controllers",
  content: "{:for table in schema.tables:}{:table.name|pascal:}Controller{:endfor:}",
  variables: [{ name: "schema", type: "schema" as const, required: true }, { name: "namespace", type: "string" as const }],
  files: [
    {
      file_name: "src/{:namespace|kebab:}/controllers.ts",
      content: [
        "import { Router } from 'express';",
        "{:for table in schema.tables:}",
        "export const {:table.name|camel:}Router = Router();",
        "{:table.name|camel:}Router.get('/', async (req, res) => res.json(await db.{:table.name|camel:}.findMany()));",
        "{:table.name|camel:}Router.post('/', async (req, res) => res.status(201).json(await db.{:table.name|camel:}.create({ data: req.body })));",
        "// namespace {:namespace:}",
        "{:endfor:}",
      ].join("\n"),
    },
  ],
};

/** The same template with its variables renamed and its whitespace reformatted. */
const copiedTemplate = {
  ...crudTemplate,
  name: "My own controllers",
  content: "{: for entity in db_schema.tables :}{: entity.name | pascal :}Controller{: endfor :}",
  variables: [{ name: "db_schema", type: "schema" as const, required: true }, { name: "ns", type: "string" as const }],
  files: [
    {
      file_name: "src/{:ns|kebab:}/controllers.ts",
      content: crudTemplate.files[0]!.content
        .replaceAll("schema.tables", "db_schema.tables")
        .replaceAll("table in", "entity in")
        .replaceAll("table.name", "entity.name")
        .replaceAll("{:namespace:}", "{:ns:}")
        .replaceAll(" => ", "  =>\n    ")
        .replaceAll("\n", "\n\n  "),
    },
  ],
};

const unrelatedTemplate = {
  name: "Mail layout",
  content: "<html><body><h1>{:title:}</h1><p>{:intro:}</p></body></html>",
  variables: [{ name: "title", type: "string" as const }, { name: "intro", type: "string" as const }],
  files: [{ file_name: "mail/layout.mjml", content: "<mjml><mj-body><mj-section><mj-column><mj-text font-size=\"20px\">{:title|upper:}</mj-text><mj-image src=\"{:logo_url:}\"/></mj-column></mj-section></mj-body></mjml>" }],
};

t.test("store templates", async (t) => {
  const app = await startTestApp(t);
  const seller = await buildSeller(app);
  const copier = await buildSeller(app);
  const plain = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool, { roles: ["user", "admin"] });
  const project = await buildProject(app.pool, seller.user.id);
  const original = await buildTemplate(app.pool, { projectId: project }, seller.user.id, crudTemplate);
  const copierProject = await buildProject(app.pool, copier.user.id);
  const copy = await buildTemplate(app.pool, { projectId: copierProject }, copier.user.id, copiedTemplate);
  const unrelated = await buildTemplate(app.pool, { ownerId: copier.user.id }, copier.user.id, unrelatedTemplate);
  const body = { name: "Express CRUD", description: "REST controllers per table", category: "APIs", language: "TypeScript", price_type: "credits", price_credits: 150 };
  const counts = () =>
    app.pool.one(sql.type(z.object({ templates: z.number(), versions: z.number() }))`
      select (select count(*)::int from store_templates) as templates, (select count(*)::int from store_template_versions) as versions`);

  let storeId = 0;
  await t.test("create: seller profile gate, own templates only, validation", async (t) => {
    const before = await counts();
    const gated = await request(app.url, "POST", "/api/store/templates", { token: plain.token, body: { ...body, template_ids: [original] } });
    t.equal(gated.status, 403);
    t.equal(gated.body.code, "seller_profile_incomplete");
    const foreign = await request(app.url, "POST", "/api/store/templates", { token: copier.token, body: { ...body, template_ids: [original] } });
    t.equal(foreign.status, 422);
    t.ok(foreign.body.errors.template_ids);
    const badPrice = await request(app.url, "POST", "/api/store/templates", { token: seller.token, body: { ...body, price_credits: 0, template_ids: [original] } });
    t.equal(badPrice.status, 422);
    t.ok(badPrice.body.errors.price_credits);
    const badCategory = await request(app.url, "POST", "/api/store/templates", { token: seller.token, body: { ...body, category: "Games", template_ids: [original] } });
    t.equal(badCategory.status, 422);
    t.same(await counts(), before, "nothing written by refused requests");
    const noToken = await request(app.url, "POST", "/api/store/templates", { body: { ...body, template_ids: [original] } });
    t.equal(noToken.status, 401);

    const created = await request(app.url, "POST", "/api/store/templates", { token: seller.token, body: { ...body, template_ids: [original] } });
    t.equal(created.status, 201, created.text);
    t.match(created.body.store_template, {
      name: "Express CRUD",
      full_name: `${seller.user.username}/Express CRUD`,
      status: "draft",
      version: null,
      price_type: "credits",
      price_credits: 150,
      price_euros: 0,
      is_own: true,
      is_purchased: false,
      can_purchase: false,
      creator: { id: seller.user.id, username: seller.user.username },
    });
    storeId = created.body.store_template.id;
  });

  await t.test("drafts are seen by their seller only; update by the seller only", async (t) => {
    t.equal((await request(app.url, "GET", `/api/store/templates/${storeId}`, { token: plain.token })).status, 404);
    t.equal((await request(app.url, "GET", `/api/store/templates/${storeId}`, { token: seller.token })).status, 200);
    const other = await request(app.url, "PUT", `/api/store/templates/${storeId}`, { token: copier.token, body: { name: "Mine" } });
    t.equal(other.status, 404);
    const updated = await request(app.url, "PUT", `/api/store/templates/${storeId}`, { token: seller.token, body: { price_type: "euros", price_euros: 12.5 } });
    t.equal(updated.status, 200, updated.text);
    t.match(updated.body.store_template, { price_type: "euros", price_euros: 12.5, price_credits: 0 });
    const back = await request(app.url, "PUT", `/api/store/templates/${storeId}`, { token: seller.token, body: { price_type: "credits", price_credits: 150 } });
    t.equal(back.status, 200);
  });

  await t.test("publish freezes a version; a later publish freezes the next one", async (t) => {
    const published = await request(app.url, "POST", `/api/store/templates/${storeId}/publish`, { token: seller.token });
    t.equal(published.status, 200, published.text);
    t.match(published.body.store_template, { status: "published", version: 1, can_purchase: true });
    t.match(published.body.plagiarism_check, { is_duplicate: false, similarity_score: 0 });
    t.equal((await request(app.url, "GET", `/api/store/templates/${storeId}`, { token: plain.token })).body.data.is_own, false);
    await app.pool.query(sql.type(z.object({}))`update template_files set content = content || '\n// v2' where template_id = ${original}`);
    const again = await request(app.url, "POST", `/api/store/templates/${storeId}/publish`, { token: seller.token });
    t.equal(again.body.store_template.version, 2);
    const versions = await app.pool.any(sql.type(z.object({ version: z.number(), has_v2: z.boolean() }))`
      select version, content::text like '%// v2%' as has_v2 from store_template_versions where store_template_id = ${storeId} order by version`);
    t.same(versions, [{ version: 1, has_v2: false }, { version: 2, has_v2: true }], "version 1 stays as it was sold");
  });

  await t.test("a copy with renamed variables and reformatted whitespace is held as a possible duplicate", async (t) => {
    const created = await request(app.url, "POST", "/api/store/templates", { token: copier.token, body: { ...body, name: "Controllers", template_ids: [copy] } });
    const copyId = created.body.store_template.id;
    const refused = await request(app.url, "POST", `/api/store/templates/${copyId}/publish`, { token: copier.token });
    t.equal(refused.status, 409, refused.text);
    t.equal(refused.body.code, "possible_duplicate");
    const held = await request(app.url, "GET", `/api/store/templates/${copyId}`, { token: copier.token });
    t.equal(held.body.data.status, "review");
    t.equal((await request(app.url, "GET", `/api/store/templates/${copyId}`, { token: plain.token })).status, 404, "not in the store");

    const forbidden = await request(app.url, "POST", "/api/store/plagiarism-check", { token: seller.token, body: { template_id: copyId } });
    t.equal(forbidden.status, 403);
    const checked = await request(app.url, "POST", "/api/store/plagiarism-check", { token: admin.token, body: { template_id: copyId } });
    t.equal(checked.status, 200, checked.text);
    t.equal(checked.body.data.is_duplicate, true);
    t.ok(checked.body.data.similarity_score >= 90, `copy scores ${checked.body.data.similarity_score}`);
    t.same(checked.body.data.similar_templates, [storeId]);
    t.match(checked.body.data.checked_at, /^\d{4}-\d\d-\d\dT/);

    const other = await request(app.url, "POST", "/api/store/templates", { token: copier.token, body: { ...body, name: "Mail", template_ids: [unrelated] } });
    const otherId = other.body.store_template.id;
    const ok = await request(app.url, "POST", `/api/store/templates/${otherId}/publish`, { token: copier.token });
    t.equal(ok.status, 200, ok.text);
    t.ok(ok.body.plagiarism_check.similarity_score <= 30, `unrelated scores ${ok.body.plagiarism_check.similarity_score}`);
    const recheck = await request(app.url, "POST", "/api/store/plagiarism-check", { token: admin.token, body: { template_id: otherId } });
    t.ok(recheck.body.data.similarity_score <= 30);
    t.equal(recheck.body.data.is_duplicate, false);

    const approved = await request(app.url, "POST", `/api/admin/store/templates/${copyId}/approve`, { token: admin.token });
    t.equal(approved.status, 200, approved.text);
    t.equal((await request(app.url, "GET", `/api/store/templates/${copyId}`, { token: plain.token })).body.data.status, "published");
  });

  await t.test("delete: an unsold template is deleted, a sold one withdrawn", async (t) => {
    const draft = await request(app.url, "POST", "/api/store/templates", { token: seller.token, body: { ...body, template_ids: [original] } });
    const gone = await request(app.url, "DELETE", `/api/store/templates/${draft.body.store_template.id}`, { token: seller.token });
    t.match(gone.body, { withdrawn: false });
    t.equal((await request(app.url, "GET", `/api/store/templates/${draft.body.store_template.id}`, { token: seller.token })).status, 404);
    t.equal((await request(app.url, "DELETE", `/api/store/templates/${storeId}`, { token: copier.token })).status, 403, "seen but not theirs");
    await app.pool.query(sql.type(z.object({}))`
      insert into store_purchases (buyer_id, store_template_id, version_id, payment_type)
      select ${plain.user.id}, id, current_version_id, 'free' from store_templates where id = ${storeId}`);
    const withdrawn = await request(app.url, "DELETE", `/api/store/templates/${storeId}`, { token: seller.token });
    t.match(withdrawn.body, { withdrawn: true });
    t.equal((await request(app.url, "GET", `/api/store/templates/${storeId}`, { token: plain.token })).status, 404);
  });

  await t.test("a publish that waited for a concurrent withdraw leaves the template withdrawn", async (t) => {
    const own = await buildTemplate(app.pool, { ownerId: seller.user.id }, seller.user.id, {
      name: "Audit trail",
      content: "{:for entry in entries:}{:entry.at:} {:entry.who:} {:entry.what:}{:endfor:}",
      files: [{ file_name: "audit/trail.sql", content: "create table audit_trail (at timestamptz, who text, what text);" }],
    });
    const created = await request(app.url, "POST", "/api/store/templates", { token: seller.token, body: { ...body, name: "Audit trail", template_ids: [own] } });
    const id: number = created.body.store_template.id;
    t.equal((await request(app.url, "POST", `/api/store/templates/${id}/publish`, { token: seller.token })).status, 200);
    // Another session (a withdraw in flight) holds the row while the second publish starts.
    const holder = new pg.Client({ connectionString: app.db.url });
    await holder.connect();
    t.teardown(() => holder.end());
    await holder.query("begin");
    await holder.query("select id from store_templates where id = $1 for no key update", [id]);
    const publishing = request(app.url, "POST", `/api/store/templates/${id}/publish`, { token: seller.token });
    await untilWaitingOnLocks(app.pool, 1, "the publish waiting on the template row", 20_000);
    await holder.query("update store_templates set status = 'withdrawn' where id = $1", [id]);
    await holder.query("commit");
    const res = await publishing;
    t.equal(res.status, 409, res.text);
    t.equal(await app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from store_templates where id = ${id}`), "withdrawn");
  });
});

t.test("browse and search a catalogue of 240 templates", async (t) => {
  const app = await startTestApp(t);
  const seller = await buildSeller(app);
  const buyer = await buildUserWithToken(app.pool);
  const entries = catalogue(240);
  await seedCatalogue(app.pool, seller.user.id, entries);
  const get = async (query: string) => {
    const res = await request(app.url, "GET", `/api/store/templates?${query}`, { token: buyer.token });
    if (res.status !== 200) throw new Error(res.text);
    return res.body;
  };

  await t.test("typo queries find the intended template in the top 3", async (t) => {
    for (const [q, wanted] of [
      ["crm dashbord", "CRM Dashboard"],
      ["invoce generator", "Invoice Generator"],
      ["kanbn tracker", "Kanban Tracker"],
      ["newsleter portal", "Newsletter Portal"],
      ["inventroy api", "Inventory API"],
      ["Payroll Backend", "Payroll Backend"],
    ] as const) {
      const names = (await get(`q=${encodeURIComponent(q)}`)).data.slice(0, 3).map((row: { name: string }) => row.name);
      t.ok(names.includes(wanted), `${q} → ${names.join(" | ")}`);
    }
  });

  await t.test("filters and sorts combine", async (t) => {
    const page = await get("category=APIs&language=python&sort=sales_count&rows=100");
    const expected = entries.filter((e) => e.category === "APIs" && e.language === "Python");
    t.ok(expected.length > 0);
    t.equal(page.meta.total, expected.length);
    t.ok(page.data.every((row: any) => row.category === "APIs" && row.language === "Python"));
    const sales = page.data.map((row: any) => row.sales_count);
    t.same(sales, [...sales].sort((a: number, b: number) => b - a), "sales_count descending");

    const credits = await get("price_min=100&price_max=200&sort=rating&rows=100");
    const inRange = (row: any) => (row.price_type === "credits" ? row.price_credits : row.price_type === "euros" ? row.price_euros : 0);
    t.ok(credits.data.length > 0);
    t.ok(credits.data.every((row: any) => inRange(row) >= 100 && inRange(row) <= 200));
    const scores = credits.data.map((row: any) => row.review_score ?? 0);
    t.same(scores, [...scores].sort((a: number, b: number) => b - a), "rating descending, unrated last");

    const newest = await get("q=dashboard&sort=newest&rows=5");
    t.ok(newest.data.every((row: any) => /dashboard/i.test(row.name)));
    const dates = newest.data.map((row: any) => row.published_at);
    t.same(dates, [...dates].sort().reverse());
    t.equal((await request(app.url, "GET", "/api/store/templates?price_min=5&price_max=1", { token: buyer.token })).status, 422);
    t.equal((await request(app.url, "GET", "/api/store/templates?rows=101", { token: buyer.token })).status, 422);
    t.equal((await request(app.url, "GET", "/api/store/templates?sort=price", { token: buyer.token })).status, 422);
  });

  await t.test("page and rows", async (t) => {
    const first = await get("");
    t.equal(first.data.length, 12, "rows defaults to 12");
    t.same(first.meta, { current_page: 1, rows: 12, total: 240, last_page: 20 });
    const last = await get("page=3&rows=100");
    t.equal(last.data.length, 40);
    t.same(last.meta, { current_page: 3, rows: 100, total: 240, last_page: 3 });
    const beyond = await get("page=9&rows=100");
    t.same(beyond.meta, { current_page: 9, rows: 100, total: 240, last_page: 3 });
    t.same(beyond.data, []);
  });

  await t.test("categories and languages with counts", async (t) => {
    const categories = (await request(app.url, "GET", "/api/store/categories", { token: buyer.token })).body.data;
    t.equal(categories.length, 10);
    t.same(categories[0], { name: "Web Applications", count: 24 });
    const languages = (await request(app.url, "GET", "/api/store/languages", { token: buyer.token })).body.data;
    t.equal(languages.length, 6);
    t.equal(languages.reduce((sum: number, row: any) => sum + row.count, 0), 240);
  });
});
