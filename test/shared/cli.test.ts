/**
 * The operator CLI (`bin.ts`) as operators run it, against a real `bin.ts web`: in
 * development the first process on a fresh data folder generates the first-party OAuth
 * client into it and prints it once, later processes reuse it, and `oauth:client` refuses
 * its id; `user:create` creates a user whose printed password signs in, and refuses
 * duplicates, unknown roles and options; `oauth:client` creates a client whose tokens work
 * at once and refuses an existing id. Production never generates a first-party client.
 * (That `bin.ts start` prints what it generates is in start.test.ts.)
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import t, { type Test } from "tap";
import { freePort } from "../../shared/db/embedded.ts";
import { freshDatabase } from "../support/db.ts";
import { request } from "../support/http.ts";
import { inheritedEnv, nodeCommand } from "../support/processes.ts";

const bin = new URL("../../shared/cli/bin.ts", import.meta.url).pathname;

/** Runs `bin.ts web` until it listens; resolves with its output so far and a stop function. */
async function startWebCommand(t: Test, env: Record<string, string>) {
  const [command, args] = nodeCommand(bin, "web");
  const child = spawn(command, args, { env: { ...inheritedEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
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
    const timer = setTimeout(() => reject(new Error(`web not listening after 120 s:\n${output}`)), 120_000);
    child.stdout.on("data", () => /listening on/.test(output) && (clearTimeout(timer), resolve()));
    child.once("exit", (code) => (clearTimeout(timer), reject(new Error(`web exited (${code}):\n${output}`))));
  });
  return { output: () => output, stop };
}

t.test("development: the first-party client is generated into the data folder once and reused; the operator commands", async (t) => {
  const db = await freshDatabase(t);
  const dataDir = t.testdir();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { NODE_ENV: "development", DATABASE_URL: db.url, DATA_DIR: dataDir, HOST: "127.0.0.1", PORT: String(port), APP_URL: url, LOG_LEVEL: "info" };
  const run = (...args: string[]) => {
    const [command, argv] = nodeCommand(bin, ...args);
    return spawnSync(command, argv, { env: { ...inheritedEnv(), ...env }, encoding: "utf8", timeout: 120_000 });
  };
  const token = (clientId: string, clientSecret: string, username: string, password: string, scope?: string) =>
    request(url, "POST", "/api/oauth/token", { body: { grant_type: "password", client_id: clientId, client_secret: clientSecret, username, password, ...(scope ? { scope } : {}) } });

  // The first process on the fresh data folder (any command reads the configuration the same way).
  const created = run("user:create", "--email", "root@example.test", "--name", "Root", "--role", "admin", "--role", "developer");
  t.equal(created.status, 0, created.stderr);
  const printed = /First-party OAuth client: client_id=(\S+) client_secret=(\S+) \(kept in (\S+)\)/.exec(created.stderr);
  t.ok(printed, "the first-party credentials are printed when generated");
  const stored = JSON.parse(readFileSync(path.join(dataDir, "secrets.json"), "utf8")) as Record<string, string>;
  t.equal(stored.OAUTH_CLIENT_ID, "first-party");
  t.equal(stored.OAUTH_CLIENT_SECRET, printed?.[2], "and kept in secrets.json");
  t.equal(printed?.[3], path.join(dataDir, "secrets.json"));
  t.match(created.stdout, /created user \d+ <root@example.test> with roles admin, developer, user/);
  const password = /password: (\S+)/.exec(created.stdout)![1]!;

  const web = await startWebCommand(t, env);
  t.notMatch(web.output(), /First-party OAuth client|Generated/, "a later process generates and prints nothing again");
  t.equal((await token(stored.OAUTH_CLIENT_ID!, stored.OAUTH_CLIENT_SECRET!, "root@example.test", password)).status, 200, "and the kept credentials work in it");

  const firstParty = run("oauth:client", "--name", "Mine", "--id", "first-party");
  t.equal(firstParty.status, 1, "oauth:client refuses the first-party id");
  t.match(firstParty.stderr, /"first-party" is the first-party client, which follows OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET/);
  t.equal((await token(stored.OAUTH_CLIENT_ID!, stored.OAUTH_CLIENT_SECRET!, "root@example.test", password)).status, 200, "the first-party secret is unchanged");

  await t.test("operator CLI: user:create and oauth:client", async (t) => {
    const login = await request(url, "POST", "/api/auth/login", { body: { email: "root@example.test", password } });
    t.equal(login.status, 200, "the printed password works");
    t.equal((await request(url, "GET", "/api/admin/users", { token: login.body.access_token })).status, 200, "as an administrator");

    const dup = run("user:create", "--email", "ROOT@example.test");
    t.equal(dup.status, 1);
    t.match(dup.stderr, /already exists/);
    t.match(run("user:create", "--email", "x@example.test", "--role", "wizard").stderr, /unknown role wizard/);
    t.match(run("user:create", "--bogus").stderr, /user:create: Unknown option '--bogus'/);

    const client = run("oauth:client", "--name", "Mobile app", "--id", "mobile-app");
    t.equal(client.status, 0, client.stderr);
    const secret = /client_secret: (\S+)/.exec(client.stdout)![1]!;
    const issued = await token("mobile-app", secret, "root@example.test", password, "*");
    t.equal(issued.status, 200, issued.text);
    t.equal(issued.body.scope, "read write admin", "an administrator's token carries the admin scope");
    t.equal((await request(url, "GET", "/api/user", { token: issued.body.access_token })).status, 200, "the new client's tokens work at once");

    const again = run("oauth:client", "--name", "Mobile app again", "--id", "mobile-app");
    t.equal(again.status, 1, "an existing client is not overwritten");
    t.match(again.stderr, /oauth:client: a client "mobile-app" already exists; choose another --id/);
    t.equal((await token("mobile-app", secret, "root@example.test", password)).status, 200, "its secret is unchanged");
  });

  await web.stop();
});

t.test("production never generates a first-party client", async (t) => {
  const db = await freshDatabase(t);
  const dataDir = t.testdir();
  const [command, args] = nodeCommand(bin, "web");
  const result = spawnSync(command, args, {
    env: {
      ...inheritedEnv(),
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
    timeout: 120_000,
  });
  t.equal(result.status, 1, result.stderr);
  t.match(result.stderr, /Cannot start: the configuration is invalid/);
  t.match(result.stderr, /- OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET are missing: required in production until a first-party client exists/);
  t.notOk(existsSync(path.join(dataDir, "secrets.json")), "nothing was written to the data folder");
});
