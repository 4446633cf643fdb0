/**
 * `bin.ts start` as a child process for the start tests: runs the service of a checkout on a
 * data folder, waits for /api/health with a beating worker, and cleans up whatever a failed
 * run left (the service, and its embedded database server).
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Test } from "tap";
import { nodeCommand } from "./processes.ts";

/** This checkout's root folder. */
export const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Whether a process with this id exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Processes whose command line names `dir` (Linux /proc; empty elsewhere). */
export function processesNaming(dir: string): number[] {
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
export async function postmasterPid(pgDir: string): Promise<number> {
  return Number((await readFile(path.join(pgDir, "postmaster.pid"), "utf8")).split("\n")[0]);
}

/** A running `bin.ts start`. */
export interface Started {
  url: string | undefined;
  health: { status: number; body: any } | undefined;
  elapsed: number;
  output: () => string;
  /** Sends SIGTERM; resolves with the exit code. */
  stop: () => Promise<number | null>;
}

/**
 * Runs `bin.ts start` of the checkout at `root` on `dataDir` until /api/health reports a
 * beating worker, or `giveUpMs` pass (the caller judges what it got; the default is a guard
 * against a hang, not a speed claim).
 */
export async function startService(t: Test, dataDir: string, { root = repositoryRoot, giveUpMs = 180_000 } = {}): Promise<Started> {
  const pgDir = path.join(dataDir, "pg");
  // The child gets this machine's environment minus anything that would point it elsewhere.
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(DATABASE_URL|PORT|HOST|DATA_DIR|APP_URL|NODE_ENV|LOG_LEVEL|TEST_PG_.*)$/.test(name)) env[name] = value;
  }
  Object.assign(env, { DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" });

  const started = Date.now();
  const [command, args] = nodeCommand(path.join(root, "shared/cli/bin.ts"), "start");
  const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
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
  while (Date.now() - started < giveUpMs && child.exitCode === null) {
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
