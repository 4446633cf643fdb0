/**
 * Buying store templates: free and credit prices (through the ledger), the purchase rules
 * (own, twice, euros not payable here), a concurrent double purchase charging once, the
 * seller's pending earning and its reversal by a refund; download of the bought version
 * read back with a zip reader, install into a project (refused with its state's documented
 * answer while the project is locked, expired or archived), and refusals for non-buyers.
 */
import t from "tap";
import { z } from "zod";
import { extractToMemory } from "../../../shared/archive/zipReader.ts";
import { grantCredits } from "../../../shared/credits/ledger.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken, projectStateRefusals, setProjectState } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { buildSeller, buildStoreTemplate } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

t.test("store purchases", async (t) => {
  const app = await startTestApp(t, { env: { STORE_SELLER_SHARE_PERCENT: "70", STORE_CREDIT_VALUE_CENTS: "10" } });
  const seller = await buildSeller(app);
  const buyer = await buildUserWithToken(app.pool);
  const other = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool, { roles: ["user", "admin"] });
  const sellerProject = await buildProject(app.pool, seller.user.id);
  const models = await buildTemplate(app.pool, { projectId: sellerProject }, seller.user.id, {
    name: "Models",
    description: "One model per table",
    variables: [{ name: "schema", type: "schema", required: true }, { name: "suffix", type: "string", default_value: "Model" }],
    files: [
      { file_name: "models/{:table.name|pascal:}.ts", repeat: "schema.tables", content: "export class {:table.name|pascal:}{:suffix:} {}\n" },
      { file_name: "README.md", content: "# Models\n" },
    ],
  });
  const routes = await buildTemplate(app.pool, { ownerId: seller.user.id }, seller.user.id, { name: "Routes", files: [{ file_name: "routes.ts", content: "// {:name:}\n" }] });
  const free = await buildStoreTemplate(app.pool, seller.user.id, [models, routes], { name: "Free kit", price_type: "free" });
  const paid = await buildStoreTemplate(app.pool, seller.user.id, [models], { name: "Paid kit", price_type: "credits", price_credits: 300 });
  const euro = await buildStoreTemplate(app.pool, seller.user.id, [models], { name: "Euro kit", price_type: "euros", price_euro_cents: 1999 });
  const balance = async (userId: number) =>
    app.pool.maybeOneFirst(sql.type(z.object({ balance: z.number() }))`select balance from credit_accounts where user_id = ${userId}`);
  const buy = (token: string, templateId: number) => request(app.url, "POST", "/api/store/purchase", { token, body: { template_id: templateId } });
  const counts = () =>
    app.pool.one(sql.type(z.object({ purchases: z.number(), earnings: z.number(), entries: z.number() }))`
      select (select count(*)::int from store_purchases) as purchases, (select count(*)::int from seller_earnings) as earnings,
        (select count(*)::int from credit_ledger) as entries`);

  await t.test("free: recorded at price 0; own, twice, unknown and euro prices refused", async (t) => {
    const bought = await buy(buyer.token, free);
    t.equal(bought.status, 201, bought.text);
    t.match(bought.body.purchase, { template: { id: free, name: "Free kit", version: 1 }, payment_type: "free", price_credits: 0, price_euros: 0, seller: { id: seller.user.id } });
    const before = await counts();
    t.match(await buy(buyer.token, free), { status: 409, body: { code: "already_purchased" } });
    t.match(await buy(seller.token, free), { status: 403 });
    t.match(await buy(buyer.token, 987654), { status: 404 });
    t.match(await buy(buyer.token, euro), { status: 422, body: { errors: { payment_method: [/required/] } } });
    t.match(await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: "x" } }), { status: 422 });
    t.same(await counts(), before, "nothing written by refused purchases");
    const shown = await request(app.url, "GET", `/api/store/templates/${free}`, { token: buyer.token });
    t.match(shown.body.data, { is_purchased: true, is_own: false, sales_count: 1 });
    const listed = await request(app.url, "GET", "/api/store/purchases", { token: buyer.token });
    t.equal(listed.body.meta.total, 1);
    t.equal(listed.body.data[0].template.id, free);
  });

  await t.test("credits: too few refused with 402 and nothing written; then spent once with a pending earning", async (t) => {
    await grantCredits(app.pool, { userId: buyer.user.id, amount: 100, reason: "test", referenceType: null, referenceId: null, idempotencyKey: "t1" });
    const before = await counts();
    const short = await buy(buyer.token, paid);
    t.equal(short.status, 402);
    t.equal(short.body.code, "insufficient_credits");
    t.same(await counts(), before);
    t.equal(await balance(buyer.user.id), 100);

    await grantCredits(app.pool, { userId: buyer.user.id, amount: 400, reason: "test", referenceType: null, referenceId: null, idempotencyKey: "t2" });
    // Five concurrent attempts: one purchase, one charge.
    const attempts = await Promise.all(Array.from({ length: 5 }, () => buy(buyer.token, paid)));
    t.same(attempts.map((r) => r.status).sort(), [201, 409, 409, 409, 409]);
    t.equal(await balance(buyer.user.id), 200, "charged once");
    const earning = await app.pool.one(sql.type(z.object({ seller_id: z.number(), amount_cents: z.number(), amount_credits: z.number(), status: z.string() }))`
      select e.seller_id, e.amount_cents, e.amount_credits, e.status from seller_earnings e join store_purchases p on p.id = e.purchase_id
      where p.store_template_id = ${paid}`);
    t.same(earning, { seller_id: seller.user.id, amount_cents: 2100, amount_credits: 300, status: "pending" }, "70 % of 300 credits at 10 cents");
  });

  await t.test("download: the bought version as a zip; the seller too; others 403", async (t) => {
    // A later edit and publish does not change what was bought.
    await app.pool.query(sql.type(z.object({}))`update template_files set content = 'changed' where template_id = ${models}`);
    const res = await fetch(`${app.url}/api/store/templates/${free}/download`, { headers: { authorization: `Bearer ${buyer.token}` } });
    t.equal(res.status, 200);
    t.equal(res.headers.get("content-type"), "application/zip");
    t.match(res.headers.get("content-disposition"), /attachment; filename="Free-kit-v1\.zip"/);
    const entries = await extractToMemory(Buffer.from(await res.arrayBuffer()));
    const byPath = new Map(entries.map((e) => [e.path, e.content.toString("utf8")]));
    const version = await app.pool.one(sql.type(z.object({ content: z.array(z.any()) }))`
      select content from store_template_versions where store_template_id = ${free} and version = 1`);
    t.same([...byPath.keys()].sort(), [
      "01-Models/files/README.md",
      "01-Models/files/models/{:table.name|pascal:}.ts",
      "01-Models/template.json",
      "02-Routes/files/routes.ts",
      "02-Routes/template.json",
    ]);
    const manifest = JSON.parse(byPath.get("01-Models/template.json")!);
    t.equal(manifest.name, "Models");
    t.same(manifest.variables.map((v: { name: string }) => v.name), ["schema", "suffix"]);
    t.same(manifest.files.map((f: { file_name: string }) => f.file_name), version.content[0].files.map((f: { file_name: string }) => f.file_name));
    t.equal(byPath.get("01-Models/files/models/{:table.name|pascal:}.ts"), "export class {:table.name|pascal:}{:suffix:} {}\n", "the frozen content, not the later edit");
    t.equal(byPath.get("02-Routes/files/routes.ts"), "// {:name:}\n");

    t.equal((await request(app.url, "GET", `/api/store/templates/${free}/download`, { token: other.token })).status, 403);
    t.equal((await request(app.url, "GET", `/api/store/templates/${paid}/download`, { token: seller.token })).status, 200);
  });

  await t.test("install: the bought version's templates into a project the buyer may change", async (t) => {
    const project = await buildProject(app.pool, buyer.user.id);
    const foreignProject = await buildProject(app.pool, other.user.id);
    const installed = await request(app.url, "POST", `/api/store/templates/${free}/install`, { token: buyer.token, body: { project_id: project } });
    t.equal(installed.status, 201, installed.text);
    t.same(installed.body.templates.map((tpl: { name: string }) => tpl.name), ["Models", "Routes"]);
    const rows = await app.pool.any(sql.type(z.object({ name: z.string(), files: z.any(), variables: z.any() }))`
      select t.name,
        (select json_agg(json_build_object('file_name', f.file_name, 'content', f.content, 'repeat', f.repeat) order by f."order", f.id) from template_files f where f.template_id = t.id) as files,
        (select json_agg(json_build_object('name', v.name, 'type', v.type, 'default_value', v.default_value) order by v.position) from template_variables v where v.template_id = t.id) as variables
      from templates t where t.project_id = ${project} order by t.id`);
    t.same(rows[0], {
      name: "Models",
      files: [
        { file_name: "models/{:table.name|pascal:}.ts", content: "export class {:table.name|pascal:}{:suffix:} {}\n", repeat: "schema.tables" },
        { file_name: "README.md", content: "# Models\n", repeat: null },
      ],
      variables: [{ name: "schema", type: "schema", default_value: null }, { name: "suffix", type: "string", default_value: "Model" }],
    });
    t.equal(rows[1]!.name, "Routes");
    t.equal((await request(app.url, "POST", `/api/store/templates/${free}/install`, { token: other.token, body: { project_id: foreignProject } })).status, 403, "non-buyer");
    t.equal((await request(app.url, "POST", `/api/store/templates/${free}/install`, { token: buyer.token, body: { project_id: foreignProject } })).status, 404, "someone else's project");
  });

  await t.test("install into a project that refuses changes: its state's documented refusal, nothing installed", async (t) => {
    const project = await buildProject(app.pool, buyer.user.id);
    const templates = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from templates where project_id = ${project}`);
    for (const { state, status, code } of projectStateRefusals) {
      await setProjectState(app.pool, project, state);
      const res = await request(app.url, "POST", `/api/store/templates/${free}/install`, { token: buyer.token, body: { project_id: project } });
      t.equal(res.status, status, `${state}: ${res.text}`);
      t.equal(res.body.code, code);
    }
    t.equal(await templates(), 0, "no template installed");
  });

  await t.test("refund: credits back, the sale uncounted, the pending earning reversed, access gone", async (t) => {
    const purchaseId = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
      select id from store_purchases where store_template_id = ${paid} and buyer_id = ${buyer.user.id}`);
    t.equal((await request(app.url, "POST", `/api/admin/store/purchases/${purchaseId}/refund`, { token: seller.token })).status, 403);
    const refunded = await request(app.url, "POST", `/api/admin/store/purchases/${purchaseId}/refund`, { token: admin.token });
    t.equal(refunded.status, 200, refunded.text);
    t.equal(refunded.body.refunded, true);
    const again = await request(app.url, "POST", `/api/admin/store/purchases/${purchaseId}/refund`, { token: admin.token });
    t.equal(again.body.refunded, false, "a second refund changes nothing");
    t.equal(await balance(buyer.user.id), 500, "credits returned once");
    t.equal(await app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from seller_earnings where purchase_id = ${purchaseId}`), "reversed");
    const shown = await request(app.url, "GET", `/api/store/templates/${paid}`, { token: buyer.token });
    t.match(shown.body.data, { is_purchased: false, sales_count: 0 });
    t.equal((await request(app.url, "GET", `/api/store/templates/${paid}/download`, { token: buyer.token })).status, 403);
  });

  await t.test("after a refund the buyer may buy again: charged again, a new sale and earning", async (t) => {
    const again = await buy(buyer.token, paid);
    t.equal(again.status, 201, again.text);
    t.match(again.body.purchase, { template: { id: paid }, payment_type: "credits", price_credits: 300, status: "completed" });
    t.equal(await balance(buyer.user.id), 200, "charged again");
    const earnings = await app.pool.any(sql.type(z.object({ status: z.string(), amount_cents: z.number() }))`
      select e.status, e.amount_cents from seller_earnings e join store_purchases p on p.id = e.purchase_id
      where p.store_template_id = ${paid} order by e.id`);
    t.same(earnings, [{ status: "reversed", amount_cents: 2100 }, { status: "pending", amount_cents: 2100 }]);
    const shown = await request(app.url, "GET", `/api/store/templates/${paid}`, { token: buyer.token });
    t.match(shown.body.data, { is_purchased: true, sales_count: 1 });
    t.equal((await request(app.url, "GET", `/api/store/templates/${paid}/download`, { token: buyer.token })).status, 200);
    const listed = await request(app.url, "GET", "/api/store/purchases", { token: buyer.token });
    t.same(listed.body.data.filter((p: { template: { id: number } }) => p.template.id === paid).map((p: { status: string }) => p.status), ["completed", "refunded"]);
    t.match(await buy(buyer.token, paid), { status: 409, body: { code: "already_purchased" } }, "bought again, so not a third time");
    t.equal(await balance(buyer.user.id), 200);
  });
});
