import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import { withDevelopmentDefaults } from "../../shared/localData.ts";

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

t.test("the first-party OAuth client is configured as a pair, in every environment", async (t) => {
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ ...valid, ...env });
      return [];
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      return error.problems;
    }
  };
  for (const NODE_ENV of ["development", "test", "production"]) {
    t.same(problems({ NODE_ENV, OAUTH_CLIENT_ID: "web-app" }), ["OAUTH_CLIENT_SECRET is missing: required when OAUTH_CLIENT_ID is set (set both, or neither)"], `${NODE_ENV}: id without secret`);
    t.same(problems({ NODE_ENV, OAUTH_CLIENT_SECRET: "s".repeat(20) }), ["OAUTH_CLIENT_ID is missing: required when OAUTH_CLIENT_SECRET is set (set both, or neither)"], `${NODE_ENV}: secret without id`);
  }
  t.same(problems({ OAUTH_CLIENT_ID: "web-app", OAUTH_CLIENT_SECRET: "s".repeat(20) }), [], "both");
  t.same(problems({}), [], "neither");
  t.match(problems({ OAUTH_CLIENT_ID: "web app!", OAUTH_CLIENT_SECRET: "s".repeat(20) }).join("\n"), /OAUTH_CLIENT_ID has the invalid value "web app!": expected 1-128 letters/);
  t.same(problems({ OAUTH_CLIENT_ID: "web-app", PORT: "x" }).length, 2, "reported together with other problems");
});

t.test("development secrets: generated once into secrets.json, reused, never in production", async (t) => {
  const dir = t.testdir();
  const file = path.join(dir, "secrets.json");
  const lines: string[] = [];
  const announce = (line: string) => lines.push(line);
  const first = await withDevelopmentDefaults({ DATA_DIR: dir }, { announce });
  t.equal(first.OAUTH_CLIENT_ID, "first-party");
  t.match(first.OAUTH_CLIENT_SECRET, /^[A-Za-z0-9_-]{43}$/);
  t.ok(first.APP_KEY && first.REALTIME_APP_KEY && first.REALTIME_APP_SECRET);
  const stored = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
  t.same({ ...stored, DATA_DIR: dir }, first, "kept in the file");
  t.match(lines.join("\n"), new RegExp(`client_id=first-party client_secret=${first.OAUTH_CLIENT_SECRET}`), "and printed once");
  t.ok(loadConfig(first), "a loadable configuration");

  lines.length = 0;
  t.same(await withDevelopmentDefaults({ DATA_DIR: dir }, { announce }), first, "reused on the next start");
  t.same(lines, [], "without printing again");

  const half = await withDevelopmentDefaults({ DATA_DIR: dir, OAUTH_CLIENT_ID: "web-app" });
  t.equal(half.OAUTH_CLIENT_ID, "web-app");
  t.equal(half.OAUTH_CLIENT_SECRET, undefined, "half a pair is not completed with the generated secret");
  t.throws(() => loadConfig(half), /OAUTH_CLIENT_SECRET is missing: required when OAUTH_CLIENT_ID is set/);

  const given = await withDevelopmentDefaults({ DATA_DIR: dir, OAUTH_CLIENT_ID: "web-app", OAUTH_CLIENT_SECRET: "s".repeat(20) });
  t.same([given.OAUTH_CLIENT_ID, given.OAUTH_CLIENT_SECRET], ["web-app", "s".repeat(20)], "the environment wins");

  const prodDir = t.testdir();
  const production = await withDevelopmentDefaults({ NODE_ENV: "production", DATA_DIR: prodDir });
  t.same(production, { NODE_ENV: "production", DATA_DIR: prodDir });
  t.notOk(existsSync(path.join(prodDir, "secrets.json")));
});

t.test("the CLI refuses to start with a bad configuration and says why", async (t) => {
  const result = spawnSync(process.execPath, [new URL("../../shared/cli/bin.ts", import.meta.url).pathname, "web"], {
    env: { PATH: process.env.PATH, NODE_ENV: "production", PORT: "99999" },
    encoding: "utf8",
    timeout: 120_000, // only a guard against a hang: a loaded machine needs seconds to load the CLI
  });
  t.equal(result.status, 1);
  t.match(result.stderr, /Cannot start: the configuration is invalid/);
  t.match(result.stderr, /- PORT has the invalid value "99999"/);
  t.match(result.stderr, /- APP_KEY is missing: required/, "production never generates secrets");
  const halfPair = spawnSync(process.execPath, [new URL("../../shared/cli/bin.ts", import.meta.url).pathname, "web"], {
    env: { PATH: process.env.PATH, NODE_ENV: "development", DATA_DIR: t.testdir(), OAUTH_CLIENT_ID: "web-app" },
    encoding: "utf8",
    timeout: 120_000, // only a guard against a hang: a loaded machine needs seconds to load the CLI
  });
  t.equal(halfPair.status, 1);
  t.match(halfPair.stderr, /- OAUTH_CLIENT_SECRET is missing: required when OAUTH_CLIENT_ID is set/, "half a client pair is refused in development too");
  t.notMatch(result.stderr, /at .*\.ts:\d+/, "no stack trace");
});

t.test("the CLI lists its commands", async (t) => {
  const result = spawnSync(process.execPath, [new URL("../../shared/cli/bin.ts", import.meta.url).pathname, "nope"], { encoding: "utf8" });
  t.equal(result.status, 2);
  t.match(result.stderr, /Unknown command "nope"/);
  t.match(result.stderr, /migrate/);
});

t.test("numbers are read in plain digits only, white space around them allowed", async (t) => {
  const port = (PORT: string) => {
    try {
      return loadConfig({ ...valid, PORT }).port;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      return error.problems.join("\n");
    }
  };
  t.equal(port("8080"), 8080);
  t.equal(port(" 8080\t"), 8080, "an env file's stray white space");
  t.equal(port("0"), 0);
  // Number() reads each of these as some port: 80, 1000, 0 (a random port), 80, 80, 8080.
  for (const given of ["0x50", "1e3", "   ", "80.0", "+80", "08080", "80 80", "-1", "65536"]) {
    t.match(port(given), /^PORT has the invalid value .*: expected an integer between 0 and 65535, in digits$/, JSON.stringify(given));
  }
  t.match(
    (() => {
      try {
        loadConfig({ ...valid, WORKER_CONCURRENCY: "0b11" });
        return "";
      } catch (error) {
        return (error as ConfigError).problems.join("\n");
      }
    })(),
    /WORKER_CONCURRENCY has the invalid value "0b11"/,
    "every integer variable, not only the port",
  );
});
