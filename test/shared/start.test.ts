/**
 * `npm start` on a machine without PostgreSQL (issue "Done means"): `bin.ts start` with
 * DATABASE_URL unset starts the embedded server in a fresh data folder, migrates, prints
 * its URL and serves /api/health (database and queue ok) within 30 seconds; SIGTERM stops
 * it cleanly, the embedded server included.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";

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

t.test("bin.ts start without DATABASE_URL serves /api/health within 30 s and stops cleanly on SIGTERM", async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "sf-start-"));
  // As root, the embedded server runs as the `postgres` user, which must reach <DATA_DIR>/pg.
  if (process.getuid?.() === 0) await chmod(dataDir, 0o755);
  const pgDir = path.join(dataDir, "pg");
  const postmasterPid = async () => Number((await readFile(path.join(pgDir, "postmaster.pid"), "utf8")).split("\n")[0]);

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
      const pid = await postmasterPid();
      if (pid > 0 && alive(pid)) process.kill(pid, "SIGQUIT");
    }
    await rm(dataDir, { recursive: true, force: true });
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
  const elapsed = Date.now() - started;
  t.ok(url, `the URL is printed:\n${output.slice(-2000)}`);
  t.match(output, /listening on http:\/\/127\.0\.0\.1:\d+/, "as a readable line");
  t.equal(health?.status, 200, `/api/health answers 200 (${JSON.stringify(health?.body)})`);
  t.equal(health?.body.database.ok, true, "database ok");
  t.equal(health?.body.queue.ok, true, "queue ok");
  t.ok(health?.body.queue.workers >= 1, "its worker is beating");
  t.ok(elapsed < 30_000, `within 30 seconds (${elapsed} ms)`);
  t.ok(existsSync(path.join(pgDir, "PG_VERSION")), "the embedded server lives in <DATA_DIR>/pg");
  const serverPid = await postmasterPid();
  t.ok(alive(serverPid), "the embedded server runs");

  child.kill("SIGTERM");
  t.equal(await exited, 0, "SIGTERM: exits 0");
  t.notOk(alive(serverPid), "the embedded server stopped with it");
  t.notOk(existsSync(path.join(pgDir, "postmaster.pid")), "and shut down cleanly (no postmaster.pid left)");
  t.same(processesNaming(pgDir), [], "no process left for this data folder");
  t.match(output, /"msg":"stopped"/, "the shutdown finished");
});
