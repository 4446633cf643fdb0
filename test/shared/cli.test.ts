import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import t, { type Test } from "tap";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { freePort } from "../../shared/db/embedded.ts";
import { startTestApp } from "../support/app.ts";
import { freshDatabase } from "../support/db.ts";
import { buildUser } from "../support/factories.ts";
import { request } from "../support/http.ts";

const bin = new URL("../../shared/cli/bin.ts", import.meta.url).pathname;

t.test("operator CLI: user:create and oauth:client", async (t) => {
  const app = await startTestApp(t);
  // DATA_DIR: development defaults (the first-party client's pair is unset here) go to a scratch folder.
  const env = { ...process.env, DATABASE_URL: app.db.url, DATA_DIR: t.testdir(), NODE_ENV: "test", APP_KEY: app.config.appKey.toString("hex"), REALTIME_APP_KEY: "test-app-key", REALTIME_APP_SECRET: "test-app-secret-0123456789", APP_URL: app.config.appUrl };
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

  const again = run("oauth:client", "--name", "Mobile app again", "--id", "mobile-app");
  t.equal(again.status, 1, "an existing client is not overwritten");
  t.match(again.stderr, /oauth:client: a client "mobile-app" already exists; choose another --id/);
  const firstParty = run("oauth:client", "--name", "Hijack", "--id", "test-client");
  t.equal(firstParty.status, 1, "nor is the first-party client");
  t.match(firstParty.stderr, /"test-client" is the first-party client, which follows OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET/);
  const stillWorks = await request(app.url, "POST", "/api/oauth/token", {
    body: { grant_type: "password", client_id: "test-client", client_secret: "test-client-secret-0123456789", username: "root@example.test", password },
  });
  t.equal(stillWorks.status, 200, "the first-party secret is unchanged");
  const unchanged = await request(app.url, "POST", "/api/oauth/token", {
    body: { grant_type: "password", client_id: "mobile-app", client_secret: secret, username: "root@example.test", password },
  });
  t.equal(unchanged.status, 200, "and so is the other client's");
});

/** Runs `bin.ts web` until it listens; resolves with its output so far and a stop function. */
async function startWebCommand(t: Test, env: Record<string, string>) {
  const child = spawn(process.execPath, [bin, "web"], { env: { PATH: process.env.PATH!, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  t.teardown(stop);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`web not listening after 30 s:\n${output}`)), 30_000);
    child.stdout.on("data", () => /listening on/.test(output) && (clearTimeout(timer), resolve()));
    child.once("exit", (code) => (clearTimeout(timer), reject(new Error(`web exited (${code}):\n${output}`))));
  });
  return { output: () => output, stop };
}

t.test("development: the first-party client is generated into the data folder once and reused", async (t) => {
  const db = await freshDatabase(t);
  const dataDir = t.testdir();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { NODE_ENV: "development", DATABASE_URL: db.url, DATA_DIR: dataDir, HOST: "127.0.0.1", PORT: String(port), APP_URL: url, LOG_LEVEL: "info" };
  const password = "first party password";
  const user = await buildUser(db.pool, { passwordHash: await hashPassword(password) });
  const token = (clientId: string, clientSecret: string) =>
    request(url, "POST", "/api/oauth/token", { body: { grant_type: "password", client_id: clientId, client_secret: clientSecret, username: user.email, password } });

  const first = await startWebCommand(t, env);
  const printed = /First-party OAuth client: client_id=(\S+) client_secret=(\S+) \(kept in (\S+)\)/.exec(first.output());
  t.ok(printed, "the credentials are printed when generated");
  const stored = JSON.parse(readFileSync(path.join(dataDir, "secrets.json"), "utf8")) as Record<string, string>;
  t.equal(stored.OAUTH_CLIENT_ID, "first-party");
  t.equal(stored.OAUTH_CLIENT_SECRET, printed?.[2], "and kept in secrets.json");
  t.equal(printed?.[3], path.join(dataDir, "secrets.json"));
  t.equal((await token(stored.OAUTH_CLIENT_ID!, stored.OAUTH_CLIENT_SECRET!)).status, 200, "they work");
  await first.stop();

  const second = await startWebCommand(t, env);
  t.notMatch(second.output(), /First-party OAuth client|Generated/, "nothing is generated or printed again");
  t.equal((await token(stored.OAUTH_CLIENT_ID!, stored.OAUTH_CLIENT_SECRET!)).status, 200, "the same credentials work after a restart");
  await second.stop();

  const cli = spawnSync(process.execPath, [bin, "oauth:client", "--name", "Mine", "--id", "first-party"], { env: { PATH: process.env.PATH!, ...env }, encoding: "utf8", timeout: 60_000 });
  t.equal(cli.status, 1);
  t.match(cli.stderr, /"first-party" is the first-party client/);
});

t.test("production never generates a first-party client", async (t) => {
  const db = await freshDatabase(t);
  const dataDir = t.testdir();
  const result = spawnSync(process.execPath, [bin, "web"], {
    env: {
      PATH: process.env.PATH!,
      NODE_ENV: "production",
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      APP_KEY: "5f2b9c0e8d7a41f3b6e2c9d8a7f01e4c3b2a19087f6e5d4c3b2a1908f7e6d5c4",
      REALTIME_APP_KEY: "prod-app-key",
      REALTIME_APP_SECRET: "prod-app-secret-0123456789",
      LOG_LEVEL: "silent",
    },
    encoding: "utf8",
    timeout: 60_000,
  });
  t.equal(result.status, 1, result.stderr);
  t.match(result.stderr, /Cannot start: the configuration is invalid/);
  t.match(result.stderr, /- OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET are missing: required in production until a first-party client exists/);
  t.notOk(existsSync(path.join(dataDir, "secrets.json")), "nothing was written to the data folder");
});
