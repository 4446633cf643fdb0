import t from "tap";
import { Secret, TOTP } from "otpauth";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUser } from "../support/factories.ts";
import { client } from "../support/http.ts";

const codeAt = (secret: string, offsetSteps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate({ timestamp: Date.now() + offsetSteps * 30_000 });

t.test("two-factor authentication", async (t) => {
  const app = await startTestApp(t);
  const password = "second factor please";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const api = client(app.url);
  const login = () => api.post("/api/auth/login", { email: user.email, password, device_id: "device-0001" });
  const first = await login();
  const me = client(app.url, first.body.access_token);
  let secret = "";
  let recovery: string[] = [];
  /** The user's row and recovery codes: what a refused 2FA request must leave alone. */
  const written = async () => ({
    user: await app.pool.oneFirst(sql.type(z.object({ v: z.string() }))`select row_to_json(u)::text as v from users u where id = ${user.id}`),
    codes: await app.pool.anyFirst(sql.type(z.object({ v: z.string() }))`
      select encode(code_hash, 'hex') || ':' || coalesce(used_at::text, '') as v from two_factor_recovery_codes where user_id = ${user.id} order by id`),
  });

  t.test("enrollment: enable gives a secret, confirm needs a valid code and returns ten recovery codes", async (t) => {
    const enable = await me.post("/api/auth/2fa/enable");
    t.equal(enable.status, 200);
    secret = enable.body.secret;
    t.match(enable.body.otpauth_url, /^otpauth:\/\/totp\/SchemaForge:/);
    const before = await written();
    t.equal((await me.post("/api/auth/2fa/confirm", { code: "000000" })).status, 422);
    t.equal((await me.post("/api/auth/2fa/confirm", { code: "12" })).status, 422);
    t.equal((await me.post("/api/auth/2fa/confirm", {})).status, 422);
    t.same(await written(), before, "nothing written: not confirmed, no recovery codes");
    t.same(before.codes, []);
    const confirm = await me.post("/api/auth/2fa/confirm", { code: codeAt(secret) });
    t.equal(confirm.status, 200, confirm.text);
    recovery = confirm.body.recovery_codes;
    t.equal(recovery.length, 10);
    t.equal(new Set(recovery).size, 10);
    t.equal((await me.post("/api/auth/2fa/enable")).status, 409, "already enabled");
  });

  t.test("login now asks for the second factor; a TOTP code completes it once", async (t) => {
    const challenge = await login();
    t.equal(challenge.status, 200);
    t.equal(challenge.body.two_factor_required, true);
    t.equal(challenge.body.needs_reverification, false);
    t.notOk(challenge.body.access_token);
    const token = challenge.body.two_factor_token;

    const wrong = await api.post("/api/auth/login-2fa", { two_factor_token: token, code: "123456" });
    t.equal(wrong.status, 422);
    t.ok(wrong.body.errors.code);
    const next = codeAt(secret, 1); // ±1 step is accepted
    const ok = await api.post("/api/auth/login-2fa", { two_factor_token: token, code: next, trust_device: true, device_id: "device-0001", browser: "Firefox" });
    t.equal(ok.status, 200, ok.text);
    t.equal(ok.body.recovery_code_used, false);
    t.equal(ok.body.recovery_codes_remaining, 10);
    t.equal((await client(app.url, ok.body.access_token).get("/api/user")).status, 200);
    const reused = await api.post("/api/auth/login-2fa", { two_factor_token: token, code: next });
    t.equal(reused.status, 422, "a challenge completes once");
  });

  t.test("a trusted device skips the second factor only with the browser it was trusted with", async (t) => {
    const as = (device_id: string, browser?: string) => api.post("/api/auth/login", { email: user.email, password, device_id, ...(browser === undefined ? {} : { browser }) });
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
    const challenge = (await api.post("/api/auth/login", { email: user.email, password })).body.two_factor_token;
    const used = await api.post("/api/auth/login-2fa", { two_factor_token: challenge, code: recovery[0] });
    t.equal(used.status, 200, used.text);
    t.equal(used.body.recovery_code_used, true);
    t.equal(used.body.recovery_codes_remaining, 9);
    const again = (await api.post("/api/auth/login", { email: user.email, password })).body.two_factor_token;
    t.equal((await api.post("/api/auth/login-2fa", { two_factor_token: again, code: recovery[0] })).status, 422, "recovery code used up");
    t.equal((await api.post("/api/auth/login-2fa", { two_factor_token: again, code: codeAt(secret, 1) })).status, 422, "the code of an already used step is refused");
  });

  t.test("five wrong codes spend the challenge", async (t) => {
    const challenge = (await api.post("/api/auth/login", { email: user.email, password })).body.two_factor_token;
    for (let i = 0; i < 5; i += 1) await api.post("/api/auth/login-2fa", { two_factor_token: challenge, code: "999999" });
    const late = await api.post("/api/auth/login-2fa", { two_factor_token: challenge, code: codeAt(secret) });
    t.equal(late.status, 422);
    t.ok(late.body.errors.two_factor_token, "must log in again");
  });

  t.test("trust records the browser the login named; a device trusted without one matches only without one", async (t) => {
    const as = (device_id: string, browser?: string) => api.post("/api/auth/login", { email: user.email, password, device_id, ...(browser === undefined ? {} : { browser }) });
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
    const base = { grant_type: "password", client_id: "test-client", client_secret: "test-client-secret-0123456789", username: user.email, password };
    t.equal((await api.post("/api/oauth/token", base)).body.error, "invalid_grant");
  });

  t.test("recovery codes can be regenerated and 2FA disabled, with the password", async (t) => {
    const before = await written();
    t.equal(before.codes.length, 10);
    t.equal((await me.post("/api/auth/2fa/recovery-codes", { password: "wrong" })).status, 422);
    t.equal((await me.post("/api/auth/2fa/recovery-codes", {})).status, 422);
    t.equal((await me.post("/api/auth/2fa/disable", { password: "wrong" })).status, 422);
    t.equal((await me.post("/api/auth/2fa/disable", {})).status, 422);
    t.same(await written(), before, "nothing written: same codes, still enabled");
    const fresh = await me.post("/api/auth/2fa/recovery-codes", { password });
    t.equal(fresh.body.recovery_codes.length, 10);
    t.equal((await me.post("/api/auth/2fa/disable", { password: "wrong" })).status, 422);
    t.equal((await me.post("/api/auth/2fa/disable", { password })).status, 200);
    const plain = await api.post("/api/auth/login", { email: user.email, password });
    t.ok(plain.body.access_token, "no second factor any more");
  });
});
