/**
 * A real FTP server for tests: ftp-srv on loopback, one user, a temporary root directory,
 * passive mode on a random port range. Options inject the failures deployment tests need
 * (a write that fails part-way, a server that echoes the password in its 530 reply).
 */
import type { EventEmitter } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import ftpSrv from "ftp-srv";

// ftp-srv is CommonJS: its classes are properties of module.exports.
const { FtpSrv, FileSystem } = ftpSrv;

/** Options of the FTP peer. */
export interface FtpPeerOptions {
  username?: string;
  password?: string;
  /** Existing root directory (a fresh temporary one when absent, removed on close). */
  root?: string;
  /** Fail every STOR after this many successful ones (across connections). */
  failWritesAfter?: number;
  /** Reply to a wrong password with a 530 message that quotes the password given. */
  echoPasswordOnFailure?: boolean;
  /**
   * Disable Nagle on control connections (default true), as production servers do. With
   * false, ftp-srv runs as shipped: each reply that follows another waits for the client's
   * delayed ACK, about 40 ms, much like the round trip of a distant server.
   */
  noDelay?: boolean;
}

/** A running FTP peer. */
export interface FtpPeer {
  host: string;
  port: number;
  username: string;
  password: string;
  /** The local directory the FTP root `/` maps to. */
  root: string;
  /** Logins accepted so far, and the most connections open at once. */
  stats: { logins: number; open: number; maxOpen: number; stores: number };
  /** Failure injection that tests may change while the peer runs. */
  controls: { failWritesAfter: number | undefined };
  close(): Promise<void>;
}

const silentLog = {
  child() {
    return silentLog;
  },
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
};

/** Starts an FTP server on 127.0.0.1 with an ephemeral control port. */
export async function startFtpPeer(options: FtpPeerOptions = {}): Promise<FtpPeer> {
  const username = options.username ?? "deployer";
  const password = options.password ?? "ftp-secret-Passw0rd";
  const ownRoot = !options.root;
  const root = options.root ?? (await mkdtemp(path.join(tmpdir(), "sf-ftp-")));
  // A random passive range per peer, so parallel test files rarely probe the same ports.
  const pasvMin = 20_000 + Math.floor(Math.random() * 400) * 100;
  // ftp-srv hooks SIGTERM, SIGINT and SIGQUIT of the whole process for every server it makes
  // and never lets go; a peer is stopped by close(), so those hooks are removed at once.
  const signals = ["SIGTERM", "SIGINT", "SIGQUIT"] as const;
  const hooked = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const server = new FtpSrv({ url: "ftp://127.0.0.1:0", pasv_url: "127.0.0.1", pasv_min: pasvMin, pasv_max: pasvMin + 99, anonymous: false, log: silentLog, greeting: "SchemaForge test FTP" });
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) if (!hooked.get(signal)!.has(listener)) process.off(signal, listener);
  }
  const stats = { logins: 0, open: 0, maxOpen: 0, stores: 0 };
  const controls = { failWritesAfter: options.failWritesAfter };
  class CountingFileSystem extends FileSystem {
    override write(fileName: string, opts: { append?: boolean; start?: any }) {
      if (controls.failWritesAfter !== undefined && stats.stores >= controls.failWritesAfter) throw new Error("Disk quota exceeded");
      stats.stores += 1;
      return super.write(fileName, opts);
    }
  }

  server.on("login", ({ connection, username: user, password: given }, resolve, reject) => {
    if (user !== username || given !== password) {
      reject(new Error(options.echoPasswordOnFailure ? `Login incorrect for ${user} with password ${given}` : "Login incorrect"));
      return;
    }
    stats.logins += 1;
    stats.open += 1;
    stats.maxOpen = Math.max(stats.maxOpen, stats.open);
    resolve({ fs: new CountingFileSystem(connection, { root, cwd: "/" }) });
  });
  // Production FTP servers disable Nagle on the control connection; ftp-srv does not, and
  // its "150" and "226" replies then wait out the client's delayed ACK (40 ms per file).
  const events = server as unknown as EventEmitter;
  events.on("connect", ({ connection }: { connection: { commandSocket: Socket } }) => connection.commandSocket.setNoDelay(options.noDelay ?? true));
  events.on("disconnect", ({ connection }: { connection: { authenticated?: boolean } }) => {
    if (connection.authenticated) stats.open -= 1;
  });
  // ftp-srv reports client socket errors as events; a test peer has nothing to do with them.
  server.on("client-error", () => {});
  await server.listen();
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    host: "127.0.0.1",
    port,
    username,
    password,
    root,
    stats,
    controls,
    async close() {
      await server.close();
      if (ownRoot) await rm(root, { recursive: true, force: true });
    },
  };
}
