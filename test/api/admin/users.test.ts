import t from "tap";
import { z } from "zod";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser, buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";

const CLIENT = { client_id: "test-client", client_secret: "test-client-secret-0123456789" };

t.test("administration of users", async (t) => {
  const app = await startTestApp(t);
  const superAdmin = await buildUserWithToken(app.pool, { roles: ["super_admin"] });
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const plain = await buildUserWithToken(app.pool);
  const asSuper = client(app.url, superAdmin.token);
  const asAdmin = client(app.url, admin.token);

  t.test("401 without a token, 403 for a non-administrator, 404 for an unknown id, 422 on a bad body", async (t) => {
    t.equal((await request(app.url, "GET", `/api/admin/users/${plain.user.id}`)).status, 401);
    const refused = await client(app.url, plain.token).put(`/api/admin/users/${plain.user.id}`, { roles: ["user", "admin"] });
    t.equal(refused.status, 403);
    t.equal(refused.body.code, "forbidden");
    t.equal((await asAdmin.get("/api/admin/users/999999999")).status, 404);
    const bad = await asAdmin.put(`/api/admin/users/${plain.user.id}`, { roles: ["emperor"], disabled_at: "yesterday" });
    t.equal(bad.status, 422);
    t.ok(bad.body.errors["roles.0"] && bad.body.errors.disabled_at, JSON.stringify(bad.body));
    const read = await asAdmin.get(`/api/admin/users/${plain.user.id}`);
    t.equal(read.status, 200);
    t.same(read.body.user.roles, ["user"]);
    t.equal(read.body.user.disabled_at, null);
  });

  t.test("an admin changes a plain account, but only a super admin grants admin", async (t) => {
    const target = await buildUser(app.pool, { emailVerified: false });
    const ok = await asAdmin.put(`/api/admin/users/${target.id}`, { name: "Renamed", roles: ["user", "developer"], email_verified: true });
    t.equal(ok.status, 200, ok.text);
    t.same(ok.body.user.roles.sort(), ["developer", "user"]);
    t.ok(ok.body.user.email_verified_at);
    const grant = await asAdmin.put(`/api/admin/users/${target.id}`, { roles: ["user", "admin"] });
    t.equal(grant.status, 403, "an admin may not grant admin");
    const otherAdmin = await buildUser(app.pool, { roles: ["admin"] });
    t.equal((await asAdmin.put(`/api/admin/users/${otherAdmin.id}`, { roles: ["user"] })).status, 403, "nor remove it");
    t.equal((await asAdmin.delete(`/api/admin/users/${otherAdmin.id}`)).status, 403, "nor delete an administrator");
    const granted = await asSuper.put(`/api/admin/users/${target.id}`, { roles: ["user", "admin"] });
    t.equal(granted.status, 200);
    t.ok(granted.body.user.roles.includes("admin"));
    const roles = await app.pool.anyFirst(sql.type(z.object({ role: z.string() }))`select role from user_roles where user_id = ${target.id} order by role`);
    t.same(roles, ["admin", "user"], "roles as stored");
  });

  t.test("the last super admin is never demoted, disabled or deleted", async (t) => {
    const self = superAdmin.user.id;
    const demote = await asSuper.put(`/api/admin/users/${self}`, { roles: ["user", "admin"] });
    t.equal(demote.status, 409);
    t.equal(demote.body.code, "last_super_admin");
    const second = await buildUserWithToken(app.pool, { roles: ["super_admin"] });
    t.equal((await client(app.url, second.token).delete(`/api/admin/users/${self}`)).status, 200, "with a second one, the first may go");
    const last = await client(app.url, second.token).put(`/api/admin/users/${second.user.id}`, { roles: ["user"] });
    t.equal(last.status, 409, "and now the second is the last");
    const count = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from user_roles where role = 'super_admin'`);
    t.equal(count, 1);
    const audit = await client(app.url, second.token).get(`/api/admin/audit-log?subject_id=${self}&action=user.deleted`);
    t.equal(audit.status, 200);
    t.equal(audit.body.data.length, 1);
    t.equal(audit.body.data[0].actor.id, second.user.id);
    t.same(audit.body.data[0].before.roles, ["super_admin", "user"]);
    t.equal(audit.body.data[0].after, null);
  });

  t.test("two concurrent demotions of the last two super admins: one passes", async (t) => {
    const a = await buildUserWithToken(app.pool, { roles: ["super_admin"] });
    const b = await buildUserWithToken(app.pool, { roles: ["super_admin"] });
    // Leave exactly these two.
    await app.pool.query(sql.type(z.object({}))`delete from user_roles where role = 'super_admin' and user_id not in (${a.user.id}, ${b.user.id})`);
    const results = await Promise.all([
      client(app.url, a.token).put(`/api/admin/users/${b.user.id}`, { roles: ["user"] }),
      client(app.url, b.token).put(`/api/admin/users/${a.user.id}`, { roles: ["user"] }),
    ]);
    const statuses = results.map((r) => r.status).sort();
    t.ok(statuses.includes(409), `one refused: ${statuses.join(", ")}`);
    const count = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from user_roles where role = 'super_admin'`);
    t.equal(count, 1);
  });

  t.test("a disabled account is refused at once on every route and at the token endpoint", async (t) => {
    const password = "a long enough password";
    const victim = await buildUserWithToken(app.pool, { passwordHash: await hashPassword(password) });
    const grant = await request(app.url, "POST", "/api/oauth/token", { body: { grant_type: "password", ...CLIENT, username: victim.user.email, password, scope: "*" } });
    t.equal(grant.status, 200, grant.text);
    const jwt = grant.body.access_token as string;
    for (const token of [victim.token, jwt]) t.equal((await client(app.url, token).get("/api/user")).status, 200, "works before");

    const disabled = await asAdmin.put(`/api/admin/users/${victim.user.id}`, { disabled_at: new Date().toISOString() });
    t.equal(disabled.status, 200, disabled.text);
    t.ok(disabled.body.user.disabled_at);
    for (const token of [victim.token, jwt]) {
      const api = client(app.url, token);
      t.equal((await api.get("/api/user")).status, 401, "GET /user refused");
      t.equal((await api.put("/api/profile", { name: "x" })).status, 401, "PUT /profile refused");
      t.equal((await api.get("/api/projects")).status, 401, "GET /projects refused");
    }
    const again = await request(app.url, "POST", "/api/oauth/token", { body: { grant_type: "password", ...CLIENT, username: victim.user.email, password, scope: "*" } });
    t.equal(again.status, 400);
    t.equal(again.body.error, "invalid_grant");
    const refresh = await request(app.url, "POST", "/api/oauth/token", { body: { grant_type: "refresh_token", ...CLIENT, refresh_token: grant.body.refresh_token } });
    t.equal(refresh.status, 400, "the refresh token is dead too");
    const login = await request(app.url, "POST", "/api/auth/login", { body: { email: victim.user.email, password } });
    t.equal(login.status, 403);
    t.equal(login.body.code, "account_disabled");
    const wrong = await request(app.url, "POST", "/api/auth/login", { body: { email: victim.user.email, password: "not the password" } });
    t.equal(wrong.status, 422, "a wrong password does not reveal the disabled state");

    t.equal((await asAdmin.put(`/api/admin/users/${victim.user.id}`, { disabled_at: null })).status, 200);
    t.equal((await client(app.url, victim.token).get("/api/user")).status, 401, "old tokens stay dead after re-enabling");
    const fresh = await request(app.url, "POST", "/api/auth/login", { body: { email: victim.user.email, password } });
    t.equal(fresh.status, 200, "but the account may sign in again");

    const audit = await asAdmin.get(`/api/admin/audit-log?subject_type=user&subject_id=${victim.user.id}`);
    t.equal(audit.body.data.length, 2, "disable and enable audited");
    t.equal(audit.body.data[1].before.disabled_at, null);
    t.type(audit.body.data[1].after.disabled_at, "string");
    t.equal(audit.body.data[1].actor.id, admin.user.id);
  });

  t.test("nobody disables or deletes their own account here; refused changes write nothing", async (t) => {
    const before = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from audit_log`);
    t.equal((await asAdmin.put(`/api/admin/users/${admin.user.id}`, { disabled_at: new Date().toISOString() })).status, 403);
    t.equal((await asAdmin.delete(`/api/admin/users/${admin.user.id}`)).status, 403);
    const after = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from audit_log`);
    t.equal(after, before);
    t.equal((await client(app.url, plain.token).get("/api/admin/audit-log")).status, 403);
  });
});

t.test("re-enabling an account does not revive its refresh tokens", async (t) => {
  const app = await startTestApp(t);
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const password = "a long enough password";
  const victim = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const grant = await request(app.url, "POST", "/api/oauth/token", { body: { grant_type: "password", ...CLIENT, username: victim.email, password, scope: "*" } });
  t.equal(grant.status, 200, grant.text);
  const asAdmin = client(app.url, admin.token);
  t.equal((await asAdmin.put(`/api/admin/users/${victim.id}`, { disabled_at: new Date().toISOString() })).status, 200);
  t.equal((await asAdmin.put(`/api/admin/users/${victim.id}`, { disabled_at: null })).status, 200);
  const refresh = await request(app.url, "POST", "/api/oauth/token", { body: { grant_type: "refresh_token", ...CLIENT, refresh_token: grant.body.refresh_token } });
  t.equal(refresh.status, 400, `the refresh token issued before the disable stays dead: ${refresh.text}`);
  t.equal(refresh.body.error, "invalid_grant");
});

t.test("the last super admin cannot close their own account either", async (t) => {
  const app = await startTestApp(t);
  const password = "a long enough password";
  const only = await buildUserWithToken(app.pool, { roles: ["super_admin"], passwordHash: await hashPassword(password) });
  await app.pool.query(sql.type(z.object({}))`delete from user_roles where role = 'super_admin' and user_id <> ${only.user.id}`);
  for (const path of ["/api/profile", "/api/user"]) {
    const closed = await client(app.url, only.token).delete(path, { password });
    t.equal(closed.status, 409, `${path}: ${closed.text}`);
    t.equal(closed.body.code, "last_super_admin");
  }
  const left = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from users where id = ${only.user.id}`);
  t.equal(left, 1, "the account is still there");

  const second = await buildUserWithToken(app.pool, { roles: ["super_admin"], passwordHash: await hashPassword(password) });
  // Both close at once: one of them must stay.
  const both = await Promise.all([only, second].map((who) => client(app.url, who.token).delete("/api/profile", { password })));
  t.same(both.map((r) => r.status).sort(), [200, 409], both.map((r) => r.text).join(" | "));
  const supers = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from user_roles where role = 'super_admin'`);
  t.equal(supers, 1, "one super administrator remains");
});
