/**
 * `npm run test:mutation -- <area>`: StrykerJS over one area's modules. The test database
 * server starts once for the whole run (not once per mutant, as `npm run test:only` would),
 * and each mutant runs tap (stopping at the first failure) on the test files that check the
 * mutated module, so a mutant costs one run of those files only. An area is a list of parts,
 * each its own Stryker run over some modules with their test files; the scores are printed per
 * file and in total from each part's JSON report (reports/mutation/<area>-<n>.json).
 *
 * Areas: `policies` (api/policies), `jobs` (shared/jobs), `ledger` (shared/credits/ledger.ts),
 * `realtime` (api/realtime), `net` (shared/net, the outbound network guard), `crypto`
 * (shared/crypto.ts and the signed links and reset tokens built on it), `ratelimit`
 * (shared/rateLimit.ts and its middleware), `all` (every one), and one part of an area
 * alone: `jobs-kinds`, `jobs-console`, `jobs-layer`, `realtime-protocol`, `realtime-access`,
 * `realtime-server`, `net-address`, `net-guard`, `net-dispatch`, `crypto-core`,
 * `crypto-uses`. Arguments after the area go to
 * every `stryker run` (e.g. `--concurrency 2`) after the part's own, so they override them:
 * `realtime-access --mutate api/realtime/reauthorize.ts` mutates that one file of the part
 * against the part's test files (the last `--mutate` wins). Stryker splits `--mutate` at
 * commas, so each part names its files one by one (a brace glob would be cut apart).
 */
import { spawn } from "node:child_process";
import { copyFile, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startTestCluster } from "./support/cluster.ts";

const tap = fileURLToPath(new URL("../node_modules/tap/dist/esm/run.mjs", import.meta.url));
const stryker = fileURLToPath(new URL("../node_modules/@stryker-mutator/core/bin/stryker.js", import.meta.url));

interface Part {
  mutate: string[];
  tests: string[];
}

const areas: Record<string, Part[]> = {
  policies: [{ mutate: ["api/policies/**/*.ts"], tests: ["test/api/policies.test.ts"] }],
  "jobs-kinds": [{ mutate: ["shared/jobs/kinds.ts", "shared/jobs/kind.ts"], tests: ["test/shared/jobs/kinds.test.ts", "test/shared/jobs/lifecycle.test.ts"] }],
  "jobs-console": [{ mutate: ["shared/jobs/console.ts"], tests: ["test/shared/jobs/console.test.ts"] }],
  // One part per test file, so a mutant runs only the file that tests its module (the three
  // together took ~16 s per mutant, most of it the worker run of enqueueMany.test.ts).
  "jobs-layer": [
    { mutate: ["enqueue", "errors", "events", "finish", "records"].map((name) => `shared/jobs/${name}.ts`), tests: ["test/shared/jobs/lifecycle.test.ts"] },
    { mutate: ["shared/jobs/await.ts"], tests: ["test/shared/jobs/await.test.ts"] },
    { mutate: ["shared/jobs/enqueueMany.ts"], tests: ["test/shared/jobs/enqueueMany.test.ts"] },
  ],
};
areas.jobs = [...areas["jobs-kinds"]!, ...areas["jobs-console"]!, ...areas["jobs-layer"]!];
areas.ledger = [{ mutate: ["shared/credits/ledger.ts"], tests: ["test/shared/credits/ledger.test.ts", "test/shared/credits/ledgerChecks.test.ts", "test/api/credits.test.ts"] }];
// The realtime modules in three parts, each run against the files that exercise it, so a
// mutant of the frame or protocol code does not wait for the idle and restart tests.
areas["realtime-protocol"] = [
  { mutate: ["preparedFrame", "protocol"].map((name) => `api/realtime/${name}.ts`), tests: ["test/api/realtime.frames.test.ts", "test/api/realtime.test.ts"] },
];
areas["realtime-access"] = [
  {
    mutate: ["channelAuth", "grants", "reauthorize"].map((name) => `api/realtime/${name}.ts`),
    // realtime.server.test.ts last: it checks that a stopped server's re-authorizer lets go of the hub.
    tests: ["test/api/security/realtimeAccess.test.ts", "test/api/security/realtimeReauth.test.ts", "test/api/security/realtimeGrantReplay.test.ts", "test/api/realtime.test.ts", "test/api/realtime.server.test.ts"],
  },
];
areas["realtime-server"] = [
  {
    mutate: ["api/realtime/socketServer.ts"],
    tests: ["test/api/realtime.server.test.ts", "test/api/realtime.recheck.test.ts", "test/api/security/realtimeAccess.test.ts", "test/api/security/realtimeGrantReplay.test.ts", "test/api/realtime.test.ts", "test/api/realtime.idle.test.ts", "test/api/realtime.restart.test.ts", "test/api/jobConsoleWatch.test.ts"],
  },
  { mutate: ["api/realtime/channelWatches.ts"], tests: ["test/api/jobConsoleWatch.test.ts"] },
];
areas.realtime = [...areas["realtime-protocol"], ...areas["realtime-access"], ...areas["realtime-server"]];
// The network guard (SSRF) in three parts: the address classes and notations against their
// unit tests, the guard's checks and lookup, and the fetch dispatcher. The quick net tests
// run first; the files after them reach the guard through the service (the environment
// routes over HTTP, the git hosts' SDKs through the guarded fetch) and run only for a mutant
// that survives the first.
areas["net-address"] = [
  { mutate: ["addressClass", "ipAddress"].map((name) => `shared/net/${name}.ts`), tests: ["test/shared/net/addressClass.test.ts", "test/shared/net/networkGuard.test.ts"] },
];
areas["net-guard"] = [
  { mutate: ["networkGuard", "guardedLookup"].map((name) => `shared/net/${name}.ts`), tests: ["test/shared/net/networkGuard.test.ts", "test/api/deployments/environments.test.ts"] },
];
// The git hosts' deploy tests (github, gitlab) also fetch through the dispatcher, but with
// them a mutant that hangs a fetch cost ~35 s to time out and a survivor ~15 s, so the part
// runs the net tests alone.
areas["net-dispatch"] = [
  {
    mutate: ["guardedDispatcher", "guardedFetch"].map((name) => `shared/net/${name}.ts`),
    tests: ["test/shared/net/networkGuard.test.ts", "test/shared/net/guardedFetch.test.ts"],
  },
];
areas.net = [...areas["net-address"], ...areas["net-guard"], ...areas["net-dispatch"]];
// Secrets at rest, signed links and token hashes: crypto.ts against the routes that seal
// (deployment environments), sign (attachment links, e-mail verification) and hash (password
// resets); then the modules that hold those secrets, against the same routes.
areas["crypto-core"] = [
  { mutate: ["shared/crypto.ts"], tests: ["test/shared/crypto.test.ts", "test/api/accounts.test.ts", "test/api/messages.test.ts", "test/api/deployments/environments.test.ts"] },
];
areas["crypto-uses"] = [
  {
    mutate: ["shared/attachments/links.ts", "shared/auth/emailVerification.ts", "shared/auth/passwordResets.ts"],
    tests: ["test/api/accounts.test.ts", "test/api/messages.test.ts", "test/api/security/verificationLinks.test.ts"],
  },
];
areas.crypto = [...areas["crypto-core"], ...areas["crypto-uses"]];
// The request budgets (leased from PostgreSQL) and login attempt counts, with the middleware
// that charges them, against the routes that are limited.
areas.ratelimit = [
  {
    mutate: ["shared/rateLimit.ts", "api/middleware/rateLimit.ts"],
    tests: ["test/api/rateLimit.test.ts", "test/api/security/loginSources.test.ts", "test/api/system.test.ts"],
  },
];
areas.all = [...areas.policies!, ...areas.jobs, ...areas.ledger, ...areas.realtime, ...areas.net, ...areas.crypto, ...areas.ratelimit];

const [area = "all", ...rest] = process.argv.slice(2);
const parts = areas[area];
if (!parts) {
  process.stderr.write(`unknown area ${area}: one of ${Object.keys(areas).join(", ")}\n`);
  process.exit(2);
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, [stryker, "run", ...args], { stdio: "inherit", env });
  const stop = (signal: NodeJS.Signals) => child.kill(signal);
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  return new Promise<number>((resolve) => child.on("exit", (c, s) => resolve(c ?? (s ? 1 : 0))));
}

type Status = "Killed" | "Timeout" | "Survived" | "NoCoverage" | "CompileError" | "RuntimeError" | "Ignored" | "Pending";
/** The JSON report, as far as the summary reads it. */
const report = (text: string) => JSON.parse(text) as { files: Record<string, { mutants: { status: Status }[] }> };

const cluster = await startTestCluster();
const env = { NODE_COMPILE_CACHE: path.join(tmpdir(), "node-compile-cache"), ...process.env, TEST_PG_ADMIN_URL: cluster.adminUrl, TEST_PG_TEMPLATE: cluster.templateDb, NODE_ENV: "test" };
let code = 0;
const reports: string[] = [];
for (const [index, part] of parts.entries()) {
  const json = `reports/mutation/${area}-${index + 1}.json`;
  // tap sorts the files it is given by name, so one tap over the list would run them in
  // alphabetical order; one tap per file, chained with &&, keeps the part's order (the quick
  // file that catches most mutants first) and stops at the first file that fails.
  const command = part.tests.map((file) => [process.execPath, tap, "--bail", "--jobs=1", file].map((word) => JSON.stringify(word)).join(" ")).join(" && ");
  const args = ["--mutate", part.mutate.join(","), "--commandRunner.command", command, "--reporters", "clear-text,json,progress-append-only", ...rest];
  // A part that fails before reporting must not pass off the previous part's report as its own.
  await rm("reports/mutation/mutation.json", { force: true });
  code = (await run(args, env)) || code;
  await copyFile("reports/mutation/mutation.json", json).catch(() => {});
  reports.push(json);
}
await cluster.stop();

// Score: detected (killed or timed out) over valid mutants (detected, survived, not covered).
const rows: [string, number, number][] = [];
for (const file of reports) {
  const parsed = report(await readFile(file, "utf8").catch(() => '{"files":{}}'));
  for (const [name, { mutants }] of Object.entries(parsed.files)) {
    const detected = mutants.filter((m) => m.status === "Killed" || m.status === "Timeout").length;
    const valid = detected + mutants.filter((m) => m.status === "Survived" || m.status === "NoCoverage").length;
    rows.push([name, detected, valid]);
  }
}
const detectedAll = rows.reduce((n, [, d]) => n + d, 0);
const validAll = rows.reduce((n, [, , v]) => n + v, 0);
const percent = (d: number, v: number) => (v ? ((100 * d) / v).toFixed(1) : "n/a");
for (const [name, d, v] of rows) process.stdout.write(`${name}: ${d}/${v} detected (${percent(d, v)} %)\n`);
process.stdout.write(`${area}: ${detectedAll}/${validAll} detected (${percent(detectedAll, validAll)} %)\n`);
process.exit(code);
