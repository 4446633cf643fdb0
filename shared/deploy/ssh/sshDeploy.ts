/**
 * The SSH deployer: upload a generation file by file over SFTP into a fresh release folder,
 * switch `current` to it and prune old releases (releases.ts).
 *
 * Files go individually over SFTP, many requests in flight on one channel, rather than as
 * an archive extracted remotely: it works for SFTP-only accounts (common on shared hosting),
 * needs no `tar` or `unzip` on the server and runs no shell command for the upload at all.
 * The shell is used only where it makes a step atomic or fast (`mv -T`, `rm -rf`), with every
 * path quoted, and each such step has an SFTP-only fallback.
 */
import { posix } from "node:path";
import { resolvePublicAddress } from "../../net/networkGuard.ts";
import { parseConfig, sshConfigSchema, type SshConfig } from "../configs.ts";
import { DeployError } from "../errors.ts";
import { eachFile, parentDirectories, safeId } from "../files.ts";
import { runPool } from "../pool.ts";
import { createRunLog, formatBytes, runLogged, UploadProgress, type RunLog } from "../runLog.ts";
import { scrubberFor, type Scrubber } from "../scrub.ts";
import { memoryState } from "../state.ts";
import type { ConnectionTestResult, Deployer, DeployFiles, DeployRequest, DeployResult, TestConnectionOptions } from "../types.ts";
import { linkTarget, pruneReleases, releaseLayout, restoreInterruptedSwitch, switchCurrent, type ReleaseLayout, type SwitchMethod } from "./releases.ts";
import { SftpClient } from "./sftpClient.ts";
import { openSsh, sshEndpoint, sshFailure, type ParsedSshConfig, type SshSession } from "./sshSession.ts";

/** SFTP writes in flight at once on the one channel. */
const IN_FLIGHT = 8;
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
  switchMethod: SwitchMethod | "already-live";
  /** Release folders removed by pruning. */
  pruned: string[];
}

const SWITCHED = "ssh.switched";

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
      if (await sftp.lstat(layout.release)) {
        await step("cleanup", () => sftp.removeTree(layout.release));
        await runLog.info(`Removed the unfinished release of an earlier attempt (${layout.release}).`);
      }
      await step("preparation", () => sftp.mkdir(layout.release));
      await runLog.info(`Uploading into ${layout.release} over SFTP.`, { release: layout.release });
      const progress = await uploadRelease(sftp, request.files, layout.release, runLog, config, scrubber, request.signal);

      await runLog.info(`Uploaded ${progress.files} files (${formatBytes(progress.bytes)}); switching ${layout.current}.`);
      const method = await step("switch", () => switchCurrent(live.client, sftp, layout, runLog));
      const result: SshDeployResult = {
        summary: `Deployed ${progress.files} files (${formatBytes(progress.bytes)}) to ${sshEndpoint(config)}:${layout.release}; ${layout.current} points to it.`,
        files: progress.files,
        bytes: progress.bytes,
        releasePath: layout.release,
        currentPath: layout.current,
        hostKeyFingerprint: live.fingerprint,
        hostKeyFirstSeen: live.firstPin,
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
    switchMethod: "already-live",
    pruned: [],
  };
  await runLog.info(`An earlier attempt of this deployment already made ${layout.release} live.`);
  await runLog.success(result.summary, { release: result.releasePath, host_key_fingerprint: result.hostKeyFingerprint });
  return result;
}

/** Uploads every file under `root`, several SFTP writes in flight. */
async function uploadRelease(sftp: SftpClient, files: DeployFiles, root: string, runLog: RunLog, config: ParsedSshConfig, scrubber: Scrubber, signal?: AbortSignal) {
  const progress = new UploadProgress(runLog);
  const made = new Map<string, Promise<void>>();
  const ensureParents = async (path: string) => {
    for (const dir of parentDirectories(path)) {
      let pending = made.get(dir);
      if (!pending) {
        pending = sftp.mkdir(posix.join(root, dir));
        made.set(dir, pending);
      }
      await pending;
    }
  };
  await runPool(
    eachFile(files),
    IN_FLIGHT,
    async (file) => {
      try {
        await ensureParents(file.path);
        await sftp.writeFile(posix.join(root, file.path), file.content);
      } catch (error) {
        throw sshFailure(error, config, scrubber, `upload of ${file.path}`);
      }
      await progress.add(file.content.length);
    },
    signal,
  );
  return progress;
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
