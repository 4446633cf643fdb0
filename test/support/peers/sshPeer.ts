/**
 * A real SSH server for tests: ssh2's Server on loopback with password and public-key
 * authentication, an SFTP subsystem (sftpServer.ts) and `exec` through the system shell in
 * the user's home directory (a temporary folder), like an OpenSSH account. `exec` can be
 * switched off to stand for an SFTP-only account, and its commands limited to a folder of
 * the test's choosing (`commandDir`) to stand for a server without `tar` or with a broken one.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { access, chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import ssh2, { type ParsedKey } from "ssh2";
import { serveSftp } from "./sftpServer.ts";

const { Server, utils } = ssh2;

/** An OpenSSH-format key pair. */
export interface KeyPair {
  private: string;
  public: string;
}

/** A fresh ed25519 key pair (host keys and user keys). */
export function generateKeyPair(): KeyPair {
  // About 1 in 200 ed25519 keys from ssh2's generator fail its own parser ("Malformed
  // OpenSSH private key"); draw again rather than make a test flaky.
  for (;;) {
    const pair = utils.generateKeyPairSync("ed25519");
    if (!(utils.parseKey(pair.private) instanceof Error)) return pair;
  }
}

/** The OpenSSH `SHA256:` fingerprint of a public key line (`ssh-ed25519 AAAA… comment`). */
export function fingerprintOf(publicKey: string): string {
  const blob = Buffer.from(publicKey.trim().split(/\s+/)[1] ?? "", "base64");
  return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

/** Options of the SSH peer. */
export interface SshPeerOptions {
  username?: string;
  password?: string;
  /** Public keys (OpenSSH lines) accepted for public-key authentication. */
  authorizedKeys?: string[];
  /** The host key pair; a fresh one when absent. */
  hostKey?: KeyPair;
  /** Serve `exec` requests through /bin/sh (default true). */
  allowExec?: boolean;
  /** PATH of exec'd commands (a `commandDir`); the test process's PATH when absent. */
  execPath?: string;
  /** Existing home directory (a fresh temporary one when absent, removed on close). */
  home?: string;
  /** Listen on this port (to restart a peer with another host key at the same address). */
  port?: number;
}

/** A running SSH peer. */
export interface SshPeer {
  host: string;
  port: number;
  username: string;
  password: string;
  /** The user's home directory, where relative paths start. */
  home: string;
  hostKey: KeyPair;
  hostKeyFingerprint: string;
  /** Commands run through exec, and failed authentications. */
  stats: { execs: string[]; authFailures: number; logins: number };
  close(): Promise<void>;
}

/** Starts an SSH server on 127.0.0.1. */
export async function startSshPeer(options: SshPeerOptions = {}): Promise<SshPeer> {
  const username = options.username ?? "deployer";
  const password = options.password ?? "ssh-secret-Passw0rd";
  const hostKey = options.hostKey ?? generateKeyPair();
  const ownHome = !options.home;
  const home = await realpath(options.home ?? (await mkdtemp(path.join(tmpdir(), "sf-ssh-"))));
  const authorized = (options.authorizedKeys ?? []).map((line) => utils.parseKey(line)).filter((key): key is ParsedKey => !(key instanceof Error));
  const stats = { execs: [] as string[], authFailures: 0, logins: 0 };

  const connections = new Set<ssh2.Connection>();
  const server = new Server({ hostKeys: [hostKey.private] }, (client) => {
    connections.add(client);
    // ssh2 leaves Nagle on; with it, every SFTP reply waits ~40 ms for the client's ACK.
    (client as unknown as { setNoDelay(noDelay: boolean): void }).setNoDelay(true);
    client.on("close", () => connections.delete(client));
    client.on("authentication", (ctx) => {
      const reject = () => {
        stats.authFailures += ctx.method === "none" ? 0 : 1;
        ctx.reject(["password", "publickey"]);
      };
      if (ctx.username !== username) return reject();
      if (ctx.method === "password" && ctx.password === password) return ctx.accept();
      if (ctx.method === "publickey") {
        const key = authorized.find((k) => k.type === ctx.key.algo && k.getPublicSSH().equals(ctx.key.data));
        if (!key) return reject();
        // Without a signature the client only asks whether the key would do.
        if (!ctx.signature || key.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) === true) return ctx.accept();
      }
      reject();
    });
    client.on("ready", () => {
      stats.logins += 1;
      client.on("session", (acceptSession) => {
        const session = acceptSession();
        session.on("sftp", (accept) => serveSftp(accept(), home));
        session.on("exec", (accept, reject, info) => {
          if (options.allowExec === false) return reject();
          const stream = accept();
          stats.execs.push(info.command);
          const env = options.execPath ? { ...process.env, PATH: options.execPath } : process.env;
          const child = spawn("/bin/sh", ["-c", info.command], { cwd: home, env, stdio: ["ignore", "pipe", "pipe"] });
          child.stdout.pipe(stream, { end: false });
          child.stderr.pipe(stream.stderr, { end: false });
          child.on("close", (code) => {
            stream.exit(code ?? 1);
            stream.end();
          });
        });
      });
    });
    client.on("error", () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  return {
    host: "127.0.0.1",
    port: (server.address() as AddressInfo).port,
    username,
    password,
    home,
    hostKey,
    hostKeyFingerprint: fingerprintOf(hostKey.public),
    stats,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of connections) connection.end();
      await closed;
      if (ownHome) await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * A folder to serve as the peer's PATH: links to the named system commands plus shell
 * scripts given by name and body.
 */
export async function commandDir(dir: string, commands: string[], scripts: Record<string, string> = {}): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const name of commands) await symlink(await systemCommand(name), path.join(dir, name));
  for (const [name, body] of Object.entries(scripts)) {
    await writeFile(path.join(dir, name), `#!/bin/sh\n${body}\n`);
    await chmod(path.join(dir, name), 0o755);
  }
  return dir;
}

/** The absolute path of a command on the test process's PATH. @throws when it is not installed. */
export async function systemCommand(name: string): Promise<string> {
  for (const folder of (process.env.PATH ?? "/usr/bin:/bin").split(":")) {
    const candidate = path.join(folder, name);
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  throw new Error(`${name} is not installed on this machine`);
}
