import t from "tap";
import { Secret, TOTP } from "otpauth";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { consumeTotpStep, matchTotp } from "../../shared/auth/twoFactor.ts";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUser } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { until } from "../support/wait.ts";

/*
 * Every subtest enrolls its own user, and every TOTP code is chosen from the step the server
 * recorded last (never from where in a 30 s step the test happens to run): a step boundary
 * passing mid-test, or a slow machine, changes nothing. The step rules themselves are
 * checked at fixed instants in the first subtest.
 */
const STEP_MS = 30_000;
const stepNow = () => Math.floor(Date.now() / STEP_MS);
const codeFor = (secret: string, step: number) => new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate({ timestamp: step * STEP_MS });

t.test("two-factor authentication", async (t) => {
  const app = await startTestApp(t);
  const password = "second factor please";
  const passwordHash = await hashPassword(password);
  const api = client(app.url);

  const lastStep = (userId: number) =>
    app.pool.oneFirst(sql.type(z.object({ s: z.number().nullable() }))`select two_factor_last_step::int as s from users where id = ${userId}`);
  /** A code the server accepts now: the current step, or the step after the last one used (±1 step is accepted). */
  const freshCode = async (userId: number, secret: string) => {
    const last = await lastStep(userId);
    const step = Math.max(stepNow(), last === null ? 0 : last + 1);
    // Only after a code of the next step was used: wait until that step is inside the window.
    await until(() => stepNow() + 1 >= step, { timeoutMs: 2 * STEP_MS, message: `step ${step} to be inside the window` });
    return { step, code: codeFor(secret, step) };
  };
  /** A user with a password, 2FA enabled through the API; `login` as them with extra fields. */
  const enrolled = async () => {
    const user = await buildUser(app.pool, { passwordHash });
    const login = (extra: Record<string, unknown> = {}) => api.post("/api/auth/login", { email: user.email, password, ...extra });
    const me = client(app.url, (await login()).body.access_token);
    const secret: string = (await me.post("/api/auth/2fa/enable", { current_password: password })).body.secret;
    const confirm = await me.post("/api/auth/2fa/confirm", { code: (await freshCode(user.id, secret)).code, current_password: password });
    if (confirm.status !== 200) throw new Error(`enrollment failed: ${confirm.text}`);
    const recovery: string[] = confirm.body.recovery_codes;
    return { user, login, me, secret, recovery };
  };
  /** The user's row and recovery codes: what a refused 2FA request must leave alone. */
  const written = async (userId: number) => ({
    user: await app.pool.oneFirst(sql.type(z.object({ v: z.string() }))`select row_to_json(u)::text as v from users u where id = ${userId}`),
    codes: await app.pool.anyFirst(sql.type(z.object({ v: z.string() }))`
      select encode(code_hash, 'hex') || ':' || coalesce(used_at::text, '') as v from two_factor_recovery_codes where user_id = ${userId} order by id`),
  });
  const attempts = (token: string) =>
    app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select attempts as n from two_factor_challenges where token_hash = sha256(convert_to(${token}, 'UTF8'))`);

  t.test("steps at fixed instants: ±1 step matches, a step equal to or older than the last used is refused", async (t) => {
    const user = await buildUser(app.pool, { passwordHash });
    const secret = new Secret({ size: 20 }).base32;
    const s = 60_000_000; // a fixed step, so no boundary of the real clock matters
    const endOf = (step: number) => (step + 1) * STEP_MS - 1;
    t.equal(matchTotp(secret, codeFor(secret, s), s * STEP_MS), s, "the current step, at its first millisecond");
    t.equal(matchTotp(secret, codeFor(secret, s), endOf(s)), s, "the current step, at its last millisecond");
    t.equal(matchTotp(secret, codeFor(secret, s), (s + 1) * STEP_MS), s, "one step late");
    t.equal(matchTotp(secret, codeFor(secret, s + 1), endOf(s)), s + 1, "one step early");
    t.equal(matchTotp(secret, codeFor(secret, s), (s + 2) * STEP_MS), null, "two steps late");
    t.equal(matchTotp(secret, codeFor(secret, s + 2), endOf(s)), null, "two steps early");
    t.equal(matchTotp(secret, "12345", s * STEP_MS), null, "not six digits");
    t.equal(await consumeTotpStep(app.pool, user.id, s), true, "first use");
    t.equal(await consumeTotpStep(app.pool, user.id, s), false, "the same step again");
    t.equal(await consumeTotpStep(app.pool, user.id, s - 1), false, "an older step");
    t.equal(await lastStep(user.id), s);
    t.equal(await consumeTotpStep(app.pool, user.id, s + 1), true, "a later step");
    t.equal(await lastStep(user.id), s + 1);
  });

  t.test("enrollment: enable gives a secret, confirm needs a valid code and returns ten recovery codes", async (t) => {
    const user = await buildUser(app.pool, { passwordHash });
    const me = client(app.url, (await api.post("/api/auth/login", { email: user.email, password })).body.access_token);
    const enable = await me.post("/api/auth/2fa/enable", { current_password: password });
    t.equal(enable.status, 200);
    const secret: string = enable.body.secret;
    t.match(enable.body.otpauth_url, /^otpauth:\/\/totp\/SchemaForge:/);
    const before = await written(user.id);
    const wrong = codeFor(secret, stepNow() + 3) === "000000" ? "000001" : "000000";
    t.equal((await me.post("/api/auth/2fa/confirm", { code: wrong, current_password: password })).status, 422);
    t.equal((await me.post("/api/auth/2fa/confirm", { code: codeFor(secret, stepNow() + 3), current_password: password })).status, 422, "three steps ahead is outside the window");
    t.equal((await me.post("/api/auth/2fa/confirm", { code: "12", current_password: password })).status, 422);
    t.equal((await me.post("/api/auth/2fa/confirm", { current_password: password })).status, 422);
    t.same(await written(user.id), before, "nothing written: not confirmed, no recovery codes");
    t.same(before.codes, []);
    const { step, code } = await freshCode(user.id, secret);
    const confirm = await me.post("/api/auth/2fa/confirm", { code, current_password: password });
    t.equal(confirm.status, 200, confirm.text);
    t.equal(await lastStep(user.id), step, "the confirming code's step is recorded as used");
    const recovery: string[] = confirm.body.recovery_codes;
    t.equal(recovery.length, 10);
    t.equal(new Set(recovery).size, 10);
    t.equal((await me.post("/api/auth/2fa/enable", { current_password: password })).status, 409, "already enabled");
  });

  t.test("enrollment needs the current password: a token alone cannot switch two-factor on", async (t) => {
    const user = await buildUser(app.pool, { passwordHash });
    const me = client(app.url, (await api.post("/api/auth/login", { email: user.email, password })).body.access_token);
    const before = await written(user.id);
    for (const body of [undefined, {}, { current_password: "" }, { current_password: "a guess" }]) {
      const refused = await me.post("/api/auth/2fa/enable", body);
      t.equal(refused.status, 422, JSON.stringify(body));
      t.equal(refused.body.code, "validation_failed");
      t.same(Object.keys(refused.body.errors), ["current_password"]);
    }
    t.same((await me.post("/api/auth/2fa/enable", { current_password: "a guess" })).body.errors.current_password, ["The current password is incorrect."]);
    t.same(await written(user.id), before, "no pending secret stored");
    const secret: string = (await me.post("/api/auth/2fa/enable", { current_password: password })).body.secret;
    const pending = await written(user.id);
    const { code } = await freshCode(user.id, secret);
    for (const extra of [{}, { current_password: "a guess" }]) {
      const refused = await me.post("/api/auth/2fa/confirm", { code, ...extra });
      t.equal(refused.status, 422);
      t.same(Object.keys(refused.body.errors), ["current_password"]);
    }
    t.same(await written(user.id), pending, "a right code without the password confirms nothing");
    t.equal((await me.post("/api/auth/2fa/confirm", { code, current_password: password })).status, 200, "the same code with the password");
  });

  t.test("login now asks for the second factor; a TOTP code completes it once", async (t) => {
    const { user, login, secret } = await enrolled();
    const challenge = await login({ device_id: "device-0001" });
    t.equal(challenge.status, 200);
    t.equal(challenge.body.two_factor_required, true);
    t.equal(challenge.body.needs_reverification, false);
    t.notOk(challenge.body.access_token);
    const token = challenge.body.two_factor_token;

    const wrong = await api.post("/api/auth/login-2fa", { two_factor_token: token, code: "123456" });
    t.equal(wrong.status, 422);
    t.ok(wrong.body.errors.code);
    // The next step's code is accepted (±1 step); the confirmation used at most the current one.
    const next = stepNow() + 1;
    const ok = await api.post("/api/auth/login-2fa", { two_factor_token: token, code: codeFor(secret, next) });
    t.equal(ok.status, 200, ok.text);
    t.equal(await lastStep(user.id), next);
    t.equal(ok.body.recovery_code_used, false);
    t.equal(ok.body.recovery_codes_remaining, 10);
    t.equal((await client(app.url, ok.body.access_token).get("/api/user")).status, 200);
    const reused = await api.post("/api/auth/login-2fa", { two_factor_token: token, code: codeFor(secret, next) });
    t.equal(reused.status, 422, "a challenge completes once");
    t.ok(reused.body.errors.two_factor_token);
  });

  t.test("a trusted device skips the second factor only with the browser it was trusted with", async (t) => {
    const { user, login, secret } = await enrolled();
    const challenge = (await login({ device_id: "device-0001", browser: "Firefox" })).body.two_factor_token;
    const trust = await api.post("/api/auth/login-2fa", { two_factor_token: challenge, code: (await freshCode(user.id, secret)).code, trust_device: true });
    t.equal(trust.status, 200, trust.text);
    const as = (device_id: string, browser?: string) => login({ device_id, ...(browser === undefined ? {} : { browser }) });
    const trusted = await as("device-0001", "Firefox");
    t.ok(trusted.body.access_token, "device-0001 with Firefox is trusted for 30 days");
    t.notOk(trusted.body.two_factor_required);
    const refused: [string, Awaited<ReturnType<typeof as>>][] = [
      ["another device, same browser", await as("device-0002", "Firefox")],
      ["the device id with another browser", await as("device-0001", "Chrome")],
      ["the device id naming no browser", await as("device-0001")],
      ["a blank browser counts as none", await as("device-0001", "  ")],
    ];
    for (const [name, res] of refused) {
      t.equal(res.status, 200, name);
      t.equal(res.body.two_factor_required, true, name);
      t.equal(res.body.needs_reverification, false, `${name}: never trusted, not lapsed`);
      t.notOk(res.body.access_token, name);
    }
  });

  t.test("a recovery code works once, and replayed TOTP codes are refused", async (t) => {
    const { user, login, secret, recovery } = await enrolled();
    const challenge = (await login()).body.two_factor_token;
    const used = await api.post("/api/auth/login-2fa", { two_factor_token: challenge, code: recovery[0] });
    t.equal(used.status, 200, used.text);
    t.equal(used.body.recovery_code_used, true);
    t.equal(used.body.recovery_codes_remaining, 9);
    const again = (await login()).body.two_factor_token;
    t.equal((await api.post("/api/auth/login-2fa", { two_factor_token: again, code: recovery[0] })).status, 422, "recovery code used up");

    const { step, code } = await freshCode(user.id, secret);
    t.equal((await api.post("/api/auth/login-2fa", { two_factor_token: again, code })).status, 200, "a fresh code");
    const third = (await login()).body.two_factor_token;
    const before = await written(user.id);
    const replay = await api.post("/api/auth/login-2fa", { two_factor_token: third, code });
    t.equal(replay.status, 422, "the code of an already used step is refused");
    t.ok(replay.body.errors.code);
    const older = await api.post("/api/auth/login-2fa", { two_factor_token: third, code: codeFor(secret, step - 1) });
    t.equal(older.status, 422, "so is the code of an older step");
    t.same(await written(user.id), before, "nothing written: the used step stays, no recovery code spent");
    t.equal(await lastStep(user.id), step);
    t.equal(await attempts(third), 2, "both count as wrong codes on the challenge");
  });

  t.test("five wrong codes spend the challenge", async (t) => {
    const { user, login, secret } = await enrolled();
    const challenge = (await login()).body.two_factor_token;
    for (let i = 0; i < 5; i += 1) {
      t.equal((await api.post("/api/auth/login-2fa", { two_factor_token: challenge, code: "999999" })).status, 422);
    }
    const before = await written(user.id);
    const late = await api.post("/api/auth/login-2fa", { two_factor_token: challenge, code: (await freshCode(user.id, secret)).code });
    t.equal(late.status, 422, "a valid code no longer helps");
    t.ok(late.body.errors.two_factor_token, "must log in again");
    t.same(await written(user.id), before, "the valid code's step was not spent");
  });

  t.test("trust records the browser the login named; a device trusted without one matches only without one", async (t) => {
    const { user, login, recovery } = await enrolled();
    const as = (device_id: string, browser?: string) => login({ device_id, ...(browser === undefined ? {} : { browser }) });
    const complete = async (res: Awaited<ReturnType<typeof as>>, code: string, extra: Record<string, unknown> = {}) => {
      t.equal(res.body.two_factor_required, true);
      const done = await api.post("/api/auth/login-2fa", { two_factor_token: res.body.two_factor_token, code, trust_device: true, ...extra });
      t.equal(done.status, 200, done.text);
    };
    // The second step names neither device nor browser: both come from the login.
    await complete(await as("device-0003", "Safari"), recovery[5]!);
    t.ok((await as("device-0003", "Safari")).body.access_token, "device-0003 with Safari is trusted");
    t.equal((await as("device-0003")).body.two_factor_required, true, "without the browser it is not");
    // Trusted with no browser named at either step.
    await complete(await as("device-0004"), recovery[6]!);
    t.ok((await as("device-0004")).body.access_token, "device-0004 without a browser is trusted");
    t.equal((await as("device-0004", "Firefox")).body.two_factor_required, true, "a device trusted without a browser does not match one with a browser");
    // The second step names another device: the login's browser does not carry over to it.
    await complete(await as("device-0005", "Edge"), recovery[7]!, { device_id: "device-0006" });
    t.equal((await as("device-0006", "Edge")).body.two_factor_required, true);
    t.ok((await as("device-0006")).body.access_token, "device-0006 was trusted with no browser");

    // A lapsed trust asks to re-verify only for the same device and browser.
    await app.pool.query(sql.type(z.object({}))`update trusted_devices set expires_at = now() - interval '1 day' where user_id = ${user.id}`);
    const lapsed = await as("device-0003", "Safari");
    t.equal(lapsed.body.two_factor_required, true);
    t.equal(lapsed.body.needs_reverification, true, "the same device and browser: trust lapsed");
    t.equal((await as("device-0003", "Chrome")).body.needs_reverification, false, "another browser was never trusted");
  });

  t.test("the password grant needs the code too", async (t) => {
    const { user } = await enrolled();
    const base = { grant_type: "password", client_id: "test-client", client_secret: "test-client-secret-0123456789", username: user.email, password };
    const grant = await api.post("/api/oauth/token", base);
    t.equal(grant.body.error, "invalid_grant");
    t.notOk(grant.body.access_token);
    t.match(grant.body.error_description, /two-factor.*otp/, "the client is told the code is missing, not that the grant is invalid");
    t.match((await api.post("/api/oauth/token", { ...base, otp: "000000" })).body.error_description, /two-factor/, "or wrong");
    const wrong = await api.post("/api/oauth/token", { ...base, password: "not the password" });
    t.equal(wrong.body.error, "invalid_grant");
    t.notMatch(wrong.body.error_description, /two-factor/, "a wrong password says nothing of the second factor");
  });

  t.test("recovery codes can be regenerated and 2FA disabled, with the password", async (t) => {
    const { user, login, me } = await enrolled();
    const before = await written(user.id);
    t.equal(before.codes.length, 10);
    t.equal((await me.post("/api/auth/2fa/recovery-codes", { password: "wrong" })).status, 422);
    t.equal((await me.post("/api/auth/2fa/recovery-codes", {})).status, 422);
    t.equal((await me.post("/api/auth/2fa/disable", { password: "wrong" })).status, 422);
    t.equal((await me.post("/api/auth/2fa/disable", {})).status, 422);
    t.same(await written(user.id), before, "nothing written: same codes, still enabled");
    const fresh = await me.post("/api/auth/2fa/recovery-codes", { password });
    t.equal(fresh.body.recovery_codes.length, 10);
    t.equal((await me.post("/api/auth/2fa/disable", { password: "wrong" })).status, 422);
    t.equal((await me.post("/api/auth/2fa/disable", { password })).status, 200);
    const plain = await login();
    t.ok(plain.body.access_token, "no second factor any more");
  });

  t.test("an account disabled between the password and the second factor gets no session", async (t) => {
    const { user, login, secret } = await enrolled();
    const challenge = await login();
    t.equal(challenge.body.two_factor_required, true);
    await app.pool.query(sql.type(z.object({}))`update users set disabled_at = now(), tokens_revoked_at = now() where id = ${user.id}`);
    const entries = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from credit_ledger where user_id = ${user.id}`);
    const before = await entries();
    const done = await api.post("/api/auth/login-2fa", { two_factor_token: challenge.body.two_factor_token, code: (await freshCode(user.id, secret)).code });
    t.equal(done.status, 403, done.text);
    t.equal(done.body.code, "account_disabled");
    t.notOk(done.body.access_token);
    t.equal(await entries(), before, "no monthly credits for a disabled account");
  });

  t.test("closing an account with 2FA on needs the second factor too", async (t) => {
    const { user, me, secret } = await enrolled();
    for (const path of ["/api/profile", "/api/user"]) {
      const closed = await me.delete(path, { password });
      t.equal(closed.status, 422, `${path}: ${closed.text}`);
      t.ok(closed.body.errors?.two_factor_code, "the second factor is asked for");
      t.equal((await me.delete(path, { password, two_factor_code: "000000" })).status, 422, "a wrong code is refused");
    }
    const gone = () => app.pool.exists(sql.type(z.object({}))`select 1 from users where id = ${user.id}`);
    t.ok(await gone(), "the account is still there");
    const closed = await me.delete("/api/profile", { password, two_factor_code: (await freshCode(user.id, secret)).code });
    t.equal(closed.status, 200, closed.text);
    t.notOk(await gone(), "closed with the code");
  });
});
