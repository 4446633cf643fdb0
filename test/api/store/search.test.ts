/**
 * Store search through the API, beyond the catalogue test's typo queries: the words typos are
 * corrected to come from the store itself (a newly published name and an edited name are
 * found misspelt), the intended template ranks first, a correctly spelt word is not widened to
 * its neighbours, text that means something to tsquery or trigram syntax is only text, and
 * only published templates feed the dictionary (a draft's words are neither offered nor known).
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { catalogue } from "../../support/storeCatalogue.ts";
import { buildSeller, seedCatalogue } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

t.test("typo-tolerant search over the store's own words", async (t) => {
  const app = await startTestApp(t);
  const seller = await buildSeller(app);
  const buyer = await buildUserWithToken(app.pool);
  const entries = catalogue(240);
  await seedCatalogue(app.pool, seller.user.id, entries);
  const search = async (q: string) => {
    const res = await request(app.url, "GET", `/api/store/templates?q=${encodeURIComponent(q)}&rows=100`, { token: buyer.token });
    t.equal(res.status, 200, `${q}: ${res.text.slice(0, 200)}`);
    return res.body as { data: { id: number; name: string }[]; meta: { total: number } };
  };

  await t.test("the intended template ranks first", async (t) => {
    for (const [q, wanted] of [
      ["crm dashbord", "CRM Dashboard"],
      ["wether admin panel", "Weather Admin Panel"],
      ["portfolo starter", "Portfolio Starter"],
      ["recipe api", "Recipe API"],
    ] as const) {
      const { data } = await search(q);
      t.equal(data[0]?.name, wanted, `${q} → ${data.slice(0, 3).map((row) => row.name).join(" | ")}`);
    }
  });

  await t.test("a word typed correctly is not widened to its neighbours", async (t) => {
    // Every description says "generated"; "generator" must not stand for it.
    const { data, meta } = await search("generator");
    t.ok(meta.total > 0);
    t.ok(
      data.every((row) => row.name.includes("Generator")),
      data.map((row) => row.name).filter((name) => !name.includes("Generator")).join(", ") || "only generators",
    );
  });

  await t.test("a template published later is found misspelt, and so is an edited name", async (t) => {
    t.same((await search("quoka scheduler")).data, [], "no such word yet");
    const [id] = await seedCatalogue(app.pool, seller.user.id, [{ ...entries[0]!, name: "Quokka Scheduler", description: "Plans shifts." }]);
    t.equal((await search("quoka scheduler")).data[0]?.id, id);
    t.equal((await search("quokka shceduler")).data[0]?.id, id);
    await app.pool.query(sql.type(z.object({}))`update store_templates set name = 'Wombat Scheduler' where id = ${id!}`);
    t.equal((await search("wombta scheduler")).data[0]?.id, id);
    t.same((await search("quokka")).data, [], "the old name no longer matches");
  });

  await t.test("only published templates feed the dictionary: a draft's misspelling does not stop a correction", async (t) => {
    const dictionary = (word: string) => app.pool.exists(sql.type(z.object({}))`select from store_search_words where word = ${word}`);
    const dashboards = async () => (await search("dashbord")).data.filter((row) => row.name.includes("Dashboard")).length;
    const corrected = await dashboards();
    t.ok(corrected > 0, "corrected to the published dashboards before any draft says it");
    const template = await buildTemplate(app.pool, { ownerId: seller.user.id }, seller.user.id);
    const fields = { description: "Zyxwvutsr panels", category: "Utilities", language: "TypeScript", price_type: "free", template_ids: [template] };
    const draft = await request(app.url, "POST", "/api/store/templates", { token: seller.token, body: { ...fields, name: "Dashbord Qwertyuiop" } });
    t.equal(draft.status, 201, draft.text);
    const id = draft.body.store_template.id as number;
    t.same(await Promise.all(["dashbord", "qwertyuiop", "zyxwvutsr"].map(dictionary)), [false, false, false], "the draft's words are not in the dictionary");
    t.equal(await dashboards(), corrected, "the misspelt draft word is still corrected");
    t.same((await search("qwertyuiopp")).data, [], "nothing published holds it");

    const published = await request(app.url, "POST", `/api/store/templates/${id}/publish`, { token: seller.token });
    t.equal(published.status, 200, published.text);
    t.equal(await dictionary("qwertyuiop"), true, "published: its words come in");
    t.equal((await search("qwertyuiopp")).data[0]?.id, id, "and correct a misspelling");
    const renamed = await request(app.url, "PUT", `/api/store/templates/${id}`, { token: seller.token, body: { name: "Asdfghjkl Panels" } });
    t.equal(renamed.status, 200, renamed.text);
    t.same(await Promise.all(["qwertyuiop", "asdfghjkl"].map(dictionary)), [false, true], "an edit of a published template replaces its words");
    t.equal((await request(app.url, "DELETE", `/api/store/templates/${id}`, { token: seller.token })).status, 200);
    t.same(await Promise.all(["asdfghjkl", "zyxwvutsr", "dashboard"].map(dictionary)), [false, false, true], "deleted: words only it held go, shared ones stay");
  });

  await t.test("query syntax is text", async (t) => {
    for (const q of ["!!!", "crm & | ! ( ) : *", "'crm' <-> dashboard", "\"crm dashboard\" -pro", "% _ \\ ''", Array.from({ length: 40 }, (_, i) => `w${i}x`).join(" ")]) {
      const { data } = await search(q);
      t.ok(Array.isArray(data), q.slice(0, 40));
    }
    t.equal((await search("\"crm dashboard\"")).data[0]?.name, "CRM Dashboard", "a quoted phrase still works");
  });
});
