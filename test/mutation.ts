/**
 * `npm run test:mutation -- <area>`: StrykerJS over one area's modules, each mutant checked
 * by the test files that cover that area. The test database server starts once for the whole
 * run (not once per mutant, as `npm run test:only` would), and every mutant runs tap on the
 * area's files against it, so a mutant costs one run of those files.
 *
 * Areas: `policies` (api/policies), `jobs` (shared/jobs), `all` (the areas of
 * stryker.config.json with its command). More arguments go to `stryker run` (e.g.
 * `--mutate api/policies/team.ts`).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startTestCluster } from "./support/cluster.ts";

const tap = fileURLToPath(new URL("../node_modules/tap/dist/esm/run.mjs", import.meta.url));
const stryker = fileURLToPath(new URL("../node_modules/@stryker-mutator/core/bin/stryker.js", import.meta.url));

/** Per area: what is mutated and the test files that check it. */
const areas: Record<string, { mutate: string; tests: string[] }> = {
  policies: { mutate: "api/policies/**/*.ts", tests: ["test/api/policies.test.ts"] },
  jobs: { mutate: "shared/jobs/**/*.ts", tests: ["test/shared/jobs/lifecycle.test.ts", "test/shared/jobs/await.test.ts", "test/shared/jobs/console.test.ts", "test/shared/jobs/kinds.test.ts", "test/shared/jobs/enqueueMany.test.ts"] },
};

const [area = "all", ...rest] = process.argv.slice(2);
const chosen = areas[area];
if (area !== "all" && !chosen) {
  process.stderr.write(`unknown area ${area}: one of ${[...Object.keys(areas), "all"].join(", ")}\n`);
  process.exit(2);
}
const args = chosen
  ? ["--mutate", chosen.mutate, "--commandRunner.command", `${JSON.stringify(process.execPath)} ${JSON.stringify(tap)} --jobs=1 ${chosen.tests.join(" ")}`, ...rest]
  : rest;

const cluster = await startTestCluster();
const child = spawn(process.execPath, [stryker, "run", ...args], {
  stdio: "inherit",
  env: { ...process.env, TEST_PG_ADMIN_URL: cluster.adminUrl, TEST_PG_TEMPLATE: cluster.templateDb, NODE_ENV: "test" },
});
const stop = (signal: NodeJS.Signals) => child.kill(signal);
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
const code = await new Promise<number>((resolve) => child.on("exit", (c, s) => resolve(c ?? (s ? 1 : 0))));
await cluster.stop();
process.exit(code);
