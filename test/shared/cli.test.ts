import { spawnSync } from "node:child_process";
import t from "tap";
import { startTestApp } from "../support/app.ts";
import { request } from "../support/http.ts";

const bin = new URL("../../shared/cli/bin.ts", import.meta.url).pathname;

t.test("operator CLI: user:create and oauth:client", async (t) => {
  const app = await startTestApp(t);
  const env = { ...process.env, DATABASE_URL: app.db.url, NODE_ENV: "test", APP_KEY: app.config.appKey.toString("hex"), REALTIME_APP_KEY: "test-app-key", REALTIME_APP_SECRET: "test-app-secret-0123456789", APP_URL: app.config.appUrl };
  const run = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { env, encoding: "utf8", timeout: 60_000 });

  const created = run("user:create", "--email", "root@example.test", "--name", "Root", "--role", "admin", "--role", "developer");
  t.equal(created.status, 0, created.stderr);
  t.match(created.stdout, /created user \d+ <root@example.test> with roles admin, developer, user/);
  const password = /password: (\S+)/.exec(created.stdout)![1]!;
  const login = await request(app.url, "POST", "/api/auth/login", { body: { email: "root@example.test", password } });
  t.equal(login.status, 200, "the printed password works");
  t.equal((await request(app.url, "GET", "/api/admin/users", { token: login.body.access_token })).status, 200, "as an administrator");

  const dup = run("user:create", "--email", "ROOT@example.test");
  t.equal(dup.status, 1);
  t.match(dup.stderr, /already exists/);
  t.match(run("user:create", "--email", "x@example.test", "--role", "wizard").stderr, /unknown role wizard/);
  t.match(run("user:create", "--bogus").stderr, /user:create: Unknown option '--bogus'/);

  const client = run("oauth:client", "--name", "Mobile app", "--id", "mobile-app");
  t.equal(client.status, 0, client.stderr);
  const secret = /client_secret: (\S+)/.exec(client.stdout)![1]!;
  const token = await request(app.url, "POST", "/api/oauth/token", {
    body: { grant_type: "password", client_id: "mobile-app", client_secret: secret, username: "root@example.test", password, scope: "*" },
  });
  t.equal(token.status, 200, token.text);
  t.equal(token.body.scope, "read write admin", "an administrator's token carries the admin scope");
  t.equal((await request(app.url, "GET", "/api/user", { token: token.body.access_token })).status, 200, "the new client's tokens work at once");
});
