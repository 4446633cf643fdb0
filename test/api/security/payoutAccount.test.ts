/**
 * The bank account a seller's payouts go to is a change a stolen session must not make: a
 * new IBAN or account holder (or removing them, which would let a new one in as a first
 * setup) needs the current password, and the second factor when the account uses one. The
 * first setup, and re-sending what is stored, need neither.
 */
import t from "tap";
import { z } from "zod";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { openText } from "../../../shared/crypto.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

const OWN_IBAN = "DE89 3704 0044 0532 0130 00";
const THIEF_IBAN = "GB82WEST12345698765432";

t.test("changing where payouts go asks for the password", async (t) => {
  const app = await startTestApp(t);
  const password = "seller password";
  const seller = await buildUserWithToken(app.pool, { passwordHash: await hashPassword(password) });
  const session = client(app.url, seller.token);
  const stored = async () => {
    const row = await app.pool.one(sql.type(z.object({ iban: z.instanceof(Buffer).nullable(), holder: z.string().nullable() }))`
      select bank_iban as iban, bank_account_holder as holder from users where id = ${seller.user.id}`);
    return { iban: row.iban ? openText(app.config.appKey, row.iban) : null, holder: row.holder };
  };

  const setup = await session.put("/api/profile/seller", { is_seller: true, payout_method: "bank_transfer", bank_iban: OWN_IBAN, bank_account_holder: "Seller GmbH" });
  t.equal(setup.status, 200, `the first setup needs no password: ${setup.text}`);
  const own = await stored();

  const attempts: [string, Record<string, unknown>][] = [
    ["another IBAN", { is_seller: true, bank_iban: THIEF_IBAN, bank_account_holder: "Seller GmbH" }],
    ["another holder", { is_seller: true, bank_account_holder: "Thief Ltd" }],
    ["the IBAN removed", { is_seller: false, bank_iban: null }],
    ["the holder removed", { is_seller: false, bank_account_holder: null }],
  ];
  for (const [what, body] of attempts) {
    const refused = await session.put("/api/profile/seller", body);
    t.equal(refused.status, 422, `${what}: ${refused.text}`);
    t.ok(refused.body.errors?.current_password, `${what}: the password is asked for`);
    t.equal((await session.put("/api/profile/seller", { ...body, current_password: "a guess" })).status, 422, `${what}: a wrong one is refused`);
    t.same(await stored(), own, `${what}: the payout account is unchanged`);
  }

  const same = await session.put("/api/profile/seller", { is_seller: true, company_name: "Seller GmbH", bank_iban: "de89370400440532013000", bank_account_holder: "Seller GmbH" });
  t.equal(same.status, 200, `re-sending the stored account needs no password: ${same.text}`);

  const moved = await session.put("/api/profile/seller", { is_seller: true, bank_iban: THIEF_IBAN, bank_account_holder: "Seller Ltd", current_password: password });
  t.equal(moved.status, 200, moved.text);
  t.same(await stored(), { iban: THIEF_IBAN, holder: "Seller Ltd" }, "with the password the owner moves it");
});
