/**
 * Security review finding 1: an e-mail change needs the current password (and the second
 * factor when on), stays pending until the link sent to the new address confirms it, does
 * not sign in, and the old address can cancel it, ending every session.
 */
import t from "tap";
import { Secret, TOTP } from "otpauth";
import { z } from "zod";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startSmtp } from "../../support/smtp.ts";

const text = z.object({ v: z.string() });
const codeAt = (secret: string, offsetSteps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate({ timestamp: Date.now() + offsetSteps * 30_000 });
/** The API path a mailed verification link posts to. */
const verifyPath = (link: string) => {
  const url = new URL(link);
  return `/api/auth/email/verify/${url.pathname.split("/").slice(2).join("/")}${url.search}`;
};

t.test("e-mail change", async (t) => {
  const smtp = await startSmtp(t);
  const app = await startTestApp(t, { worker: true, env: { SMTP_URL: smtp.url } });
  const api = client(app.url);
  const password = "owner password";
  const owner = await buildUser(app.pool, { passwordHash: await hashPassword(password), email: "owner@example.test" });
  const login = async (email = owner.email) => api.post("/api/auth/login", { email, password });
  const me = client(app.url, (await login()).body.access_token);
  const written = async () => ({
    user: await app.pool.oneFirst(sql.type(text)`select row_to_json(u)::text as v from users u where id = ${owner.id}`),
    jobs: await app.pool.oneFirst(sql.type(text)`select count(*)::text as v from jobs`),
    changes: await app.pool.oneFirst(sql.type(text)`select count(*)::text as v from email_changes`),
  });

  t.test("needs the current password; a refused change writes nothing", async (t) => {
    const before = await written();
    const missing = await me.put("/api/profile", { email: "thief@example.test" });
    t.equal(missing.status, 422, missing.text);
    t.ok(missing.body.errors.current_password);
    const wrong = await me.put("/api/user", { email: "thief@example.test", current_password: "guess" });
    t.equal(wrong.status, 422);
    t.same(wrong.body.errors, { current_password: ["The current password is incorrect."] });
    t.same(await written(), before, "no address changed, no e-mail queued, no change recorded");
    t.equal((await me.put("/api/profile", { name: "Renamed" })).status, 200, "other details need no password");
  });

  let cancelLink = "";
  t.test("a change is pending until the new address confirms it; the old one keeps signing in", async (t) => {
    const res = await me.put("/api/profile", { email: "owner.new@example.test", current_password: password });
    t.equal(res.status, 200, res.text);
    t.equal(res.body.user.email, owner.email, "the account keeps its address");
    t.equal(res.body.pending_email, "owner.new@example.test");
    const notice = await smtp.waitFor(owner.email, /being changed/);
    t.match(notice.text, /owner\.new@example\.test/);
    cancelLink = notice.links.find((l) => l.includes("/cancel-email-change"))!;
    t.ok(cancelLink, "the old address gets a cancel link");
    const confirmMail = await smtp.waitFor("owner.new@example.test", /Confirm your new/);
    const link = confirmMail.links.find((l) => l.includes("/verify-email/"))!;

    t.equal((await login("owner.new@example.test")).status, 422, "the pending address does not sign in");
    t.equal((await login()).status, 200, "the old address still does");
    t.equal((await api.post("/api/auth/forgot-password", { email: "owner.new@example.test" })).status, 200);
    const resets = await app.pool.oneFirst(sql.type(text)`select count(*)::text as v from password_resets where user_id = ${owner.id}`);
    t.equal(resets, "0", "no reset link for the pending address");

    const confirmed = await api.post(verifyPath(link));
    t.equal(confirmed.status, 200, confirmed.text);
    t.equal(confirmed.body.access_token, null, "confirming does not sign in");
    t.equal(confirmed.body.user.email, "owner.new@example.test");
    t.ok(confirmed.body.user.email_verified_at);
    t.equal((await me.get("/api/user")).body.email, "owner.new@example.test");
    const replay = await api.post(verifyPath(link));
    t.equal(replay.status, 410);
    t.equal(replay.body.code, "link_used");
  });

  t.test("the old address cancels: its address returns and every session ends", async (t) => {
    const token = new URL(cancelLink).searchParams.get("token")!;
    t.equal((await api.post("/api/auth/email/cancel-change", { token: "not-the-token-at-all" })).status, 422);
    const cancelled = await api.post("/api/auth/email/cancel-change", { token });
    t.equal(cancelled.status, 200, cancelled.text);
    t.equal((await me.get("/api/user")).status, 401, "the session that made the change is gone");
    const back = await login();
    t.equal(back.status, 200, "the old address signs in again");
    t.equal(back.body.user.email, owner.email);
    t.equal((await login("owner.new@example.test")).status, 422);
    t.equal((await api.post("/api/auth/email/cancel-change", { token })).status, 422, "the cancel link works once");
  });

  t.test("with two-factor authentication the change needs a current code too", async (t) => {
    const second = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
    const session = client(app.url, (await login(second.email)).body.access_token);
    const secret = (await session.post("/api/auth/2fa/enable", { current_password: password })).body.secret as string;
    t.equal((await session.post("/api/auth/2fa/confirm", { code: codeAt(secret), current_password: password })).status, 200);
    const noCode = await session.put("/api/profile", { email: "second.new@example.test", current_password: password });
    t.equal(noCode.status, 422);
    t.ok(noCode.body.errors.two_factor_code);
    const badCode = await session.put("/api/profile", { email: "second.new@example.test", current_password: password, two_factor_code: "000000" });
    t.equal(badCode.status, 422);
    t.ok(badCode.body.errors.two_factor_code);
    const ok = await session.put("/api/profile", { email: "second.new@example.test", current_password: password, two_factor_code: codeAt(secret, 1) });
    t.equal(ok.status, 200, ok.text);
    t.equal(ok.body.pending_email, "second.new@example.test");
  });
});
