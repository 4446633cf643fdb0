import t from "tap";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUser, buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

const text = z.object({ value: z.string() });

t.test("profile, seller profile, API tokens and admin listing", async (t) => {
  const app = await startTestApp(t);
  const password = "profile password";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password), name: "Linus" });
  /** The user's whole row (every column, secrets included) and the jobs queued: what a refused request must leave alone. */
  const written = async (id = user.id) => ({
    user: await app.pool.maybeOneFirst(sql.type(text)`select row_to_json(u)::text as value from users u where id = ${id}`),
    jobs: await app.pool.oneFirst(sql.type(text)`select count(*)::text as value from jobs`),
    tokens: await app.pool.oneFirst(sql.type(text)`select count(*)::text as value from personal_access_tokens`),
  });
  const login = async () => (await request(app.url, "POST", "/api/auth/login", { body: { email: user.email, password } })).body.access_token as string;
  const me = client(app.url, await login());

  t.test("GET /user is the bare User resource", async (t) => {
    const res = await me.get("/api/user");
    t.equal(res.status, 200);
    t.equal(res.body.id, user.id);
    t.notOk("password" in res.body || "password_hash" in res.body || "roles" in res.body);
  });

  t.test("PUT /profile updates details; a new e-mail (password required) stays pending until verified", async (t) => {
    const res = await me.put("/api/profile", { name: "Linus T.", kanban_initials: "LT", kanban_color: "#12ab9f", language: "de" });
    t.equal(res.status, 200, res.text);
    t.match(res.body.user, { name: "Linus T.", kanban_initials: "LT", kanban_color: "#12ab9f", language: "de" });
    t.ok(res.body.user.email_verified_at);
    t.ok((await me.put("/api/profile", { email: "linus.new@example.test" })).body.errors.current_password, "the password is required");
    const moved = await me.put("/api/profile", { email: "linus.new@example.test", current_password: password });
    t.equal(moved.body.user.email, user.email, "the old address stays until the new one is confirmed");
    t.equal(moved.body.pending_email, "linus.new@example.test");
    t.ok(moved.body.user.email_verified_at);
    const taken = await buildUser(app.pool);
    const clash = await me.put("/api/profile", { email: taken.email.toUpperCase() });
    t.equal(clash.status, 422);
    t.same(clash.body.errors, { email: ["The email has already been taken."] });
    const before = await written();
    const bad = await me.put("/api/profile", { name: "Not Saved", kanban_color: "red", kanban_initials: "TOOLONG" });
    t.equal(bad.status, 422);
    t.same(Object.keys(bad.body.errors).sort(), ["kanban_color", "kanban_initials"]);
    const clashAgain = await me.put("/api/profile", { name: "Not Saved", email: taken.email });
    t.equal(clashAgain.status, 422);
    t.same(await written(), before, "nothing written: no column changed, no e-mail queued");
    await me.put("/api/profile", { email: user.email });
  });

  t.test("PUT /user updates the account, username and theme included", async (t) => {
    const res = await me.put("/api/user", { username: "linus_t", theme: "system", name: "Linus Torvalds" });
    t.equal(res.status, 200, res.text);
    t.match(res.body.user, { username: "linus_t", theme: "system", name: "Linus Torvalds" });
    t.match((await me.get("/api/user")).body, { username: "linus_t", theme: "system" });
    t.equal((await client(app.url).put("/api/user", { name: "Nobody" })).status, 401);
    const other = await buildUser(app.pool, { username: "taken_name" });
    const before = await written();
    const clash = await me.put("/api/user", { username: "TAKEN_NAME", name: "Not Saved" });
    t.equal(clash.status, 422);
    t.same(clash.body.errors, { username: ["The username has already been taken."] });
    const bad = await me.put("/api/user", { username: "no spaces!", theme: "neon" });
    t.same(Object.keys(bad.body.errors).sort(), ["theme", "username"]);
    t.same(await written(), before, "nothing written");
    t.same(await written(other.id).then((w) => JSON.parse(w.user!).username), "taken_name");
  });

  t.test("language and theme", async (t) => {
    t.same((await me.put("/api/profile/language", { language: "en" })).body, { message: "Language updated.", language: "en" });
    t.equal((await me.put("/api/profile/language", { language: "fr" })).status, 422);
    t.same((await me.put("/api/profile/theme", { theme: "dark" })).body, { message: "Theme updated.", theme: "dark" });
    t.equal((await me.get("/api/user")).body.theme, "dark");
  });

  t.test("seller profile: IBAN validated, encrypted, never returned", async (t) => {
    const bad = await me.put("/api/profile/seller", { is_seller: true, payout_method: "bank_transfer", bank_iban: "DE00 1234 5678 9012 3456 78", bank_account_holder: "Linus" });
    t.equal(bad.status, 422);
    t.same(bad.body.errors, { bank_iban: ["The bank iban field must be a valid IBAN."] });
    const missing = await me.put("/api/profile/seller", { is_seller: true, company_name: "Not Saved" });
    t.same(Object.keys(missing.body.errors).sort(), ["bank_account_holder", "bank_iban"]);
    const before = await written();
    t.equal((await me.put("/api/profile/seller", { is_seller: true, company_name: "Not Saved", bank_iban: "DE00 0000", bank_account_holder: "X" })).status, 422);
    t.equal((await me.put("/api/profile/seller", { is_seller: true, company_name: "Not Saved" })).status, 422);
    t.same(await written(), before, "nothing written by the refused updates");
    const ok = await me.put("/api/profile/seller", {
      is_seller: true,
      company_name: "Kernel GmbH",
      company_country: "de",
      vat_id: "DE123456789",
      payout_method: "bank_transfer",
      bank_iban: "DE89 3704 0044 0532 0130 00",
      bank_account_holder: "Linus T.",
    });
    t.equal(ok.status, 200, ok.text);
    t.equal(ok.body.user.is_seller, true);
    t.notMatch(ok.text, /DE89|3704/, "the IBAN is not echoed");
    const stored = await app.pool.one(sql.type(z.object({ iban: z.instanceof(Buffer), country: z.string() }))`
      select bank_iban as iban, company_country as country from users where id = ${user.id}`);
    t.notMatch(stored.iban.toString("latin1"), /DE89/, "encrypted at rest");
    t.equal(stored.country, "DE");
  });

  t.test("password change: wrong current password refused; other sessions end; a fresh token is returned", async (t) => {
    const other = await login();
    const before = await written();
    const wrong = await me.put("/api/profile/password", { current_password: "nope", password: "brand new pass", password_confirmation: "brand new pass" });
    t.equal(wrong.status, 422);
    t.ok(wrong.body.errors.current_password);
    const mismatch = await me.put("/api/profile/password", { current_password: password, password: "brand new pass", password_confirmation: "other" });
    t.same(mismatch.body.errors, { password: ["The password field confirmation does not match."] });
    t.equal((await me.put("/api/profile/password", { current_password: password, password: "short", password_confirmation: "short" })).status, 422);
    t.same(await written(), before, "nothing written: same hash, no revocation, no e-mail");
    t.equal((await client(app.url, other).get("/api/user")).status, 200, "no session ended");
    const ok = await me.put("/api/profile/password", { current_password: password, password: "brand new pass", password_confirmation: "brand new pass" });
    t.equal(ok.status, 200, ok.text);
    t.equal((await client(app.url, other).get("/api/user")).status, 401, "the other session ended");
    t.equal((await client(app.url, ok.body.access_token).get("/api/user")).status, 200, "the fresh token works");
  });

  t.test("API tokens need the developer role; shown once, stored hashed, usable, revocable", async (t) => {
    const plain = await buildUserWithToken(app.pool);
    t.equal((await client(app.url, plain.token).post("/api/api-tokens", { name: "ci" })).status, 403);
    const dev = await buildUserWithToken(app.pool, { roles: ["developer"] });
    const api = client(app.url, dev.token);
    const before = await written(dev.user.id);
    t.equal((await api.post("/api/api-tokens", {})).status, 422);
    t.equal((await api.post("/api/api-tokens", { name: "x".repeat(256) })).status, 422);
    t.equal((await api.post("/api/api-tokens", { name: "bot", expires_at: "tomorrow" })).status, 422);
    t.equal((await api.post("/api/api-tokens", { name: "bot", abilities: ["root"] })).status, 422);
    t.same(await written(dev.user.id), before, "no token written");
    const created = await api.post("/api/api-tokens", { name: "deploy bot" });
    t.equal(created.status, 201, created.text);
    t.match(created.body.plainTextToken, /^\d+\|[A-Za-z0-9]{40}$/);
    const bot = client(app.url, created.body.plainTextToken);
    t.equal((await bot.get("/api/user")).body.id, dev.user.id);
    const list = await api.get("/api/api-tokens");
    t.notMatch(list.text, new RegExp(created.body.plainTextToken.split("|")[1]), "never listed in plain text");
    t.equal((await client(app.url, plain.token).delete(`/api/api-tokens/${created.body.token.id}`)).status, 404, "not someone else's");
    t.equal((await api.delete(`/api/api-tokens/${created.body.token.id}`)).status, 200);
    t.equal((await bot.get("/api/user")).status, 401);
  });

  t.test("GET /admin/users: administrators only, searchable, paginated", async (t) => {
    const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
    const plain = await buildUserWithToken(app.pool);
    t.equal((await client(app.url, plain.token).get("/api/admin/users")).status, 403);
    const res = await client(app.url, admin.token).get("/api/admin/users?q=linus&per_page=5");
    t.equal(res.status, 200);
    t.equal(res.body.meta.total, 1);
    t.equal(res.body.data[0].id, user.id);
    t.same(res.body.data[0].roles, ["user"]);
    const admins = await client(app.url, admin.token).get("/api/admin/users?role=admin");
    t.ok(admins.body.data.every((u: { roles: string[] }) => u.roles.includes("admin")));
    const superAdmin = await buildUserWithToken(app.pool, { roles: ["super_admin"] });
    t.equal((await client(app.url, superAdmin.token).get("/api/admin/users")).status, 200, "super_admin holds admin's rights");
  });

  t.test("DELETE /user needs the password and removes the account", async (t) => {
    const doomedPassword = "doomed password";
    const doomed = await buildUser(app.pool, { passwordHash: await hashPassword(doomedPassword) });
    const token = (await request(app.url, "POST", "/api/auth/login", { body: { email: doomed.email, password: doomedPassword } })).body.access_token as string;
    const api = client(app.url, token);
    const before = await written(doomed.id);
    const wrong = await api.delete("/api/user", { password: "wrong" });
    t.equal(wrong.status, 422);
    t.same(wrong.body.errors, { password: ["The password is incorrect."] });
    t.equal((await api.delete("/api/user", {})).status, 422);
    t.same(await written(doomed.id), before, "nothing written");
    t.equal((await api.delete("/api/user", { password: doomedPassword })).status, 200);
    t.equal((await written(doomed.id)).user, null, "the row is gone");
    t.equal((await api.get("/api/user")).status, 401);
  });

  t.test("DELETE /profile needs the password and removes the account", async (t) => {
    // Its own user: the test does not lean on the password an earlier subtest set.
    const password = "profile to delete";
    const leaving = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
    const token = (await request(app.url, "POST", "/api/auth/login", { body: { email: leaving.email, password } })).body.access_token as string;
    const api = client(app.url, token);
    const before = await written(leaving.id);
    t.equal((await api.delete("/api/profile", { password: "wrong" })).status, 422);
    t.same(await written(leaving.id), before, "nothing written by the refused delete");
    t.equal((await api.delete("/api/profile", { password })).status, 200);
    t.equal((await written(leaving.id)).user, null, "the row is gone");
    t.equal((await api.get("/api/user")).status, 401);
    t.equal((await request(app.url, "POST", "/api/auth/login", { body: { email: leaving.email, password } })).status, 422);
  });
});
