/**
 * Security review finding 3: e-mail verification links work once, never sign in past a
 * second factor or with the admin scope, and are not logged at info level.
 */
import t from "tap";
import { Secret, TOTP } from "otpauth";
import { verificationLink } from "../../../shared/auth/emailVerification.ts";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

const codeAt = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate();
/** Polls `check` until it holds; the ceiling only guards against hanging. */
async function eventually(check: () => boolean, guardMs = 15_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > guardMs) throw new Error("condition not reached");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const verifyPath = (link: string) => {
  const url = new URL(link);
  return `/api/auth/email/verify/${url.pathname.split("/").slice(2).join("/")}${url.search}`;
};

t.test("verification links", async (t) => {
  const logLines: string[] = [];
  const app = await startTestApp(t, { worker: true, logLines });
  const api = client(app.url);
  const link = (user: { id: number; email: string }) => verificationLink(app.config.frontendUrl, app.config.appKey, user);

  t.test("a link works once; a second use mints nothing", async (t) => {
    const user = await buildUser(app.pool, { emailVerified: false });
    const path = verifyPath(link(user));
    const first = await api.post(path);
    t.equal(first.status, 200, first.text);
    t.type(first.body.access_token, "string");
    const again = await api.post(path);
    t.equal(again.status, 410);
    t.same(again.body, { message: "This link has already been used.", code: "link_used" });
  });

  t.test("a fresh link for an address verified before confirms but does not sign in", async (t) => {
    const user = await buildUser(app.pool, { emailVerified: true });
    const res = await api.post(verifyPath(link(user)));
    t.equal(res.status, 200, res.text);
    t.equal(res.body.access_token, null);
  });

  t.test("with two-factor on, the link answers a challenge instead of a token", async (t) => {
    const password = "two factor pass";
    const user = await buildUser(app.pool, { emailVerified: false, passwordHash: await hashPassword(password) });
    const mailed = link(user);
    const session = client(app.url, (await api.post("/api/auth/login", { email: user.email, password })).body.access_token);
    const secret = (await session.post("/api/auth/2fa/enable", { current_password: password })).body.secret as string;
    t.equal((await session.post("/api/auth/2fa/confirm", { code: codeAt(secret), current_password: password })).status, 200);
    const res = await api.post(verifyPath(mailed));
    t.equal(res.status, 200, res.text);
    t.equal(res.body.two_factor_required, true);
    t.notOk(res.body.access_token);
    t.type(res.body.two_factor_token, "string");
  });

  t.test("a disabled account's link is refused at the link and stays unused", async (t) => {
    const user = await buildUser(app.pool, { emailVerified: false });
    const path = verifyPath(link(user));
    await app.pool.query(sql.type(z.object({}))`update users set disabled_at = now() where id = ${user.id}`);
    const refused = await api.post(path);
    t.equal(refused.status, 403, refused.text);
    t.same(refused.body, { message: "This account is disabled; contact the administrators.", code: "account_disabled" });
    t.notOk(refused.body.access_token, "no token");
    const verifiedAt = await app.pool.oneFirst(sql.type(z.object({ v: z.date().nullable() }))`select email_verified_at as v from users where id = ${user.id}`);
    t.equal(verifiedAt, null, "the address is not verified");
    await app.pool.query(sql.type(z.object({}))`update users set disabled_at = null where id = ${user.id}`);
    const again = await api.post(path);
    t.equal(again.status, 200, "re-enabled, the same link works");
    t.type(again.body.access_token, "string");
  });

  t.test("a verification token never carries the admin scope", async (t) => {
    const admin = await buildUser(app.pool, { emailVerified: false, roles: ["admin"] });
    const res = await api.post(verifyPath(link(admin)));
    t.equal(res.status, 200, res.text);
    const adminCall = await client(app.url, res.body.access_token).get("/api/admin/users");
    t.equal(adminCall.status, 403);
    t.equal(adminCall.body.code, "insufficient_scope");
  });

  t.test("mailed links are not logged at info level or above", async (t) => {
    const res = await api.post("/api/auth/register", { name: "Logged", email: "logged@example.test", password: "logged password" });
    t.equal(res.status, 201);
    const withLink = (line: string) => line.includes("/verify-email/");
    await eventually(() => logLines.some((line) => line.includes("e-mail stored in the outbox")));
    const leaked = logLines.filter((line) => withLink(line) && (JSON.parse(line) as { level: number }).level >= 30);
    t.same(leaked, []);
  });
});
