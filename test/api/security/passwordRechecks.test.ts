/**
 * Security review finding 9: the password re-checks of sensitive routes count against the
 * same failed-password limit as login, so a stolen session cannot guess the password there.
 */
import t from "tap";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

const wrong = "not the password";
const rechecks: [string, string, string, (correct: string) => Record<string, unknown>][] = [
  ["two-factor enrollment", "POST", "/api/auth/2fa/enable", (current) => ({ current_password: current })],
  ["two-factor confirmation", "POST", "/api/auth/2fa/confirm", (current) => ({ code: "123456", current_password: current })],
  ["two-factor off", "POST", "/api/auth/2fa/disable", (password) => ({ password })],
  ["new recovery codes", "POST", "/api/auth/2fa/recovery-codes", (password) => ({ password })],
  ["password change", "PUT", "/api/profile/password", (current) => ({ current_password: current, password: "a new password", password_confirmation: "a new password" })],
  ["closing the account", "DELETE", "/api/profile", (password) => ({ password })],
];

t.test("password re-checks share the login limit", async (t) => {
  const app = await startTestApp(t, { env: { LOGIN_MAX_ATTEMPTS: "2" } });
  const api = client(app.url);
  for (const [name, method, path, body] of rechecks) {
    t.test(name, async (t) => {
      const password = "the right password";
      const user = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
      const session = client(app.url, (await api.post("/api/auth/login", { email: user.email, password })).body.access_token);
      const call = (value: string) => (method === "POST" ? session.post : method === "PUT" ? session.put : session.delete)(path, body(value));
      t.equal((await call(wrong)).status, 422);
      t.equal((await call(wrong)).status, 422);
      const locked = await call(password);
      t.equal(locked.status, 429, `${name}: the third try is refused, even with the right password`);
      t.equal(locked.body.code, "too_many_attempts");
      t.ok(locked.headers.get("retry-after"));
      const login = await api.post("/api/auth/login", { email: user.email, password });
      t.equal(login.status, 429, "login from this address is locked too");
    });
  }
});
