import t from "tap";
import { z } from "zod";
import { verificationLink } from "../../shared/auth/emailVerification.ts";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUser } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { startSmtp } from "../support/smtp.ts";

const count = (table: string) => sql.type(z.object({ count: z.number() }))`select count(*)::int as count from ${sql.identifier([table])}`;

t.test("accounts: register, verify, login, reset", async (t) => {
  const smtp = await startSmtp(t);
  const app = await startTestApp(t, { worker: true, env: { SMTP_URL: smtp.url } });
  const api = client(app.url);

  t.test("register (full form) sends a verification e-mail whose link logs the user in", async (t) => {
    const res = await api.post("/api/auth/register", {
      name: "Ada Lovelace",
      username: "ada",
      email: "Ada@Example.test",
      password: "analytical engine",
      password_confirmation: "analytical engine",
      language: "de",
    });
    t.equal(res.status, 201, res.text);
    t.equal(res.body.email_verification_required, true);
    t.equal(res.body.has_pending_invitation, false);
    t.same(Object.keys(res.body.user).sort(), ["created_at", "email", "email_verified_at", "id", "is_seller", "kanban_color", "kanban_initials", "language", "name", "theme", "username"]);
    t.equal(res.body.user.email_verified_at, null);
    t.equal(res.body.user.language, "de");

    const mail = await smtp.waitFor("ada@example.test", /E-Mail-Adresse/);
    t.match(mail.subject, /Bestätige/, "German e-mail for a German user");
    const link = new URL(mail.links.find((l) => l.includes("/verify-email/"))!);
    const [, , id, hash] = link.pathname.split("/");
    const verify = await api.post(`/api/auth/email/verify/${id}/${hash}${link.search}`);
    t.equal(verify.status, 200, verify.text);
    t.ok(verify.body.user.email_verified_at);
    t.equal(verify.body.invitation_auto_accepted, false);
    t.equal(verify.body.project_name, null);
    const me = await client(app.url, verify.body.access_token).get("/api/user");
    t.equal(me.status, 200);
    t.equal(me.body.email, "Ada@Example.test");

    const tampered = await api.post(`/api/auth/email/verify/${id}/${hash}?expires=${Number(link.searchParams.get("expires")) + 60}&signature=${link.searchParams.get("signature")}`);
    t.equal(tampered.status, 403, "a changed expiry breaks the signature");
    const wrongHash = await api.post(`/api/auth/email/verify/${id}/${"0".repeat(40)}${link.search}`);
    t.equal(wrongHash.status, 403, "a hash of another address");
  });

  t.test("a correctly signed link past its expiry answers 422 and verifies nothing", async (t) => {
    const late = await buildUser(app.pool, { emailVerified: false });
    const dayAndHourAgo = Date.now() - 25 * 3600 * 1000;
    const link = new URL(verificationLink(app.config.frontendUrl, app.config.appKey, late, dayAndHourAgo));
    const path = `/api/auth/email/verify/${link.pathname.split("/").slice(2).join("/")}${link.search}`;
    const res = await api.post(path);
    t.equal(res.status, 422, res.text);
    t.equal(res.body.code, "validation_failed");
    t.same(res.body.errors, { expires: ["This verification link has expired; ask for a new one."] });
    t.notOk(res.body.access_token);
    const verifiedAt = await app.pool.oneFirst(sql.type(z.object({ at: z.date().nullable() }))`select email_verified_at as at from users where id = ${late.id}`);
    t.equal(verifiedAt, null, "still unverified");
    const fresh = new URL(verificationLink(app.config.frontendUrl, app.config.appKey, late));
    t.equal((await api.post(`/api/auth/email/verify/${fresh.pathname.split("/").slice(2).join("/")}${fresh.search}`)).status, 200, "control: a current link works");
  });

  t.test("resend: a new verification e-mail arrives and its link works; nothing is sent once verified", async (t) => {
    const registered = await api.post("/api/auth/register", { name: "Resend Me", email: "resend@example.test", password: "resend password" });
    t.equal(registered.status, 201);
    await smtp.waitFor("resend@example.test", /Confirm/);
    t.equal((await api.post("/api/auth/email/resend")).status, 401, "needs a token");
    const login = await api.post("/api/auth/login", { email: "resend@example.test", password: "resend password" });
    const me = client(app.url, login.body.access_token);
    const res = await me.post("/api/auth/email/resend");
    t.equal(res.status, 200, res.text);
    t.equal(res.body.message, "A new verification link has been sent to your e-mail address.");
    const mails = () => smtp.messages.filter((m) => m.to.toLowerCase().includes("resend@example.test"));
    for (let i = 0; i < 150 && mails().length < 2; i += 1) await new Promise((r) => setTimeout(r, 100));
    t.equal(mails().length, 2, "a second e-mail arrived");
    const link = new URL(mails()[1]!.links.find((l) => l.includes("/verify-email/"))!);
    const verify = await api.post(`/api/auth/email/verify/${link.pathname.split("/").slice(2).join("/")}${link.search}`);
    t.equal(verify.status, 200, verify.text);
    t.ok(verify.body.user.email_verified_at);
    const jobs = await app.pool.oneFirst(count("jobs"));
    const again = await me.post("/api/auth/email/resend");
    t.equal(again.status, 200);
    t.equal(again.body.message, "Your e-mail address is already verified.");
    t.equal(await app.pool.oneFirst(count("jobs")), jobs, "no e-mail queued");
  });

  t.test("register (simple form) derives a username; duplicates are refused case-insensitively", async (t) => {
    const res = await api.post("/api/auth/register", { name: "Grace", email: "grace@example.test", password: "cobol forever" });
    t.equal(res.status, 201, res.text);
    t.equal(res.body.user.username, "grace");
    const dup = await api.post("/api/auth/register", { name: "Other", email: "GRACE@example.test", password: "cobol forever" });
    t.equal(dup.status, 422);
    t.same(dup.body.errors, { email: ["The email has already been taken."] });
  });

  t.test("every validation rule answers 422 with the field map and writes nothing", async (t) => {
    const users = await app.pool.oneFirst(count("users"));
    const jobs = await app.pool.oneFirst(count("jobs"));
    const cases: [string, Record<string, unknown>, string[]][] = [
      ["empty", {}, ["email", "name", "password"]],
      ["short password", { name: "A", email: "a@example.test", password: "short" }, ["password"]],
      ["bad e-mail", { name: "A", email: "not-an-email", password: "long enough" }, ["email"]],
      ["confirmation mismatch", { name: "A", username: "aa", email: "b@example.test", password: "long enough", password_confirmation: "different" }, ["password"]],
      ["full form without confirmation", { name: "A", username: "aa", email: "c@example.test", password: "long enough" }, ["password_confirmation"]],
      ["bad username", { name: "A", username: "no spaces!", email: "d@example.test", password: "long enough", password_confirmation: "long enough" }, ["username"]],
      ["bad language", { name: "A", email: "e@example.test", password: "long enough", language: "fr" }, ["language"]],
      ["too long name", { name: "x".repeat(300), email: "f@example.test", password: "long enough" }, ["name"]],
      ["taken username", { name: "A", username: "ADA", email: "g@example.test", password: "long enough", password_confirmation: "long enough" }, ["username"]],
    ];
    for (const [name, body, fields] of cases) {
      const res = await api.post("/api/auth/register", body);
      t.equal(res.status, 422, `${name}: 422`);
      t.equal(res.body.code, "validation_failed");
      t.same(Object.keys(res.body.errors).sort(), fields, `${name}: errors on ${fields.join(", ")}`);
      t.ok(Object.values(res.body.errors as Record<string, string[]>).every((m) => m.length > 0 && m.every((s) => typeof s === "string")));
    }
    const short = await api.post("/api/auth/register", { name: "A", email: "h@example.test", password: "short" });
    t.same(short.body.errors.password, ["The password field must be at least 8 characters."]);
    t.equal(await app.pool.oneFirst(count("users")), users, "no user written");
    t.equal(await app.pool.oneFirst(count("jobs")), jobs, "no e-mail queued");
  });

  t.test("login: 24-hour token; wrong credentials 422; lockout after repeated failures", async (t) => {
    const ok = await api.post("/api/auth/login", { email: "grace@example.test", password: "cobol forever" });
    t.equal(ok.status, 200, ok.text);
    t.equal(ok.body.token_type, "Bearer");
    t.equal(ok.body.expires_in, 86400);
    t.equal(ok.body.monthly_credits_awarded, false);
    t.equal(ok.body.has_pending_invitation, false);
    t.equal((await client(app.url, ok.body.access_token).get("/api/user")).body.username, "grace");

    const wrong = await api.post("/api/auth/login", { email: "grace@example.test", password: "wrong password" });
    t.equal(wrong.status, 422);
    t.same(wrong.body.errors, { email: ["These credentials do not match our records."] });
    const ghost = await api.post("/api/auth/login", { email: "ghost@example.test", password: "wrong password" });
    t.same(ghost.body, wrong.body, "an unknown e-mail looks the same as a wrong password");

    for (let i = 0; i < 5; i += 1) await api.post("/api/auth/login", { email: "locked@example.test", password: "wrong password" });
    const locked = await api.post("/api/auth/login", { email: "locked@example.test", password: "wrong password" });
    t.equal(locked.status, 429);
    t.equal(locked.body.code, "too_many_attempts");
    t.ok(Number(locked.headers.get("retry-after")) > 0);
  });

  t.test("forgot and reset password: single-use e-mailed token; other sessions end", async (t) => {
    const login = await api.post("/api/auth/login", { email: "grace@example.test", password: "cobol forever" });
    const oldToken = login.body.access_token as string;
    const same = await api.post("/api/auth/forgot-password", { email: "nobody@example.test" });
    const res = await api.post("/api/auth/forgot-password", { email: "GRACE@example.test" });
    t.equal(res.status, 200);
    t.same(res.body, same.body, "same answer whether or not the account exists");
    const mail = await smtp.waitFor("grace@example.test", /Reset your password/);
    const link = new URL(mail.links.find((l) => l.includes("/reset-password"))!);
    t.equal(link.searchParams.get("email"), "grace@example.test");
    const token = link.searchParams.get("token")!;
    const stored = await app.pool.oneFirst(sql.type(z.object({ h: z.instanceof(Buffer) }))`select token_hash as h from password_resets`);
    t.not(stored.toString("hex"), token, "only a hash is stored");
    const lifeS = await app.pool.oneFirst(sql.type(z.object({ s: z.number() }))`select extract(epoch from expires_at - now())::float8 as s from password_resets`);
    t.ok(lifeS > 3500 && lifeS <= 3600, `the token is valid for 60 minutes (${lifeS} s left)`);

    const text = z.object({ v: z.string() });
    const written = async () => ({
      user: await app.pool.oneFirst(sql.type(text)`select row_to_json(u)::text as v from users u where lower(email) = 'grace@example.test'`),
      resets: await app.pool.anyFirst(sql.type(text)`select row_to_json(r)::text as v from password_resets r`),
      jobs: await app.pool.oneFirst(count("jobs")),
    });
    const before = await written();
    const mismatch = await api.post("/api/auth/reset-password", { token, email: "grace@example.test", password: "new password!", password_confirmation: "other" });
    t.equal(mismatch.status, 422);
    const wrongToken = await api.post("/api/auth/reset-password", { token: `${token}x`, email: "grace@example.test", password: "new password!", password_confirmation: "new password!" });
    t.same(wrongToken.body.errors, { email: ["This password reset token is invalid or has expired."] });
    const otherEmail = await api.post("/api/auth/reset-password", { token, email: "ada@example.test", password: "new password!", password_confirmation: "new password!" });
    t.equal(otherEmail.status, 422, "the token belongs to one address");
    t.equal((await api.post("/api/auth/reset-password", { token, email: "grace@example.test", password: "short", password_confirmation: "short" })).status, 422);
    t.same(await written(), before, "nothing written: same password, the token still usable, no e-mail");
    const reset = await api.post("/api/auth/reset-password", { token, email: "grace@example.test", password: "new password!", password_confirmation: "new password!" });
    t.equal(reset.status, 200, reset.text);
    const again = await api.post("/api/auth/reset-password", { token, email: "grace@example.test", password: "another one!", password_confirmation: "another one!" });
    t.equal(again.status, 422, "single use");
    t.equal((await client(app.url, oldToken).get("/api/user")).status, 401, "the old session ended");
    t.equal((await api.post("/api/auth/login", { email: "grace@example.test", password: "new password!" })).status, 200);
    await smtp.waitFor("grace@example.test", /password was changed/);
  });
});
