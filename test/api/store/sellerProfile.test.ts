/**
 * The seller profile's payout account is where payouts go: once an account has one (or has
 * earned), changing the IBAN or the account holder needs the current password, and the
 * second factor on a 2FA account, like an e-mail change; a bearer token alone may be stolen.
 */
import t from "tap";
import { z } from "zod";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { openText } from "../../../shared/crypto.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { buildSeller, VALID_IBAN } from "../../support/storeFactories.ts";

const OTHER_IBAN = "GB82WEST12345698765432";

t.test("changing the payout account needs the password", async (t) => {
  const app = await startTestApp(t);
  const password = "seller's own password";
  const seller = await buildSeller(app, { passwordHash: await hashPassword(password) });
  const stored = async () => {
    const row = await app.pool.one(sql.type(z.object({ iban: z.instanceof(Buffer).nullable(), holder: z.string().nullable() }))`
      select bank_iban as iban, bank_account_holder as holder from users where id = ${seller.user.id}`);
    return { iban: row.iban && openText(app.config.appKey, row.iban), holder: row.holder };
  };
  const put = (body: object) => request(app.url, "PUT", "/api/profile/seller", { token: seller.token, body: { is_seller: true, ...body } });

  const noPassword = await put({ bank_iban: OTHER_IBAN, bank_account_holder: "Thief Ltd" });
  t.equal(noPassword.status, 422, noPassword.text);
  t.match(noPassword.body.errors, { current_password: [/required/] });
  t.same(await stored(), { iban: VALID_IBAN, holder: "Seller GmbH" }, "nothing written");
  t.match(await put({ bank_account_holder: "Thief Ltd" }), { status: 422, body: { errors: { current_password: [/required/] } } }, "the holder alone too");
  t.match(await put({ bank_iban: OTHER_IBAN, current_password: "wrong" }), { status: 422, body: { errors: { current_password: [/incorrect/] } } });
  t.same(await stored(), { iban: VALID_IBAN, holder: "Seller GmbH" }, "nothing written");

  // The same values again, and other fields, need nothing.
  t.equal((await put({ bank_iban: VALID_IBAN.replace(/(.{4})/g, "$1 "), bank_account_holder: "Seller GmbH", company_name: "Seller GmbH" })).status, 200);
  const changed = await put({ bank_iban: OTHER_IBAN, bank_account_holder: "Seller Ltd", current_password: password });
  t.equal(changed.status, 200, changed.text);
  t.same(await stored(), { iban: OTHER_IBAN, holder: "Seller Ltd" });

  // A first payout account needs no password: there is nothing to redirect yet.
  const newcomer = await buildUserWithToken(app.pool);
  const first = await request(app.url, "PUT", "/api/profile/seller", { token: newcomer.token, body: { is_seller: true, bank_iban: VALID_IBAN, bank_account_holder: "New Seller" } });
  t.equal(first.status, 200, first.text);
});
