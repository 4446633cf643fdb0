/**
 * PostgreSQL refuses to run as root, so as root the embedded server runs as the `postgres`
 * system user. That user must be able to reach what the server uses (its binaries and its
 * data folder): these helpers create it, ask what it can reach, and name the folders
 * outside a checkout where a copy it can reach is kept.
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** The user and group the embedded server runs as. */
export type Ids = { uid: number; gid: number };

/** The `postgres` user's ids when we run as root (created if missing); undefined otherwise. */
export function postgresIds(): Ids | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    execFileSync("sh", ["-c", "getent group postgres >/dev/null || groupadd --system postgres; useradd --system -g postgres -M -d /nonexistent postgres"]);
    return { uid: id("-u"), gid: id("-g") };
  }
}

/** Folders outside the tree for what the `postgres` user cannot reach in place, best first: /var/lib survives reboots, the temporary folder may not. */
export const OUTSIDE_HOMES = [
  { dir: "/var/lib/schemaforge", durable: true },
  { dir: path.join(os.tmpdir(), "schemaforge-pg"), durable: false },
];

/** Creates `dir` (and its parents) passable by everyone whatever the umask; an existing folder keeps its mode. */
export async function makeOpenFolder(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true });
  if (!first) return;
  for (let current = dir; ; current = path.dirname(current)) {
    await chmod(current, 0o755);
    if (current === first) break;
  }
}

/** Whether the user `ids` may pass through every folder down to `target` and execute it (a folder: enter it; a program: run it). */
export function reachableBy(target: string, ids: Ids): boolean {
  try {
    // Spawned with the same uid/gid (and, as Node does, no supplementary groups) as the
    // server will be, so the answer is the one the server would get.
    execFileSync("sh", ["-c", 'test -x "$1"', "sh", target], { stdio: "ignore", ...ids });
    return true;
  } catch {
    return false;
  }
}
