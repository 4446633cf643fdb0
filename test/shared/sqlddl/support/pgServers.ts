/**
 * Which PostgreSQL server a test can use for what. The test cluster may be an older server
 * than some inputs need (DATABASE_URL points at the machine's own), and pg_dump dumps only
 * servers of its own major version or older, so the real-dump check looks for a server
 * whose major version is that of the pg_dump on PATH: the test cluster's, then the one at
 * PGHOST/PGPORT, then 127.0.0.1:5432, each as user postgres with a short connect timeout.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { engineSkip } from "../../../support/engines.ts";

const run = promisify(execFile);
const CONNECT_TIMEOUT_MS = 2000;

/** Inputs that need a newer server than some machines run, and why; tests skip them there. */
export const NEEDS_SERVER: Record<string, { major: number; because: string }> = {
  "postgresql/pagila.sql": { major: 18, because: "it uses uuidv7() and virtual generated columns" },
  "pg_dump 17-shaped dump": { major: 17, because: "it sets transaction_timeout" },
};

/** The skip message for `name` on a server of major version `major`, or false when it can run. */
export function needsNewer(name: string, major: number): string | false {
  const need = NEEDS_SERVER[name];
  return need && major < need.major ? `${name} needs PostgreSQL ${need.major} (${need.because}); this server is ${major}` : false;
}

/** The major version of the server at `url` (15 for server_version_num 150020). */
export async function serverMajor(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>("select current_setting('server_version_num') as n");
    return Math.floor(Number(rows[0]!.n) / 10000);
  } finally {
    await client.end();
  }
}

/** The test cluster's major version. */
export function clusterMajor(): Promise<number> {
  return serverMajor(process.env.TEST_PG_ADMIN_URL!);
}

/** A superuser URL of the `postgres` database on `host` (a socket directory too) and `port`. */
function adminUrl(host: string, port: string): string {
  return host.startsWith("/") ? `postgresql://postgres@localhost:${port}/postgres?host=${encodeURIComponent(host)}` : `postgresql://postgres@${host}:${port}/postgres`;
}

/** A server the pg_dump on PATH can dump, or why there is none (the message a test skips with). */
export async function pgDumpServer(): Promise<{ adminUrl: string; major: number } | { skip: string }> {
  let dumpMajor: number;
  try {
    const { stdout } = await run("pg_dump", ["--version"]);
    dumpMajor = Number(/(\d+)(?:\.\d+)*/.exec(stdout)?.[1]);
  } catch (error) {
    return { skip: engineSkip(`no pg_dump on PATH (${(error as Error).message.split("\n")[0]}); pg_dump checks skipped`) };
  }
  const candidates = [process.env.TEST_PG_ADMIN_URL!];
  if (process.env.PGHOST || process.env.PGPORT) candidates.push(adminUrl(process.env.PGHOST ?? "127.0.0.1", process.env.PGPORT ?? "5432"));
  candidates.push(adminUrl("127.0.0.1", "5432"));
  const tried: string[] = [];
  const seen = new Set<string>();
  for (const url of candidates) {
    const where = `${new URL(url).searchParams.get("host") ?? new URL(url).hostname}:${new URL(url).port || "5432"}`;
    if (seen.has(where)) continue; // the test cluster may be the server at 127.0.0.1:5432
    seen.add(where);
    try {
      const major = await serverMajor(url);
      if (major === dumpMajor) return { adminUrl: url, major };
      tried.push(`${where}: PostgreSQL ${major}`);
    } catch (error) {
      tried.push(`${where}: ${(error as Error).message}`);
    }
  }
  return { skip: `pg_dump on PATH is version ${dumpMajor} and no reachable server is (${tried.join("; ")}); pg_dump checks skipped` };
}
