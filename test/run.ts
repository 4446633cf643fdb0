/**
 * `npm test` after type-check and lint: starts the test database server (embedded unless
 * DATABASE_URL is set), migrates a template database, then runs tap with the location of
 * both in the environment. Arguments are passed to tap (e.g. a test file to run alone).
 */
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { startTestCluster } from "./support/cluster.ts";

const started = Date.now();
const cluster = await startTestCluster();
process.stdout.write(`test database ready in ${Date.now() - started} ms (${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded PostgreSQL"})\n`);
for (const note of cluster.notes) process.stdout.write(`${note}\n`);

const args = process.argv.slice(2);
const child = spawn(process.execPath, [new URL("../node_modules/tap/dist/esm/run.mjs", import.meta.url).pathname, ...args], {
  stdio: "inherit",
  // Each test file is a process of its own that loads the service's ~2,000 modules: with
  // Node's compile cache (shared with the service's own processes, see shared/cli/bin.ts)
  // every file after the first few skips most of the parsing and type stripping.
  env: { NODE_COMPILE_CACHE: path.join(tmpdir(), "node-compile-cache"), ...process.env, TEST_PG_ADMIN_URL: cluster.adminUrl, TEST_PG_TEMPLATE: cluster.templateDb, NODE_ENV: "test" },
});
const stopSignals = (signal: NodeJS.Signals) => child.kill(signal);
process.on("SIGINT", stopSignals);
process.on("SIGTERM", stopSignals);
const code = await new Promise<number>((resolve) => child.on("exit", (c, s) => resolve(c ?? (s ? 1 : 0))));
await cluster.stop();
process.exit(code);
