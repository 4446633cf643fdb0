/**
 * `npm run bench [-- <name filter>] [-- --json]`: runs each test/bench/*.bench.ts in its
 * own process (so memory figures are its own) against a database server prepared as for
 * the tests. Benchmarks are not timed tests: they report, they never fail the run because
 * a target was missed. BENCH_CPU_PROF=<folder> profiles them (support/profile.ts).
 */
import { spawn } from "node:child_process";
import { mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startTestCluster } from "../support/cluster.ts";
import { profileDir, profileFlags, relativiseProfiles } from "./support/profile.ts";

const dir = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const filters = args.filter((a) => !a.startsWith("--"));
const files = (await readdir(dir))
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => filters.length === 0 || filters.some((name) => f.includes(name)))
  .sort();

// `--cpu-prof` for each benchmark's process under BENCH_CPU_PROF (NODE_OPTIONS refuses it).
const nodeFlags = profileFlags();
const profiles = profileDir();
if (profiles) await mkdir(profiles, { recursive: true });

// fsync on, as in production: commit cost is most of what job benchmarks measure.
const cluster = await startTestCluster({ durable: true });
let failed = 0;
try {
  for (const file of files) {
    if (!args.includes("--json")) process.stdout.write(`\n=== ${file}\n`);
    const code = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ["--expose-gc", ...nodeFlags, path.join(dir, file), ...args], {
        stdio: "inherit",
        env: { ...process.env, TEST_PG_ADMIN_URL: cluster.adminUrl, TEST_PG_TEMPLATE: cluster.templateDb, NODE_ENV: "test" },
      });
      child.on("exit", (c) => resolve(c ?? 1));
    });
    if (code !== 0) {
      failed += 1;
      process.stderr.write(`${file} exited with ${code}\n`);
    }
  }
} finally {
  await cluster.stop();
}
if (profiles) process.stderr.write(`${await relativiseProfiles(profiles)} CPU profiles in ${profiles}\n`);
process.exit(failed ? 1 : 0);
