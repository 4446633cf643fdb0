/**
 * Security review finding 8: failed second factors are counted per account, across login
 * challenges and the password grant, so new challenges do not reset the tries; past the
 * limit even the right code is refused (429) until the window passes.
 */
import t from "tap";
import { Secret, TOTP } from "otpauth";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { SECOND_FACTOR_MAX_FAILURES } from "../../../shared/auth/secondFactor.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";

const codeAt = (secret: string, offsetSteps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate({ timestamp: Date.now() + offsetSteps * 30_000 });

t.test("second factors have a per-account limit", async (t) => {
  const app = await startTestApp(t);
  const api = client(app.url);
  const password = "two factor account";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const session = client(app.url, (await api.post("/api/auth/login", { email: user.email, password })).body.access_token);
  const secret = (await session.post("/api/auth/2fa/enable", { current_password: password })).body.secret as string;
  t.equal((await session.post("/api/auth/2fa/confirm", { code: codeAt(secret), current_password: password })).status, 200);
  // A code of ten minutes ago: well-formed, never valid now.
  const stale = () => codeAt(secret, -20);
  const grant = (otp: string) =>
    request(app.url, "POST", "/api/oauth/token", {
      body: { grant_type: "password", client_id: "test-client", client_secret: "test-client-secret-0123456789", username: user.email, password, otp },
    });

  for (let i = 0; i < SECOND_FACTOR_MAX_FAILURES; i += 1) {
    if (i % 2 === 0) {
      const challenge = (await api.post("/api/auth/login", { email: user.email, password })).body.two_factor_token as string;
      const wrong = await api.post("/api/auth/login-2fa", { two_factor_token: challenge, code: stale() });
      t.equal(wrong.status, 422, `wrong code ${i + 1} on a new challenge: ${wrong.text}`);
    } else {
      t.equal((await grant(stale())).status, 400, `wrong code ${i + 1} through the password grant`);
    }
  }
  const challenge = (await api.post("/api/auth/login", { email: user.email, password })).body.two_factor_token as string;
  const refused = await api.post("/api/auth/login-2fa", { two_factor_token: challenge, code: codeAt(secret, 1) });
  t.equal(refused.status, 429, "the right code on a fresh challenge is refused now");
  t.equal(refused.body.code, "too_many_attempts");
  t.notOk(refused.body.access_token);
  const viaGrant = await grant(codeAt(secret, 1));
  t.equal(viaGrant.status, 429, "and through the password grant");
  t.ok(viaGrant.headers.get("retry-after"));
});
