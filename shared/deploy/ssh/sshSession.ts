/**
 * SSH connections for the deployer: ssh2 connected to the address the network guard
 * checked, password or private-key authentication, and host key pinning.
 *
 * Pinning: when no key is pinned yet, the server's host key fingerprint (`SHA256:…`, as
 * `ssh-keygen -lf` prints it) is handed to the caller's pinner as soon as the login succeeds,
 * so the first successful connection pins it even if the run fails later; every later
 * connection must present the same key, or it is closed before authentication (no password is
 * ever sent to a changed host) and fails with `host_key_mismatch` naming both fingerprints.
 */
import { createHash } from "node:crypto";
import ssh2, { type ClientChannel, type ConnectConfig, type SFTPWrapper } from "ssh2";
import type { z } from "zod";
import type { ResolvedAddress } from "../../net/networkGuard.ts";
import type { sshConfigSchema } from "../configs.ts";
import { DeployError, toDeployError } from "../errors.ts";
import type { Scrubber } from "../scrub.ts";
import type { HostKeyPinner } from "../types.ts";

const { Client, utils } = ssh2;

/** A validated SSH config. */
export type ParsedSshConfig = z.output<typeof sshConfigSchema>;

/** An open SSH connection with its SFTP channel. */
export interface SshSession {
  client: ssh2.Client;
  sftp: SFTPWrapper;
  /** The server's host key fingerprint. */
  fingerprint: string;
  /** True when no key was pinned before this connection. */
  firstPin: boolean;
}

/** `host:port` for messages. */
export const sshEndpoint = (config: ParsedSshConfig) => `${config.host}:${config.port}`;

/** The OpenSSH SHA256 fingerprint of a raw host key blob. */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${createHash("sha256").update(key).digest("base64").replace(/=+$/, "")}`;
}

const samePrint = (a: string, b: string) => a.replace(/=+$/, "") === b.replace(/=+$/, "");

/**
 * Connects, checks the host key and authenticates, pins a first-seen key through `pin`, then
 * opens SFTP.
 * @throws DeployError `host_key_mismatch`, `auth_failed`, `invalid_config`, `unreachable`, …
 */
export async function openSsh(
  config: ParsedSshConfig,
  address: ResolvedAddress,
  scrubber: Scrubber,
  signal?: AbortSignal,
  pin?: HostKeyPinner,
): Promise<SshSession> {
  const client = new Client();
  let presented: string | undefined;
  const pinned = config.host_key_fingerprint ?? undefined;
  const connect: ConnectConfig = {
    host: address.address,
    port: config.port,
    username: config.username,
    readyTimeout: 20_000,
    keepaliveInterval: 15_000,
    hostVerifier: (key: Buffer) => {
      presented = hostKeyFingerprint(key);
      return !pinned || samePrint(pinned, presented);
    },
    ...credentials(config),
  };
  const abort = () => client.end();
  signal?.addEventListener("abort", abort, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      // SFTP is request/response: without this, Nagle holds small packets for the peer's ACK.
      client.once("connect", () => client.setNoDelay(true));
      client.once("ready", resolve);
      client.once("error", reject);
      client.once("close", () => reject(new Error("connection closed before authentication")));
      client.connect(connect);
    });
    if (!pinned && pin) await pin(presented!);
    const sftp = await new Promise<SFTPWrapper>((resolve, reject) => client.sftp((error, channel) => (error ? reject(error) : resolve(channel))));
    return { client, sftp, fingerprint: presented!, firstPin: !pinned };
  } catch (error) {
    client.end();
    if (pinned && presented && !samePrint(pinned, presented)) {
      throw new DeployError(
        "host_key_mismatch",
        `The SSH host key of ${sshEndpoint(config)} changed: expected ${pinned}, got ${presented}. The connection was closed before authentication. If the key was replaced on purpose, clear the pinned host key of this environment and deploy again.`,
        { expected_fingerprint: pinned, presented_fingerprint: presented },
      );
    }
    throw sshFailure(error, config, scrubber, "connection");
  } finally {
    signal?.removeEventListener("abort", abort);
  }
}

/** The ssh2 credential options of a config. @throws DeployError for an unreadable key. */
function credentials(config: ParsedSshConfig): Partial<ConnectConfig> {
  if (config.auth_method === "password") return { password: config.password ?? "", tryKeyboard: false };
  const parsed = utils.parseKey(config.private_key ?? "");
  if (parsed instanceof Error) {
    const encrypted = /encrypted|passphrase/i.test(parsed.message);
    throw new DeployError(
      "invalid_config",
      encrypted ? "The private key is encrypted with a passphrase; store an unencrypted deployment key." : "The private key could not be read; expected an OpenSSH, PEM (RSA, ECDSA) or Ed25519 private key.",
    );
  }
  return { privateKey: config.private_key ?? "" };
}

/** Maps ssh2 and socket errors to a DeployError naming the step. */
export function sshFailure(error: unknown, config: ParsedSshConfig, scrubber: Scrubber, step: string): DeployError {
  if (error instanceof DeployError) return error;
  const level = (error as { level?: string } | null)?.level;
  const where = `SSH ${step} to ${sshEndpoint(config)}`;
  if (level === "client-authentication") {
    const how = config.auth_method === "key" ? "private key" : "password";
    return new DeployError("auth_failed", `SSH login to ${sshEndpoint(config)} as ${config.username} failed: the server rejected the ${how}.`);
  }
  if (level === "client-timeout" || (error instanceof Error && /Timed out while waiting for handshake/.test(error.message))) {
    return new DeployError("timeout", `${where} timed out.`);
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "number") {
    // SFTP status codes: 2 no such file, 3 permission denied.
    const message = scrubber.text((error as Error).message);
    if (code === 3) return new DeployError("permission_denied", `${where} was refused: ${message}.`);
    return new DeployError("remote_error", `${where} failed: ${message}.`, { sftp_status: code });
  }
  return toDeployError(error, scrubber, where);
}

/** The result of a remote command. */
export interface ExecResult {
  /** The exit status; null when the command ended without one (killed, channel closed). */
  code: number | null;
  /** stdout and stderr together, the last 2,000 characters (where a command's verdict is). */
  output: string;
  /** True when `timeoutMs` passed first and the channel was closed. */
  timedOut?: boolean;
}

/**
 * Runs a command through the account's shell; null when the server refuses exec (an
 * SFTP-only account). Every path in `command` must have gone through `shellQuote`.
 * Standard input is closed at once: an account forced into `internal-sftp` (OpenSSH's
 * `ForceCommand`) answers exec with an SFTP server that would otherwise wait for input forever.
 */
export function execRemote(client: ssh2.Client, command: string, options: { timeoutMs?: number } = {}): Promise<ExecResult | null> {
  return new Promise((resolve) => {
    client.exec(command, (error, channel: ClientChannel) => {
      if (error) return resolve(null);
      // Listeners go on synchronously: ssh2 may emit `exit` in the same tick as the callback.
      let output = "";
      let code: number | null = null;
      let timedOut = false;
      const timer = options.timeoutMs
        ? setTimeout(() => {
            timedOut = true;
            channel.close();
          }, options.timeoutMs)
        : undefined;
      const add = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
      channel.on("data", add);
      channel.stderr.on("data", add);
      channel.on("exit", (exitCode: number | null) => (code = exitCode));
      channel.on("close", () => {
        clearTimeout(timer);
        resolve({ code, output: output.slice(-2000), ...(timedOut ? { timedOut } : {}) });
      });
      channel.end();
    });
  });
}

/** Quotes one argument for a POSIX shell: single quotes, with `'` written as `'\''`. */
export function shellQuote(argument: string): string {
  return `'${argument.replace(/'/g, `'\\''`)}'`;
}
