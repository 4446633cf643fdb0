/**
 * The SSH deployer: put a generation into a fresh release folder (transfer.ts: one tar.gz
 * archive extracted by the server, or file by file over SFTP when the account cannot run
 * `tar`), switch `current` to it and prune old releases (releases.ts).
 *
 * Retries: state key `ssh.uploaded` (the release folder is complete) makes a retry go
 * straight to the switch; without it, a release folder left by an earlier attempt is partial
 * and is removed and redone. `ssh.switched` (or `current` already pointing at the release)
 * makes a retry only report success.
 */
import { posix } from "node:path";
import { resolvePublicAddress } from "../../net/networkGuard.ts";
import { parseConfig, sshConfigSchema, type SshConfig } from "../configs.ts";
import { DeployError } from "../errors.ts";
import { safeId } from "../files.ts";
import { createRunLog, formatBytes, runLogged, type RunLog } from "../runLog.ts";
import { scrubberFor } from "../scrub.ts";
import { memoryState } from "../state.ts";
import type { ConnectionTestResult, Deployer, DeployRequest, DeployResult, TestConnectionOptions } from "../types.ts";
import { linkTarget, pruneReleases, releaseLayout, restoreInterruptedSwitch, switchCurrent, type ReleaseLayout, type SwitchMethod } from "./releases.ts";
import { SftpClient } from "./sftpClient.ts";
import { openSsh, sshEndpoint, sshFailure, type ParsedSshConfig, type SshSession } from "./sshSession.ts";
import { archivePath, chooseTransfer, removeRelease, transfer, type TransferContext, type TransferKind, type Transferred } from "./transfer.ts";

/** Releases kept by default, the live one included. */
export const DEFAULT_KEEP_RELEASES = 5;

/** The result of an SSH deployment. */
export interface SshDeployResult extends DeployResult {
  /** The release folder, absolute. */
  releasePath: string;
  /** The `current` symlink, absolute. */
  currentPath: string;
  /** The server's host key. */
  hostKeyFingerprint: string;
  /** True when no key was pinned before this run (the request's pinner stored it at login). */
  hostKeyFirstSeen: boolean;
  /** How the files travelled (by an earlier attempt, when it had uploaded them). */
  transfer: TransferKind | "already-live";
  switchMethod: SwitchMethod | "already-live";
  /** Release folders removed by pruning. */
  pruned: string[];
}

const SWITCHED = "ssh.switched";
const UPLOADED = "ssh.uploaded";

/** Deploys over SSH; see the module comment. @throws DeployError */
export async function deploySsh(request: DeployRequest<SshConfig>): Promise<SshDeployResult> {
  const scrubber = scrubberFor(request.config);
  const runLog = createRunLog(request.log, scrubber);
  const state = request.state ?? memoryState();
  let session: SshSession | undefined;
  const abort = () => session?.client.end();
  request.signal?.addEventListener("abort", abort, { once: true });
  try {
    return await runLogged(runLog, scrubber, "SSH deployment", request.signal, async () => {
      const config = parseConfig(sshConfigSchema, request.config);
      const id = safeId(request.deploymentId);
      const address = await resolvePublicAddress(config.host, request.network);
      await runLog.info(`Connecting to ${sshEndpoint(config)} as ${config.username} (${config.auth_method === "key" ? "private key" : "password"}).`);
      session = await openSsh(config, address, scrubber, request.signal, request.pinHostKey);
      await logHostKey(runLog, session, request.pinHostKey !== undefined);
      const sftp = new SftpClient(session.sftp);
      const base = posix.isAbsolute(config.remote_path) ? config.remote_path : posix.join(await sftp.realpath("."), config.remote_path);
      const layout = releaseLayout(base, id);
      const live = session;
      const step = <T>(name: string, body: () => Promise<T>) => body().catch((error: unknown) => Promise.reject(sshFailure(error, config, scrubber, name)));

      const saved = await state.get(SWITCHED);
      if (saved || (await step("check", () => sftp.readlink(layout.current))) === linkTarget(layout)) {
        return alreadyLive(runLog, layout, live, saved);
      }
      await step("preparation", () => restoreInterruptedSwitch(sftp, layout, runLog));
      await step("preparation", () => sftp.mkdirs(layout.releases));
      const context: TransferContext = { client: live.client, sftp, layout, files: request.files, runLog, config, scrubber, state, ...(request.signal ? { signal: request.signal } : {}) };
      const moved = await step("transfer", () => fillRelease(context));

      await runLog.info(`Switching ${layout.current} to releases/${layout.name}.`);
      const method = await step("switch", () => switchCurrent(live.client, sftp, layout, runLog));
      const result: SshDeployResult = {
        summary: `Deployed ${moved.files} files (${formatBytes(moved.bytes)}) to ${sshEndpoint(config)}:${layout.release}; ${layout.current} points to it.`,
        files: moved.files,
        bytes: moved.bytes,
        releasePath: layout.release,
        currentPath: layout.current,
        hostKeyFingerprint: live.fingerprint,
        hostKeyFirstSeen: live.firstPin,
        transfer: moved.kind,
        switchMethod: method,
        pruned: [],
      };
      await state.set(SWITCHED, JSON.stringify(result));
      await runLog.info(`${layout.current} now points to releases/${layout.name} (${method}).`);
      result.pruned = await prune(live, sftp, layout, config, runLog);
      await runLog.success(result.summary, { files: result.files, bytes: result.bytes, release: result.releasePath, host_key_fingerprint: result.hostKeyFingerprint });
      return result;
    });
  } finally {
    request.signal?.removeEventListener("abort", abort);
    session?.client.end();
  }
}

async function logHostKey(runLog: RunLog, session: SshSession, pinning: boolean): Promise<void> {
  const how = !session.firstPin ? "matches the pinned key" : pinning ? "first connection: pinned for this environment" : "first connection; not pinned: no environment to pin it to";
  await runLog.info(`Connected; host key ${session.fingerprint} (${how}).`, { host_key_fingerprint: session.fingerprint, first_seen: session.firstPin });
}

/** A retry of a deployment that is already live: nothing to upload. */
async function alreadyLive(runLog: RunLog, layout: ReleaseLayout, session: SshSession, saved: string | undefined): Promise<SshDeployResult> {
  const earlier = saved ? (JSON.parse(saved) as SshDeployResult) : undefined;
  const result: SshDeployResult = {
    summary: earlier?.summary ?? `${layout.current} already points to ${layout.release}.`,
    files: earlier?.files ?? 0,
    bytes: earlier?.bytes ?? 0,
    releasePath: layout.release,
    currentPath: layout.current,
    hostKeyFingerprint: session.fingerprint,
    hostKeyFirstSeen: session.firstPin,
    transfer: "already-live",
    switchMethod: "already-live",
    pruned: [],
  };
  await runLog.info(`An earlier attempt of this deployment already made ${layout.release} live.`);
  await runLog.success(result.summary, { release: result.releasePath, host_key_fingerprint: result.hostKeyFingerprint });
  return result;
}

/**
 * Makes the release folder hold the generation: reuses it when an earlier attempt completed
 * it, else removes what an interrupted attempt left and transfers the files.
 */
async function fillRelease(context: TransferContext): Promise<Transferred> {
  const { client, sftp, layout, runLog, state } = context;
  const uploaded = await state.get(UPLOADED);
  const existing = await sftp.lstat(layout.release);
  if (uploaded && existing?.isDirectory()) {
    const earlier = JSON.parse(uploaded) as Transferred;
    await runLog.info(`An earlier attempt of this deployment already put ${earlier.files} files into ${layout.release}; not transferring them again.`, { files: earlier.files });
    return earlier;
  }
  const choice = await chooseTransfer(client, state);
  if (choice.kind === "archive") await runLog.info(`Transfer: one tar.gz archive over SFTP, extracted on the server (${choice.reason}).`, { transfer: "archive" });
  else await runLog.info(`Transfer: file by file over SFTP, because ${choice.reason}.`, { transfer: "sftp" });
  if (existing) {
    await removeRelease(client, sftp, layout.release);
    await runLog.info(`Removed the unfinished release of an earlier attempt (${layout.release}).`);
  }
  // A crash mid-upload leaves the archive; the archive transfer overwrites it, the other must not keep it.
  if (choice.kind === "sftp") await sftp.unlink(archivePath(layout));
  const moved = await transfer(choice.kind, context);
  await state.set(UPLOADED, JSON.stringify(moved));
  return moved;
}

/** Prunes old releases; a failure only warns (the new release is live). */
async function prune(session: SshSession, sftp: SftpClient, layout: ReleaseLayout, config: ParsedSshConfig, runLog: RunLog): Promise<string[]> {
  try {
    const pruned = await pruneReleases(session.client, sftp, layout, config.keep_releases ?? DEFAULT_KEEP_RELEASES);
    if (pruned.length) await runLog.info(`Removed ${pruned.length} old release(s): ${pruned.join(", ")}.`, { pruned });
    return pruned;
  } catch {
    await runLog.warning(`Could not remove old releases under ${layout.releases}; they stay until the next deployment.`);
    return [];
  }
}

/** Connects, checks the host key, authenticates and looks at `remote_path`; reports, never throws. */
export async function testSshConnection(raw: SshConfig, options: TestConnectionOptions): Promise<ConnectionTestResult> {
  const scrubber = scrubberFor(raw);
  let session: SshSession | undefined;
  try {
    const config = parseConfig(sshConfigSchema, raw);
    const address = await resolvePublicAddress(config.host, options.network);
    session = await openSsh(config, address, scrubber, options.signal, options.pinHostKey);
    const sftp = new SftpClient(session.sftp);
    const base = posix.isAbsolute(config.remote_path) ? config.remote_path : posix.join(await sftp.realpath("."), config.remote_path);
    const exists = Boolean(await sftp.lstat(base));
    return {
      ok: true,
      message: `Connected to ${sshEndpoint(config)} as ${config.username}; host key ${session.fingerprint}; ${base} ${exists ? "exists" : "does not exist yet and will be created"}.`,
      hostKeyFingerprint: session.fingerprint,
    };
  } catch (error) {
    const failure = error instanceof DeployError ? error : sshFailure(error, raw as ParsedSshConfig, scrubber, "connection test");
    return { ok: false, code: failure.code, message: scrubber.text(failure.message) };
  } finally {
    session?.client.end();
  }
}

/** The SSH deployer. */
export const sshDeployer: Deployer<SshConfig, SshDeployResult> = { deploy: deploySsh, testConnection: testSshConnection };
