/**
 * Store templates frozen before the portable output path rules (shared/portablePaths.ts) whose
 * file names break them: buying (credits, free, euros), installing and publishing are refused
 * with 409 `non_portable_path` naming the path, before any credit or payment is taken and with
 * nothing installed; the seller sees the same message when publishing, renames the file and
 * publishes again, and then the template sells.
 */
import t from "tap";
import { z } from "zod";
import { grantCredits } from "../../../shared/credits/ledger.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { startStripeStandIn } from "../../support/peers/stripePeer.ts";
import { buildSeller, buildStoreTemplate } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

t.test("store templates with non-portable file names", async (t) => {
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await startTestApp(t, { env: stripe.env });
  const seller = await buildSeller(app);
  const buyer = await buildUserWithToken(app.pool);
  const sellerProject = await buildProject(app.pool, seller.user.id);
  const hooks = await buildTemplate(app.pool, { projectId: sellerProject }, seller.user.id, {
    name: "Hooks",
    files: [
      { file_name: "hooks/post-checkout", content: "#!/bin/sh\n" },
      { file_name: "src/{:name|kebab:}.ts", content: "// {:name:}\n" },
    ],
  });
  const clash = await buildTemplate(app.pool, { projectId: sellerProject }, seller.user.id, {
    name: "Clash",
    files: [
      { file_name: "Models/a.ts", content: "a\n" },
      { file_name: "models/b.ts", content: "b\n" },
    ],
  });
  const devices = await buildTemplate(app.pool, { projectId: sellerProject }, seller.user.id, {
    name: "Devices",
    variables: [],
    files: [{ file_name: "printers/list.txt", content: "Printers: LPT1, LPT2, the plotter on the third floor\nQueues are drained nightly by cron\n" }],
  });
  // Saved before the rules existed: today the template routes would refuse these names.
  const fileId = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
    update template_files set file_name = '.git/hooks/post-checkout' where template_id = ${hooks} and file_name = 'hooks/post-checkout' returning id`);
  await app.pool.query(sql.type(z.object({}))`update template_files set file_name = 'printers/PRN.txt' where template_id = ${devices}`);
  const paid = await buildStoreTemplate(app.pool, seller.user.id, [hooks], { name: "Hook kit", price_type: "credits", price_credits: 50 });
  const free = await buildStoreTemplate(app.pool, seller.user.id, [clash], { name: "Clash kit", price_type: "free" });
  const euro = await buildStoreTemplate(app.pool, seller.user.id, [devices], { name: "Euro device kit", price_type: "euros", price_euro_cents: 999 });
  await grantCredits(app.pool, { userId: buyer.user.id, amount: 100, reason: "test", referenceType: null, referenceId: null, idempotencyKey: "portable-1" });

  const state = () =>
    app.pool.one(sql.type(z.object({ purchases: z.number(), ledger: z.number(), transactions: z.number(), balance: z.number(), templates: z.number() }))`
      select (select count(*)::int from store_purchases) as purchases, (select count(*)::int from credit_ledger) as ledger,
        (select count(*)::int from credit_transactions) as transactions,
        (select balance from credit_accounts where user_id = ${buyer.user.id}) as balance,
        (select count(*)::int from templates) as templates`);
  const buy = (templateId: number, extra: object = {}) => request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: templateId, ...extra } });
  const gitPath = /Template "Hooks": The file name "\.git\/hooks\/post-checkout" is not a safe relative path: `\.git` is a git folder name/;

  await t.test("buying is refused before anything is charged, naming the path", async (t) => {
    const before = await state();
    const credits = await buy(paid);
    t.equal(credits.status, 409, credits.text);
    t.equal(credits.body.code, "non_portable_path");
    t.match(credits.body.message, gitPath);
    t.match(credits.body.message, /cannot be bought/);
    const clashed = await buy(free);
    t.equal(clashed.status, 409, clashed.text);
    t.match(clashed.body, { code: "non_portable_path", message: /Template "Clash": `Models\/a\.ts` and `models\/b\.ts` clash on macOS and Windows/ });
    const card = await buy(euro, { payment_method: "cardprocessor" });
    t.equal(card.status, 409, card.text);
    t.match(card.body, { code: "non_portable_path", message: /Template "Devices": The file name "printers\/PRN\.txt" is not a safe relative path: `PRN\.txt` is a Windows device name/ });
    t.same(await state(), before, "no purchase, no ledger entry, no payment started, balance kept");
  });

  await t.test("a purchase made before the rules: install refused, nothing installed", async (t) => {
    const versionId = await app.pool.oneFirst(sql.type(z.object({ current_version_id: z.number() }))`select current_version_id from store_templates where id = ${paid}`);
    await app.pool.query(sql.type(z.object({}))`
      insert into store_purchases (buyer_id, store_template_id, version_id, payment_type, price_credits, price_euro_cents)
      values (${buyer.user.id}, ${paid}, ${versionId}, 'credits', 50, 0)`);
    const project = await buildProject(app.pool, buyer.user.id);
    const installed = await request(app.url, "POST", `/api/store/templates/${paid}/install`, { token: buyer.token, body: { project_id: project } });
    t.equal(installed.status, 409, installed.text);
    t.match(installed.body, { code: "non_portable_path", message: /cannot be installed/ });
    t.match(installed.body.message, gitPath);
    t.equal(await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from templates where project_id = ${project}`), 0);
  });

  await t.test("the seller sees the same problem when publishing; renamed, the template publishes and sells", async (t) => {
    const published = await request(app.url, "POST", `/api/store/templates/${paid}/publish`, { token: seller.token });
    t.equal(published.status, 409, published.text);
    t.match(published.body, { code: "non_portable_path", message: gitPath });
    t.match(published.body.message, /cannot be published/);
    const versions = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from store_template_versions where store_template_id = ${paid}`);
    t.equal(await versions(), 1, "no version frozen");

    const renamed = await request(app.url, "PUT", `/api/projects/${sellerProject}/templates/${hooks}/files/${fileId}`, {
      token: seller.token,
      body: { file_name: "hooks/post-checkout" },
    });
    t.equal(renamed.status, 200, renamed.text);
    const again = await request(app.url, "POST", `/api/store/templates/${paid}/publish`, { token: seller.token });
    t.equal(again.status, 200, again.text);
    t.equal(await versions(), 2);

    const other = await buildUserWithToken(app.pool);
    await grantCredits(app.pool, { userId: other.user.id, amount: 100, reason: "test", referenceType: null, referenceId: null, idempotencyKey: "portable-2" });
    const bought = await request(app.url, "POST", "/api/store/purchase", { token: other.token, body: { template_id: paid } });
    t.equal(bought.status, 201, bought.text);
    t.match(bought.body.purchase, { template: { id: paid, version: 2 }, price_credits: 50 });
    const project = await buildProject(app.pool, other.user.id);
    const installed = await request(app.url, "POST", `/api/store/templates/${paid}/install`, { token: other.token, body: { project_id: project } });
    t.equal(installed.status, 201, installed.text);
  });
});
