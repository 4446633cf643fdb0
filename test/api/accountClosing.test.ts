/**
 * Closing an account that holds records kept for others: an invoice (kept for accounting).
 * The account stays, with a clear 409 that names why, by DELETE /profile as by an
 * administrator's DELETE; an account without such records closes as before. (A seller whose
 * templates were bought closes: they are withdrawn and the buyers keep them,
 * test/api/store/accounts.test.ts.)
 */
import t from "tap";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { issueInvoice } from "../../shared/billing/invoices.ts";
import { sql } from "../../shared/db/pool.ts";
import { insertTransaction } from "../../shared/payments/store.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";

const password = "a long enough password";

t.test("closing an account that holds records others rely on", async (t) => {
  const app = await startTestApp(t);
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const exists = (id: number) => app.pool.exists(sql.type(z.object({}))`select 1 from users where id = ${id}`);
  const auditRows = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from audit_log`);

  t.test("an account with an invoice", async (t) => {
    const buyer = await buildUserWithToken(app.pool, { passwordHash: await hashPassword(password) });
    await app.pool.transaction(async (tx) => {
      const payment = await insertTransaction(tx, { user_id: buyer.user.id, kind: "credit_package", package_id: null, item_id: null, project_id: null, payment_method: "cardprocessor", credits: 100, amount_cents: 500, currency: "EUR" });
      await issueInvoice(tx, payment);
    });
    const audited = await auditRows();
    for (const path of ["/api/profile", "/api/user"]) {
      const closed = await client(app.url, buyer.token).delete(path, { password });
      t.equal(closed.status, 409, `${path}: ${closed.text}`);
      t.equal(closed.body.code, "account_has_records");
      t.match(closed.body.message, /invoice/i);
    }
    const removed = await client(app.url, admin.token).delete(`/api/admin/users/${buyer.user.id}`);
    t.equal(removed.status, 409, removed.text);
    t.equal(removed.body.code, "account_has_records");
    t.ok(await exists(buyer.user.id), "the account is still there");
    t.equal(await auditRows(), audited, "no deletion audited");
    t.equal((await client(app.url, buyer.token).get("/api/user")).status, 200, "and still signs in");
  });

  t.test("an account without such records closes", async (t) => {
    const plain = await buildUserWithToken(app.pool, { passwordHash: await hashPassword(password) });
    const closed = await client(app.url, plain.token).delete("/api/profile", { password });
    t.equal(closed.status, 200, closed.text);
    t.notOk(await exists(plain.user.id));
  });
});
