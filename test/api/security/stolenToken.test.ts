/**
 * Security review findings 1–3 as one sequence: someone holding a stolen read+write access
 * token of an administrator (with two-factor authentication on) tries every path to an
 * admin-scope token or to the account itself, and gets neither.
 */
import t from "tap";
import { Secret, TOTP } from "otpauth";
import { z } from "zod";
import { hashPassword, verifyPassword } from "../../../shared/auth/passwords.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { startSmtp } from "../../support/smtp.ts";

const codeAt = (secret: string, offsetSteps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate({ timestamp: Date.now() + offsetSteps * 30_000 });

t.test("a stolen read+write token of an administrator reaches neither the admin scope nor the account", async (t) => {
  const smtp = await startSmtp(t);
  const app = await startTestApp(t, { worker: true, env: { SMTP_URL: smtp.url } });
  const api = client(app.url);
  const password = "administrator password";
  const owner = await buildUser(app.pool, { passwordHash: await hashPassword(password), roles: ["admin", "developer"], email: "admin@example.test" });
  const ownerSession = client(app.url, (await api.post("/api/auth/login", { email: owner.email, password })).body.access_token);
  const secret = (await ownerSession.post("/api/auth/2fa/enable", { current_password: password })).body.secret as string;
  t.equal((await ownerSession.post("/api/auth/2fa/confirm", { code: codeAt(secret), current_password: password })).status, 200);

  // The owner signs in with the password grant and a narrower scope; this token is stolen.
  const grant = await request(app.url, "POST", "/api/oauth/token", {
    body: { grant_type: "password", client_id: "test-client", client_secret: "test-client-secret-0123456789", username: owner.email, password, otp: codeAt(secret, 1), scope: "read write" },
  });
  t.equal(grant.status, 200, grant.text);
  t.equal(grant.body.scope, "read write");
  const thief = client(app.url, grant.body.access_token);
  const attacker = "attacker@evil.example";
  const answers: string[] = [];
  const attempt = async (what: string, call: Promise<{ status: number; text: string }>, expected: number) => {
    const res = await call;
    answers.push(res.text);
    t.equal(res.status, expected, `${what}: ${res.text}`);
  };

  await attempt("admin routes", thief.get("/api/admin/users"), 403);
  await attempt("a personal token with every scope", thief.post("/api/api-tokens", { name: "mine", abilities: ["*"] }), 403);
  await attempt("a personal token with admin", thief.post("/api/api-tokens", { name: "mine", abilities: ["admin"] }), 403);
  await attempt("e-mail change without the password", thief.put("/api/profile", { email: attacker }), 422);
  await attempt("e-mail change through /user", thief.put("/api/user", { email: attacker, current_password: "password1" }), 422);
  await attempt("password change", thief.put("/api/profile/password", { current_password: "guess", password: "attacker pass", password_confirmation: "attacker pass" }), 422);
  await attempt("two-factor off", thief.post("/api/auth/2fa/disable", { password: "guess" }), 422);
  await attempt("new recovery codes", thief.post("/api/auth/2fa/recovery-codes", { password: "guess" }), 422);
  await attempt("closing the account", thief.delete("/api/profile", { password: "guess" }), 422);
  await attempt("a reset link for the attacker's address", api.post("/api/auth/forgot-password", { email: attacker }), 200);
  await attempt("a new verification mail", thief.post("/api/auth/email/resend"), 200);
  t.notOk(answers.some((text) => /"access_token":"/.test(text)), "no answer carried a token");

  // Everything the service mailed went to the owner; a mail sent last arrives after the others.
  await api.post("/api/auth/forgot-password", { email: owner.email });
  await smtp.waitFor(owner.email, /Reset your password/);
  t.same(smtp.messages.filter((m) => m.to.includes("evil")), [], "nothing reached the attacker's mailbox");

  const account = await ownerSession.get("/api/user");
  t.equal(account.status, 200, "the owner's session still works");
  t.equal(account.body.email, owner.email, "the address is the owner's");
  // The thief's guesses counted against the login limit: from their address even the right password is refused now.
  t.equal((await thief.delete("/api/profile", { password })).status, 429, "guessing is locked out");
  const stored = await app.pool.one(sql.type(z.object({ hash: z.string(), two_factor: z.boolean() }))`
    select password_hash as hash, two_factor_confirmed_at is not null as two_factor from users where id = ${owner.id}`);
  t.ok(await verifyPassword(stored.hash, password), "the password is unchanged");
  t.equal(stored.two_factor, true, "and so is the second factor");
});
