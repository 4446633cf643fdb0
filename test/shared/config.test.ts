import { spawnSync } from "node:child_process";
import t from "tap";
import { ConfigError, loadConfig } from "../../shared/config.ts";

const valid = { APP_KEY: "a".repeat(64), REALTIME_APP_KEY: "key-12345", REALTIME_APP_SECRET: "s".repeat(20) };

t.test("defaults", async (t) => {
  const config = loadConfig(valid);
  t.equal(config.port, 3000);
  t.equal(config.databaseUrl, undefined, "embedded database when DATABASE_URL is unset");
  t.equal(config.worker.concurrency, 4);
  t.equal(config.syncWaitMs, 10_000);
  t.equal(config.allowPrivateNetworkTargets, false);
  t.equal(config.appKey.length, 32);
  t.equal(config.appUrl, "http://localhost:3000");
});

t.test("one clear line per bad or missing variable", async (t) => {
  let error: unknown;
  try {
    loadConfig({ PORT: "abc", DATABASE_URL: "mysql://x", WORKER_CONCURRENCY: "0", ALLOW_PRIVATE_NETWORK_TARGETS: "maybe", APP_KEY: "short" });
  } catch (e) {
    error = e;
  }
  t.ok(error instanceof ConfigError);
  const problems = (error as ConfigError).problems;
  t.equal(problems.length, 7);
  t.match(problems.join("\n"), /PORT has the invalid value "abc": expected an integer between 0 and 65535/);
  t.match(problems.join("\n"), /DATABASE_URL has the invalid value "<redacted>": expected a postgres:\/\/ connection URL/);
  t.match(problems.join("\n"), /WORKER_CONCURRENCY has the invalid value "0"/);
  t.match(problems.join("\n"), /ALLOW_PRIVATE_NETWORK_TARGETS has the invalid value "maybe"/);
  t.match(problems.join("\n"), /APP_KEY has the invalid value "<redacted>": expected 32 bytes/);
  t.match(problems.join("\n"), /REALTIME_APP_KEY is missing: required/);
  t.match(problems.join("\n"), /REALTIME_APP_SECRET is missing: required/);
  t.notMatch(problems.join("\n"), /short/, "secret values are never echoed");
});

t.test("the CLI refuses to start with a bad configuration and says why", async (t) => {
  const result = spawnSync(process.execPath, [new URL("../../shared/cli/bin.ts", import.meta.url).pathname, "web"], {
    env: { PATH: process.env.PATH, NODE_ENV: "production", PORT: "99999" },
    encoding: "utf8",
    timeout: 20_000,
  });
  t.equal(result.status, 1);
  t.match(result.stderr, /Cannot start: the configuration is invalid/);
  t.match(result.stderr, /- PORT has the invalid value "99999"/);
  t.match(result.stderr, /- APP_KEY is missing: required/, "production never generates secrets");
  t.notMatch(result.stderr, /at .*\.ts:\d+/, "no stack trace");
});

t.test("the CLI lists its commands", async (t) => {
  const result = spawnSync(process.execPath, [new URL("../../shared/cli/bin.ts", import.meta.url).pathname, "nope"], { encoding: "utf8" });
  t.equal(result.status, 2);
  t.match(result.stderr, /Unknown command "nope"/);
  t.match(result.stderr, /migrate/);
});
