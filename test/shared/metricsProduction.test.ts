/**
 * Security review finding 13 (second part): a production web process refuses to start with
 * /metrics open, unless METRICS_PUBLIC=true says that is intended.
 */
import { spawnSync } from "node:child_process";
import t from "tap";
import { freePort } from "../../shared/db/embedded.ts";
import { freshDatabase } from "../support/db.ts";

const bin = new URL("../../shared/cli/bin.ts", import.meta.url).pathname;

t.test("production needs METRICS_TOKEN or an explicit METRICS_PUBLIC", async (t) => {
  const db = await freshDatabase(t);
  const port = await freePort();
  const result = spawnSync(process.execPath, [bin, "web"], {
    env: {
      PATH: process.env.PATH!,
      NODE_ENV: "production",
      DATABASE_URL: db.url,
      DATA_DIR: t.testdir(),
      HOST: "127.0.0.1",
      PORT: String(port),
      APP_URL: `http://127.0.0.1:${port}`,
      APP_KEY: "5f2b9c0e8d7a41f3b6e2c9d8a7f01e4c3b2a19087f6e5d4c3b2a1908f7e6d5c4",
      REALTIME_APP_KEY: "prod-app-key",
      REALTIME_APP_SECRET: "prod-app-secret-0123456789",
      OAUTH_CLIENT_ID: "first-party",
      OAUTH_CLIENT_SECRET: "first-party-secret-0123456789",
      LOG_LEVEL: "silent",
    },
    encoding: "utf8",
    timeout: 60_000,
  });
  t.equal(result.status, 1, result.stderr);
  t.match(result.stderr, /Cannot start: the configuration is invalid/);
  t.match(result.stderr, /METRICS_TOKEN is missing: required in production/);
});
