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

  t.test("a trusted device skips the second factor; another device does not", async (t) => {
    const trusted = await login();
    t.ok(trusted.body.access_token, "device-0001 is trusted for 30 days");
    const other = await api.post("/api/auth/login", { email: user.email, password, device_id: "device-0002" });
    t.equal(other.body.two_factor_required, true);
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
