/**
 * `npm run bench [-- <name filter>] [-- --json]`: runs each test/bench/*.bench.ts in its
 * own process (so memory figures are its own) against a database server prepared as for
 * the tests. Benchmarks are not timed tests: they report, they never fail the run because
 * a target was missed. BENCH_CPU_PROF=<folder> profiles them (support/profile.ts).
 * A benchmark still running after BENCH_FILE_TIMEOUT_S seconds (default 900; a full run of all
 * of them takes 8–11 minutes) is ended with the processes it started, and counts as failed, so
 * one that hangs cannot hold the rest of the run.
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

const FILE_TIMEOUT_MS = Number(process.env.BENCH_FILE_TIMEOUT_S ?? 900) * 1000;

/** Sends `signal` to the process group `pid` leads (a benchmark and what it started). */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

// Each benchmark runs in a process group of its own, which no longer gets the terminal's
// Ctrl-C: a stop is passed on to the running one, and no further one starts.
let running: number | undefined;
let stopped = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    stopped = true;
    if (running) signalGroup(running, signal);
  });
}

/** Runs one benchmark file with what it starts; its exit code, or null when it was ended for its time. */
function runFile(file: string, env: NodeJS.ProcessEnv): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--expose-gc", ...nodeFlags, path.join(dir, file), ...args], { stdio: "inherit", env, detached: true });
    running = child.pid;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup(child.pid!, "SIGKILL");
    }, FILE_TIMEOUT_MS);
    child.on("exit", (code) => {
      clearTimeout(timer);
      running = undefined;
      signalGroup(child.pid!, "SIGKILL"); // whatever it started and left behind
      resolve(timedOut ? null : (code ?? 1));
    });
  });
}

// fsync on, as in production: commit cost is most of what job benchmarks measure.
const cluster = await startTestCluster({ durable: true });
let failed = 0;
try {
  for (const file of files) {
    if (stopped) break;
    if (!args.includes("--json")) process.stdout.write(`\n=== ${file}\n`);
    const code = await runFile(file, { ...process.env, TEST_PG_ADMIN_URL: cluster.adminUrl, TEST_PG_TEMPLATE: cluster.templateDb, NODE_ENV: "test" });
    if (code !== 0) {
      failed += 1;
      process.stderr.write(code === null ? `${file} was still running after ${FILE_TIMEOUT_MS / 1000} s and was ended\n` : `${file} exited with ${code}\n`);
    }
  }
} finally {
  await cluster.stop();
}
if (profiles) process.stderr.write(`${await relativiseProfiles(profiles)} CPU profiles in ${profiles}\n`);
process.exit(failed || stopped ? 1 : 0);
