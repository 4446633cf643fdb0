/**
 * Security review finding 7: the lockout of an e-mail across all addresses, which anyone
 * can trigger, does not lock the owner out from an address they signed in from lately;
 * the per (e-mail, address) lockout still holds everywhere.
 */
import t from "tap";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser } from "../../support/factories.ts";
import { request } from "../../support/http.ts";

t.test("a known address is not subject to the lockout across addresses", async (t) => {
  // Three attempts per (e-mail, address), twelve per e-mail; addresses from X-Forwarded-For.
  const app = await startTestApp(t, { env: { TRUST_PROXY: "true", LOGIN_MAX_ATTEMPTS: "3" } });
  const password = "the owner's password";
  const owner = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const login = (pass: string, ip: string) => request(app.url, "POST", "/api/auth/login", { body: { email: owner.email, password: pass }, headers: { "x-forwarded-for": ip } });

  t.equal((await login(password, "192.0.2.10")).status, 200, "the owner signs in from home");
  const statuses: number[] = [];
  for (let i = 1; i <= 13; i += 1) statuses.push((await login("a guess", `198.51.100.${i}`)).status);
  t.same(statuses, [...Array(12).fill(422), 429], "someone else's guesses lock the e-mail on every other address");
  t.equal((await login(password, "203.0.113.5")).status, 429, "a new address is locked out");
  t.equal((await login(password, "192.0.2.10")).status, 200, "the owner's known address is not");
  for (let i = 0; i < 3; i += 1) t.equal((await login("a guess", "192.0.2.10")).status, 422);
  t.equal((await login(password, "192.0.2.10")).status, 429, "the lockout per e-mail and address still holds there");
});
