import t from "tap";
import { z } from "zod";
import { grantCredits } from "../../../shared/credits/ledger.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken, makePatron } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

/** Every form designer route but `access`, with a body that would otherwise pass validation. */
const lockedRoutes: [string, string, unknown?][] = [
  ["GET", "/api/form-sets"],
  ["POST", "/api/form-sets", { name: "Set" }],
  ["GET", "/api/form-sets/1"],
  ["PUT", "/api/form-sets/1", { name: "x" }],
  ["DELETE", "/api/form-sets/1"],
  ["POST", "/api/form-sets/1/clone"],
  ["POST", "/api/form-windows", { form_set_id: 1, name: "Main", window_type: "main_menu" }],
  ["GET", "/api/form-windows/1"],
  ["PUT", "/api/form-windows/1", { name: "x" }],
  ["DELETE", "/api/form-windows/1"],
  ["PUT", "/api/form-windows/1/layout", { version: 1, elements: [] }],
  ["POST", "/api/form-elements", { form_window_id: 1, element_type: "separator_horizontal" }],
  ["GET", "/api/form-elements/1"],
  ["PUT", "/api/form-elements/1", { x_position: 1 }],
  ["DELETE", "/api/form-elements/1"],
];

t.test("form designer access", async (t) => {
  const app = await startTestApp(t, { env: { FORM_DESIGNER_TRIAL_DAYS: "7", FORM_DESIGNER_UNLOCK_COST: "250" } });

  t.test("without access: the status says so and every other route answers 402 form_designer_locked", async (t) => {
    const { token } = await buildUserWithToken(app.pool);
    const api = client(app.url, token);
    const status = await api.get("/api/form-designer/access");
    t.equal(status.status, 200, status.text);
    t.match(status.body.access, { has_access: false, access_type: null, is_patron: false, is_expired: false, can_renew: false, unlock_cost: 250, trial_available: true });
    for (const [method, path, body] of lockedRoutes) {
      const res = await (api as Record<string, (p: string, b?: unknown) => Promise<{ status: number; body: { code: string } }>>)[method.toLowerCase()]!(path, body);
      t.equal(res.status, 402, `${method} ${path}`);
      t.equal(res.body.code, "form_designer_locked", `${method} ${path}`);
    }
    t.equal(await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from form_sets`), 0, "nothing written");
  });

  t.test("trial: once per account, for the configured days, then expired", async (t) => {
    const user = await buildUserWithToken(app.pool);
    const api = client(app.url, user.token);
    const started = await api.post("/api/form-designer/unlock", { access_type: "trial" });
    t.equal(started.status, 200, started.text);
    t.match(started.body.access, { has_access: true, access_type: "credits", is_trial: true, credits_paid: 0, days_remaining: 7, trial_available: false });
    t.equal((await api.get("/api/form-sets")).status, 200, "the designer opens");
    const again = await api.post("/api/form-designer/unlock", { access_type: "trial" });
    t.equal(again.status, 409);
    t.equal(again.body.code, "already_unlocked");

    await app.pool.query(sql.type(z.object({}))`
      update form_designer_grants set granted_at = now() - interval '8 days', expires_at = now() - interval '1 day' where user_id = ${user.user.id}`);
    const expired = await api.get("/api/form-designer/access");
    t.match(expired.body.access, { has_access: false, is_expired: true, can_renew: true, trial_available: false, days_remaining: 0 });
    t.equal((await api.get("/api/form-sets")).body.code, "form_designer_locked", "locked again after the trial");
    const second = await api.post("/api/form-designer/unlock", { access_type: "trial" });
    t.equal(second.status, 409);
    t.equal(second.body.code, "trial_used");
    t.equal((await api.post("/api/form-designer/unlock", { access_type: "gift" })).status, 422);
  });

  t.test("unlock with credits: 402 when short (nothing written), then paid once through the ledger, for good", async (t) => {
    const user = await buildUserWithToken(app.pool);
    const api = client(app.url, user.token);
    const give = (amount: number, key: string) =>
      grantCredits(app.pool, { userId: user.user.id, amount, reason: "admin_adjustment", referenceType: null, referenceId: null, idempotencyKey: key });
    await give(200, "first");
    const short = await api.post("/api/form-designer/unlock", { access_type: "credits" });
    t.equal(short.status, 402);
    t.equal(short.body.code, "insufficient_credits");
    const grants = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from form_designer_grants where user_id = ${user.user.id}`);
    t.equal(await grants(), 0, "no grant");
    t.equal((await api.get("/api/form-designer/access")).body.access.user_credits, 200, "nothing spent");

    await give(100, "second");
    // Two unlocks at once: one pays, the other is told it is done.
    const [a, b] = await Promise.all([api.post("/api/form-designer/unlock", { access_type: "credits" }), api.post("/api/form-designer/unlock", { access_type: "credits" })]);
    t.same([a.status, b.status].sort(), [200, 409], `${a.text} ${b.text}`);
    const ok = a.status === 200 ? a : b;
    t.match(ok.body.access, { has_access: true, access_type: "credits", is_trial: false, credits_paid: 250, expires_at: null, days_remaining: null, user_credits: 50 });
    t.equal((a.status === 409 ? a : b).body.code, "already_unlocked");
    const entries = await app.pool.anyFirst(sql.type(z.object({ amount: z.number() }))`
      select amount from credit_ledger where user_id = ${user.user.id} and reason = 'form_designer_unlock'`);
    t.same(entries, [-250], "one spend in the ledger");
    t.equal((await api.post("/api/form-sets", { name: "Bought" })).status, 201, "the designer opens");
    // A later trial is refused: access is there already.
    t.equal((await api.post("/api/form-designer/unlock", { access_type: "trial" })).body.code, "already_unlocked");
  });

  t.test("patron membership grants access while it lasts", async (t) => {
    const user = await buildUserWithToken(app.pool);
    const api = client(app.url, user.token);
    await makePatron(app.pool, user.user.id, { level: 2, days: 10 });
    const status = await api.get("/api/form-designer/access");
    t.match(status.body.access, { has_access: true, access_type: "patron", is_patron: true, patron_level: 2, days_remaining: 10, is_expired: false });
    t.equal((await api.post("/api/form-sets", { name: "Patron's" })).status, 201);
    // The period ends: access ends with it.
    await app.pool.query(sql.type(z.object({}))`
      update patron_memberships set started_at = now() - interval '40 days', expires_at = now() - interval '1 minute' where user_id = ${user.user.id}`);
    const lapsed = await api.get("/api/form-designer/access");
    t.match(lapsed.body.access, { has_access: false, is_patron: false, is_expired: true, can_renew: true });
    t.equal((await api.get("/api/form-sets")).status, 402);
  });

  t.test("trials can be switched off", async (t) => {
    const off = await startTestApp(t, { env: { FORM_DESIGNER_TRIAL_DAYS: "0" } });
    const { token } = await buildUserWithToken(off.pool);
    const api = client(off.url, token);
    t.equal((await api.get("/api/form-designer/access")).body.access.trial_available, false);
    const res = await api.post("/api/form-designer/unlock", { access_type: "trial" });
    t.equal(res.status, 409);
    t.equal(res.body.code, "trial_unavailable");
  });
});
