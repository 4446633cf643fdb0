/**
 * FTP connections for the deployer: basic-ftp clients connected to the address the network
 * guard checked (never re-resolving the name), passive mode with data connections pinned to
 * the control connection's address (a server cannot point us elsewhere), optional FTPS, and
 * FTP replies turned into deployment errors a user can act on.
 */
import { isIP } from "node:net";
import { Client, FTPError } from "basic-ftp";
import type { ResolvedAddress } from "../../net/networkGuard.ts";
import type { ftpConfigSchema } from "../configs.ts";
import { DeployError, toDeployError } from "../errors.ts";
import type { Scrubber } from "../scrub.ts";
import type { z } from "zod";

/** A validated FTP config. */
export type ParsedFtpConfig = z.output<typeof ftpConfigSchema>;

/** Idle timeout of control and data connections. */
const TIMEOUT_MS = 30_000;

/** `host:port` for messages. */
export const ftpEndpoint = (config: ParsedFtpConfig) => `${config.host}:${config.port}`;

/**
 * Connects and logs in. An abort of `signal` (the deployment's time limit, a shutdown) closes
 * the connection even while it waits for a server that never answers: the client is not in
 * the deployer's pool yet, and the idle timeout restarts with every byte the server trickles.
 * @throws DeployError `auth_failed`, `unreachable`, `timeout`, …
 */
export async function openFtp(config: ParsedFtpConfig, address: ResolvedAddress, scrubber: Scrubber, signal?: AbortSignal): Promise<Client> {
  const client = new Client(TIMEOUT_MS, { allowSeparateTransferHost: false });
  const abort = () => client.close();
  signal?.addEventListener("abort", abort, { once: true });
  try {
    if (signal?.aborted) throw new DeployError("aborted", `FTP login on ${ftpEndpoint(config)} was cancelled.`);
    await client.access({
      host: address.address,
      port: config.port,
      user: config.username,
      password: config.password,
      secure: config.secure ?? false,
      // Certificates are checked against the configured name, not the address we dialled.
      secureOptions: isIP(config.host) ? {} : { servername: config.host },
    });
    return client;
  } catch (error) {
    client.close();
    throw ftpFailure(error, config, scrubber, "login");
  } finally {
    signal?.removeEventListener("abort", abort);
  }
}

/** Maps an FTP or socket error to a DeployError with a message naming the step. */
export function ftpFailure(error: unknown, config: ParsedFtpConfig, scrubber: Scrubber, step: string): DeployError {
  const where = `FTP ${step} on ${ftpEndpoint(config)}`;
  if (error instanceof FTPError) {
    const reply = scrubber.text(error.message.replace(/\s+/g, " ").trim());
    if (error.code === 530) {
      return new DeployError("auth_failed", `FTP login to ${ftpEndpoint(config)} as ${config.username} failed: the server rejected the username or password (${reply}).`);
    }
    if (error.code === 550 || error.code === 553) return new DeployError("permission_denied", `${where} was refused: ${reply}.`, { reply_code: error.code });
    if (error.code === 421) return new DeployError("unreachable", `${where} failed: the server closed the connection (${reply}).`);
    return new DeployError("remote_error", `${where} failed: ${reply}.`, { reply_code: error.code });
  }
  if (error instanceof Error && /timeout/i.test(error.message) && !(error as NodeJS.ErrnoException).code) {
    return new DeployError("timeout", `${where} timed out.`);
  }
  return toDeployError(error, scrubber, where);
}

/** Whether `path` is an existing directory (CWD succeeds). */
export async function isDirectory(client: Client, path: string): Promise<boolean> {
  try {
    await client.send(`CWD ${path}`);
    return true;
  } catch (error) {
    if (error instanceof FTPError && error.code >= 500) return false;
    throw error;
  }
}

/** Creates a directory; an existing one is fine (servers answer 550 for both cases alike). */
export async function makeDirectory(client: Client, path: string): Promise<void> {
  try {
    await client.send(`MKD ${path}`);
  } catch (error) {
    if (!(error instanceof FTPError && error.code === 550 && (await isDirectory(client, path)))) throw error;
  }
}

/** Removes a directory tree if it exists. */
export async function removeTree(client: Client, path: string): Promise<boolean> {
  if (!(await isDirectory(client, path))) return false;
  await client.removeDir(path);
  return true;
}
