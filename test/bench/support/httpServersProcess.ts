/**
 * The HTTP benchmarks' server process (`httpServers.ts`: the service, the bare Koa + pg server
 * and the Koa + Slonik server), started and waited for. Its "ready" line is read here only, so
 * a server added to the process cannot leave one benchmark waiting for a line it no longer
 * matches (the kanban benchmark once hung so), and a process that never gets ready fails the
 * benchmark within a bound instead of holding the run.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import { profileFlags } from "./profile.ts";

export interface HttpServers {
  child: ChildProcessByStdio<null, Readable, null>;
  /** The service's port (`/api/bench/one-query` and every route). */
  ours: number;
  /** The bare Koa + pg server's port. */
  bare: number;
  /** The Koa + the service's Slonik pool server's port. */
  slonik: number;
}

/** Starts the servers on `databaseUrl` (profiled under `BENCH_CPU_PROF`) and resolves once they listen. */
export async function startHttpServers(databaseUrl: string, env: Record<string, string> = {}, timeoutMs = 120_000): Promise<HttpServers> {
  const child = spawn(process.execPath, [...profileFlags(), new URL("./httpServers.ts", import.meta.url).pathname], {
    env: { ...process.env, ...env, DATABASE_URL: databaseUrl },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const [ours, bare, slonik] = await new Promise<number[]>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`the HTTP servers were not ready within ${timeoutMs} ms (${JSON.stringify(out.slice(0, 200))})`)), timeoutMs);
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        const match = /^ready (\d+) (\d+) (\d+)$/m.exec(out);
        if (!match) return;
        clearTimeout(timer);
        // Stop collecting: the servers' access log follows, and gathering and scanning it here
        // would load this process, which also runs the load generator.
        child.stdout.off("data", onData);
        resolve(match.slice(1).map(Number));
      };
      child.stdout.on("data", onData);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the HTTP servers' process exited with ${code}`));
      });
    });
    child.stdout.resume(); // drain the access log
    return { child, ours: ours!, bare: bare!, slonik: slonik! };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}
