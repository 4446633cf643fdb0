import t from "tap";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { awardMonthlyCredits } from "../../../shared/credits/monthly.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser, makePatron } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { creditState } from "../../support/payments.ts";

t.test("the first login of a month awards the monthly credits once, also under concurrent logins", async (t) => {
  const app = await startTestApp(t);
  const password = "monthly password";
  const passwordHash = await hashPassword(password);
  const patron = await buildUser(app.pool, { passwordHash });
  await makePatron(app.pool, patron.id, { level: 2, days: 45 });
  const plain = await buildUser(app.pool, { passwordHash });
  const login = (email: string) => request(app.url, "POST", "/api/auth/login", { body: { email, password } });

  const answers = await Promise.all(Array.from({ length: 5 }, () => login(patron.email)));
  t.same(answers.map((a) => a.status), [200, 200, 200, 200, 200]);
  t.equal(answers.filter((a) => a.body.monthly_credits_awarded === true).length, 1, "exactly one login says it awarded");
  const state = await creditState(app.pool, patron.id);
  t.same(state, { balance: 150, shortfall: 0, entries: 1, sum: 150 }, "level 2's monthly credits, one ledger entry");
  t.equal((await login(patron.email)).body.monthly_credits_awarded, false, "a later login in the month: false");

  const now = new Date();
  const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 1));
  t.equal(await awardMonthlyCredits(app.pool, patron.id, nextMonth), true, "the next month awards again while the membership runs");
  t.equal(await awardMonthlyCredits(app.pool, patron.id, nextMonth), false, "once");

  const none = await login(plain.email);
  t.equal(none.body.monthly_credits_awarded, false, "no plan with monthly credits, no patron level: nothing");
  t.equal((await creditState(app.pool, plain.id)).entries, 0);
});
