/**
 * Personal API tokens ended by a revocation of every token (logout from all devices, a new
 * password, an administrator disabling the account) are gone from GET /api-tokens, as one
 * revoked by DELETE /api-tokens/{id} is: they never work again, and a list showing them as
 * live would send the owner looking for another cause of their scripts' 401s. An account
 * that loses the developer role loses its tokens the same way (spec: the role adds API key
 * management).
 */
import t from "tap";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { startTestApp } from "../support/app.ts";
import { buildUser, buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

t.test("personal tokens ended with every other token leave the list", async (t) => {
  const app = await startTestApp(t);
  const password = "developer password";
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const login = async (email: string) => client(app.url, (await request(app.url, "POST", "/api/auth/login", { body: { email, password } })).body.access_token);

  const ways: [string, (me: ReturnType<typeof client>, userId: number) => Promise<{ status: number; text: string }>][] = [
    ["logout from all devices", (me) => me.post("/api/logout-all-devices")],
    ["a password change", (me) => me.put("/api/profile/password", { current_password: password, password: "another password", password_confirmation: "another password" })],
    ["the account disabled and enabled again", async (_me, userId) => {
      const off = await client(app.url, admin.token).put(`/api/admin/users/${userId}`, { disabled_at: new Date().toISOString() });
      return off.status === 200 ? client(app.url, admin.token).put(`/api/admin/users/${userId}`, { disabled_at: null }) : off;
    }],
  ];
  for (const [way, end] of ways) {
    const user = await buildUser(app.pool, { roles: ["developer"], passwordHash: await hashPassword(password) });
    const me = await login(user.email);
    const made = await me.post("/api/api-tokens", { name: "ci" });
    t.equal(made.status, 201, made.text);
    const ended = await end(me, user.id);
    t.equal(ended.status, 200, `${way}: ${ended.text}`);
    t.equal((await client(app.url, made.body.plainTextToken).get("/api/user")).status, 401, `${way}: the token no longer works`);
    const listed = await (way === "a password change" ? client(app.url, ended.text && JSON.parse(ended.text).access_token) : await login(user.email)).get("/api/api-tokens");
    t.equal(listed.status, 200, listed.text);
    t.same(listed.body.data, [], `${way}: and is not listed as if it did`);
  }
});

t.test("an account that loses the developer role loses its personal tokens", async (t) => {
  const app = await startTestApp(t);
  const password = "developer password";
  const admin = client(app.url, (await buildUserWithToken(app.pool, { roles: ["admin"] })).token);
  const user = await buildUser(app.pool, { roles: ["developer"], passwordHash: await hashPassword(password) });
  const me = client(app.url, (await request(app.url, "POST", "/api/auth/login", { body: { email: user.email, password } })).body.access_token);
  const made = await me.post("/api/api-tokens", { name: "ci" });
  t.equal(made.status, 201, made.text);
  const script = client(app.url, made.body.plainTextToken);
  t.equal((await script.get("/api/user")).status, 200, "the token works while the role is held");

  const renamed = await admin.put(`/api/admin/users/${user.id}`, { name: "Still a developer", roles: ["developer"] });
  t.equal(renamed.status, 200, renamed.text);
  t.equal((await script.get("/api/user")).status, 200, "a change that keeps the role keeps the token");

  const demoted = await admin.put(`/api/admin/users/${user.id}`, { roles: ["user"] });
  t.equal(demoted.status, 200, demoted.text);
  t.equal((await script.get("/api/user")).status, 401, "without the role the token no longer works");
  const listed = await me.get("/api/api-tokens");
  t.equal(listed.status, 200, listed.text);
  t.same(listed.body.data, [], "and is not listed");
  t.equal((await script.post("/api/api-tokens", { name: "another" })).status, 401);
  t.equal((await me.post("/api/api-tokens", { name: "another" })).status, 403, "nor can the account make a new one");

  const promoted = await admin.put(`/api/admin/users/${user.id}`, { roles: ["developer"] });
  t.equal(promoted.status, 200, promoted.text);
  t.equal((await script.get("/api/user")).status, 401, "granting the role again does not revive the old token");
});
