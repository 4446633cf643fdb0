/**
 * Turning two-factor off and new recovery codes take the password alone (DESIGN §6), so a
 * stolen session plus a phished password could do either. Each mails the account a notice
 * whose link (`POST /auth/2fa/restore {token}`, 7 days, once) puts back the two-factor state
 * from just before (the same secret, the codes then unused) and ends every session.
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
import { until } from "../../support/wait.ts";

const text = z.object({ v: z.string().nullable() });

t.test("two-factor restore links", async (t) => {
  const smtp = await startSmtp(t);
  const app = await startTestApp(t, { worker: true, env: { SMTP_URL: smtp.url } });
  const api = client(app.url);
  const password = "phished password";
  const owner = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const session = client(app.url, (await api.post("/api/auth/login", { email: owner.email, password })).body.access_token);
  const secret: string = (await session.post("/api/auth/2fa/enable", { current_password: password })).body.secret;
  const code = new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate();
  const confirmed = await session.post("/api/auth/2fa/confirm", { code, current_password: password });
  t.equal(confirmed.status, 200, confirmed.text);
  const ownerCodes: string[] = confirmed.body.recovery_codes;
  const sealedSecret = () => app.pool.oneFirst(sql.type(text)`select encode(two_factor_secret, 'hex') as v from users where id = ${owner.id}`);
  const original = await sealedSecret();
  /** Signs in with the password and a recovery code; the status of the second step. */
  const signInWith = async (recoveryCode: string) => {
    const first = (await api.post("/api/auth/login", { email: owner.email, password })).body;
    if (!first.two_factor_required) return "no second factor asked";
    return (await api.post("/api/auth/login-2fa", { two_factor_token: first.two_factor_token, code: recoveryCode })).status;
  };
  const tokenOf = (link: string | undefined) => new URL(link!).searchParams.get("token")!;

  // The thief, with the session and the password: fresh recovery codes, then two-factor off.
  const stolen = await session.post("/api/auth/2fa/recovery-codes", { password });
  t.equal(stolen.status, 200, stolen.text);
  const thiefCodes: string[] = stolen.body.recovery_codes;
  const codesNotice = await smtp.waitFor(owner.email, /New recovery codes/);
  const codesLink = codesNotice.links.find((l) => l.includes("/restore-two-factor?token="));
  t.ok(codesLink, "the recovery codes notice carries a restore link");
  t.equal((await session.post("/api/auth/2fa/disable", { password })).status, 200);
  const offNotice = await smtp.waitFor(owner.email, /turned off/);
  t.match(offNotice.text, /turn it back on/);
  const offLink = offNotice.links.find((l) => l.includes("/restore-two-factor?token="));
  t.ok(offLink, "the disable notice carries a restore link");
  t.equal(await signInWith(ownerCodes[0]!), "no second factor asked", "two-factor is off");

  t.test("a wrong token restores nothing", async (t) => {
    const res = await api.post("/api/auth/2fa/restore", { token: "not-the-token-at-all" });
    t.equal(res.status, 422);
    t.same(res.body.errors, { token: ["This link is invalid, was used already or has expired."] });
    t.equal(await sealedSecret(), null);
  });

  t.test("the disable notice's link turns two-factor back on with the same secret and ends every session", async (t) => {
    const res = await api.post("/api/auth/2fa/restore", { token: tokenOf(offLink) });
    t.equal(res.status, 200, res.text);
    t.equal((await session.get("/api/user")).status, 401, "the session that turned it off is gone");
    t.equal(await sealedSecret(), original, "the same secret: the owner's authenticator app works again");
    t.equal(await signInWith(thiefCodes[0]!), 200, "the codes unused before the disable are back (here the thief's)");
    t.equal((await api.post("/api/auth/2fa/restore", { token: tokenOf(offLink) })).status, 422, "the link works once");
  });

  t.test("the recovery codes notice's link puts the previous codes back", async (t) => {
    const res = await api.post("/api/auth/2fa/restore", { token: tokenOf(codesLink) });
    t.equal(res.status, 200, res.text);
    t.equal(await signInWith(thiefCodes[1]!), 422, "the thief's codes stop working");
    t.equal(await signInWith(ownerCodes[1]!), 200, "the owner's codes work again");
    t.equal(await sealedSecret(), original);
  });

  /** A new session of the owner's, signed in with one of `ownerCodes`. */
  const signedIn = async (n: number) =>
    client(app.url, (await api.post("/api/auth/login-2fa", {
      two_factor_token: (await api.post("/api/auth/login", { email: owner.email, password })).body.two_factor_token,
      code: ownerCodes[n],
    })).body.access_token);
  /** The restore link of the `n`th (1-based) notice whose subject matches. */
  const nthLink = async (subject: RegExp, n: number) => {
    const notices = () => smtp.messages.filter((m) => subject.test(m.subject));
    await until(() => notices().length >= n, { timeoutMs: 60_000, message: `notice ${n} matching ${subject}` });
    return notices()[n - 1]!.links.find((l) => l.includes("/restore-two-factor?token="));
  };

  t.test("an older link used first voids the newer ones, so nothing it undid comes back", async (t) => {
    const thief = await signedIn(2);
    const codes: string[] = (await thief.post("/api/auth/2fa/recovery-codes", { password })).body.recovery_codes;
    t.equal((await thief.post("/api/auth/2fa/disable", { password })).status, 200);
    const older = await nthLink(/New recovery codes/, 2);
    const newer = await nthLink(/turned off/, 2);
    t.equal((await api.post("/api/auth/2fa/restore", { token: tokenOf(older) })).status, 200);
    t.equal((await api.post("/api/auth/2fa/restore", { token: tokenOf(newer) })).status, 422, "the disable's link is spent");
    t.equal(await signInWith(codes[0]!), 422, "the thief's codes stay gone");
    t.equal(await signInWith(ownerCodes[3]!), 200, "the owner's work");
  });

  t.test("an expired link restores nothing", async (t) => {
    const me = await signedIn(4);
    t.equal((await me.post("/api/auth/2fa/recovery-codes", { password })).status, 200);
    const link = await nthLink(/New recovery codes/, 3);
    await app.pool.query(sql.type(z.object({}))`update two_factor_restores set expires_at = now() - interval '1 second' where used_at is null`);
    t.equal((await api.post("/api/auth/2fa/restore", { token: tokenOf(link) })).status, 422);
    t.equal((await me.get("/api/user")).status, 200, "nothing was signed out");
  });
});
