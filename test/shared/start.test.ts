/**
 * `npm start` on a machine without PostgreSQL (issue "Done means"): `bin.ts start` with
 * DATABASE_URL unset starts the embedded server in a fresh data folder, migrates, prints
 * its URL and serves /api/health (database and queue ok) within 30 seconds; SIGTERM stops
 * it cleanly, the embedded server included. As root, the same holds for a data folder the
 * `postgres` user cannot reach (a checkout in root's home): the cluster is kept outside it.
 */
import { spawn } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, readlink, rm, rmdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import t, { type Test } from "tap";

const root = fileURLToPath(new URL("../../", import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Processes whose command line names `dir` (Linux /proc; empty elsewhere). */
function processesNaming(dir: string): number[] {
  if (!existsSync("/proc")) return [];
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(dir)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** The PID in a data folder's postmaster.pid. */
async function postmasterPid(pgDir: string): Promise<number> {
  return Number((await readFile(path.join(pgDir, "postmaster.pid"), "utf8")).split("\n")[0]);
}

interface Started {
  url: string | undefined;
  health: { status: number; body: any } | undefined;
  elapsed: number;
  output: () => string;
  /** Sends SIGTERM; resolves with the exit code. */
  stop: () => Promise<number | null>;
}

/** Runs `bin.ts start` on `dataDir` until /api/health reports a beating worker (or 30 s pass). */
async function startService(t: Test, dataDir: string): Promise<Started> {
  const pgDir = path.join(dataDir, "pg");
  // The child gets this machine's environment minus anything that would point it elsewhere.
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(DATABASE_URL|PORT|HOST|DATA_DIR|APP_URL|NODE_ENV|LOG_LEVEL|TEST_PG_.*)$/.test(name)) env[name] = value;
  }
  Object.assign(env, { DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" });

  const started = Date.now();
  const child = spawn(process.execPath, [path.join(root, "shared/cli/bin.ts"), "start"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
    // A failed run must not leave its database server behind.
    if (existsSync(path.join(pgDir, "postmaster.pid"))) {
      const pid = await postmasterPid(pgDir);
      if (pid > 0 && alive(pid)) process.kill(pid, "SIGQUIT");
    }
  });

  let url: string | undefined;
  let health: { status: number; body: any } | undefined;
  while (Date.now() - started < 30_000 && child.exitCode === null) {
    url ??= /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1];
    if (url) {
      try {
        const res = await fetch(`${url}/api/health`);
        health = { status: res.status, body: await res.json() };
        if (health.status === 200 && health.body.queue?.ok) break;
      } catch {
        // not answering yet
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    health,
    elapsed: Date.now() - started,
    output: () => output,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

t.test("bin.ts start without DATABASE_URL serves /api/health within 30 s and stops cleanly on SIGTERM", async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "sf-start-"));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // As root, the embedded server runs as the `postgres` user; opening the folder lets it
  // keep the cluster in place (the next test covers a folder it cannot reach).
  if (process.getuid?.() === 0) await chmod(dataDir, 0o755);
  const pgDir = path.join(dataDir, "pg");
  const service = await startService(t, dataDir);
  const { url, health, elapsed } = service;
  const output = service.output();

  t.ok(url, `the URL is printed:\n${output.slice(-2000)}`);
  t.match(output, /listening on http:\/\/127\.0\.0\.1:\d+/, "as a readable line");
  t.equal(health?.status, 200, `/api/health answers 200 (${JSON.stringify(health?.body)})`);
  t.equal(health?.body.database.ok, true, "database ok");
  t.equal(health?.body.queue.ok, true, "queue ok");
  t.ok(health?.body.queue.workers >= 1, "its worker is beating");
  t.ok(elapsed < 30_000, `within 30 seconds (${elapsed} ms)`);
  t.ok(existsSync(path.join(pgDir, "PG_VERSION")), "the embedded server lives in <DATA_DIR>/pg");
  t.notOk(lstatSync(pgDir).isSymbolicLink(), "itself, not elsewhere through a link");
  const serverPid = await postmasterPid(pgDir);
  t.ok(alive(serverPid), "the embedded server runs");

  t.equal(await service.stop(), 0, "SIGTERM: exits 0");
  t.notOk(alive(serverPid), "the embedded server stopped with it");
  t.notOk(existsSync(path.join(pgDir, "postmaster.pid")), "and shut down cleanly (no postmaster.pid left)");
  t.same(processesNaming(pgDir), [], "no process left for this data folder");
  t.match(service.output(), /"msg":"stopped"/, "the shutdown finished");
});

const notRoot = process.getuid?.() !== 0 && "only meaningful as root: the embedded server then runs as the postgres user, which must reach the data folder";

t.test("as root, a data folder the postgres user cannot reach (a checkout in a mode-700 home) still works", { skip: notRoot }, async (t) => {
  // A fresh mode-700 folder stands for /root: the postgres user cannot pass through it.
  const home = await mkdtemp(path.join(os.tmpdir(), "sf-private-home-"));
  t.equal(statSync(home).mode & 0o777, 0o700, "the home is closed to other users");
  const dataDir = path.join(home, "checkout", ".data");
  const pgDir = path.join(dataDir, "pg");
  t.teardown(async () => {
    const target = await readlink(pgDir).catch(() => undefined);
    await rm(home, { recursive: true, force: true });
    if (target) {
      await rm(path.resolve(dataDir, target), { recursive: true, force: true });
      await rmdir(path.dirname(path.resolve(dataDir, target))).catch(() => {}); // only when no other cluster lives there
    }
  });

  // What a start before this fix left behind: an empty <DATA_DIR>/pg its initdb could not enter.
  await mkdir(pgDir, { recursive: true, mode: 0o700 });

  const first = await startService(t, dataDir);
  t.equal(first.health?.status, 200, `/api/health answers 200 (${JSON.stringify(first.health?.body) ?? first.output().slice(-3000)})`);
  t.equal(first.health?.body.database.ok, true, "database ok");
  t.ok(lstatSync(pgDir, { throwIfNoEntry: false })?.isSymbolicLink(), "<DATA_DIR>/pg is a link");
  const clusterDir = path.resolve(dataDir, await readlink(pgDir));
  t.notOk(clusterDir.startsWith(`${home}${path.sep}`), `to a folder outside the closed home (${clusterDir})`);
  t.ok(existsSync(path.join(clusterDir, "PG_VERSION")), "which holds the cluster");
  t.match(first.output(), /cannot reach [^"]*\/pg \(a folder above it is closed to other users\), so the cluster lives in /, "and the log says where and why");
  const serverPid = await postmasterPid(clusterDir);
  t.equal(await first.stop(), 0, "SIGTERM: exits 0");
  t.notOk(alive(serverPid), "the embedded server stopped with it");

  const second = await startService(t, dataDir);
  t.equal(second.health?.status, 200, `a second start serves /api/health too (${JSON.stringify(second.health?.body) ?? second.output().slice(-3000)})`);
  t.equal(path.resolve(dataDir, await readlink(pgDir)), clusterDir, "through the same link");
  t.notMatch(second.output(), /applied \d+ migration/, "on the same cluster: nothing to migrate again");
  t.match(second.output(), new RegExp(`is a link: the cluster lives in ${clusterDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`), "and says where it is");
  t.equal(await second.stop(), 0, "SIGTERM: exits 0");

  // Deleting the data folder resets the database, as it does when the cluster lives in it.
  await rm(dataDir, { recursive: true, force: true });
  const third = await startService(t, dataDir);
  t.equal(third.health?.status, 200, `after deleting the data folder, a start serves /api/health (${JSON.stringify(third.health?.body) ?? third.output().slice(-3000)})`);
  t.equal(path.resolve(dataDir, await readlink(pgDir)), clusterDir, "from the same place outside");
  t.match(third.output(), /applied \d+ migration/, "on a new, empty cluster");
  t.equal(await third.stop(), 0, "SIGTERM: exits 0");
});
