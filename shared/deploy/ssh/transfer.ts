/**
 * How the SSH deployer puts a generation into its release folder.
 *
 * Glossary:
 * - archive transfer (primary): the files as one tar.gz (archive.ts) streamed over SFTP to
 *   `releases/.<id>.tar.gz`, then one command creates the release folder, extracts the archive
 *   into it with `tar`, removes the archive and counts the files extracted, which must be the
 *   generation's count. One upload and one command instead of a request per file and folder.
 * - SFTP transfer (fallback): every file written over SFTP, several in flight on one channel;
 *   for accounts that cannot run commands (SFTP-only, common on shared hosting) or lack `tar`.
 *
 * `chooseTransfer` asks the server once per run (`command -v tar`). The files can be read only
 * once per run, so an archive the server fails to extract cannot be re-sent file by file in
 * the same run: the failure is noted in the state and the run fails as retryable; the next
 * attempt uploads file by file. Every path given to the shell is quoted with `shellQuote`.
 */
import { posix } from "node:path";
import type ssh2 from "ssh2";
import { DeployError } from "../errors.ts";
import { eachFile, parentDirectories } from "../files.ts";
import { runPool } from "../pool.ts";
import { formatBytes, UploadProgress, type RunLog } from "../runLog.ts";
import type { Scrubber } from "../scrub.ts";
import type { DeployFile, DeployFiles, DeployState } from "../types.ts";
import { tarGz } from "./archive.ts";
import type { ReleaseLayout } from "./releases.ts";
import type { SftpClient } from "./sftpClient.ts";
import { execRemote, shellQuote, sshFailure, type ParsedSshConfig } from "./sshSession.ts";

/** How the files travel. */
export type TransferKind = "archive" | "sftp";

/** The transfer of this run and why, for the log. */
export interface TransferChoice {
  kind: TransferKind;
  reason: string;
}

/** What a transfer put into the release folder. */
export interface Transferred {
  kind: TransferKind;
  files: number;
  bytes: number;
}

/** Everything a transfer needs. */
export interface TransferContext {
  client: ssh2.Client;
  sftp: SftpClient;
  layout: ReleaseLayout;
  files: DeployFiles;
  runLog: RunLog;
  config: ParsedSshConfig;
  scrubber: Scrubber;
  state: DeployState;
  signal?: AbortSignal;
}

/** State key: why an earlier attempt's archive could not be extracted (then: SFTP transfer). */
export const ARCHIVE_FAILED = "ssh.archive_failed";
/** SFTP writes in flight at once on the one channel (SFTP transfer). */
const IN_FLIGHT = 8;
/** How long the probe may take before the server counts as one that runs no commands. */
const PROBE_TIMEOUT_MS = 15_000;

/** Where the archive of a release is uploaded: hidden, next to the release folders. */
export const archivePath = (layout: ReleaseLayout) => posix.join(layout.releases, `.${layout.name}.tar.gz`);

/** A path as a shell word: quoted, and never read as an option (a relative path gets `./`). */
const shellPath = (path: string) => shellQuote(path.startsWith("/") ? path : `./${path}`);

/** Picks the transfer: archive when the account runs commands and has `tar`. */
export async function chooseTransfer(client: ssh2.Client, state: DeployState): Promise<TransferChoice> {
  const failed = await state.get(ARCHIVE_FAILED);
  if (failed) return { kind: "sftp", reason: `an earlier attempt could not extract the archive on the server (${failed})` };
  const probe = await execRemote(client, "command -v tar", { timeoutMs: PROBE_TIMEOUT_MS });
  if (!probe) return { kind: "sftp", reason: "the server runs no commands for this account (SFTP only)" };
  if (probe.timedOut) return { kind: "sftp", reason: `the server did not answer a command within ${PROBE_TIMEOUT_MS / 1000} s` };
  const tar = probe.output.trim().split("\n").at(-1)?.trim() ?? "";
  if (probe.code !== 0 || !/tar$/.test(tar)) return { kind: "sftp", reason: "tar was not found on the server" };
  return { kind: "archive", reason: `the server has ${tar}` };
}

/** Removes a release folder: `rm -rf` through the shell, over SFTP when there is none. */
export async function removeRelease(client: ssh2.Client, sftp: SftpClient, path: string): Promise<void> {
  const removed = await execRemote(client, `rm -rf -- ${shellPath(path)}`);
  if (removed?.code !== 0 || (await sftp.lstat(path))) await sftp.removeTree(path);
}

/** Runs the chosen transfer into the (absent) release folder. @throws DeployError */
export function transfer(kind: TransferKind, context: TransferContext): Promise<Transferred> {
  const checked = { ...context, files: placeableFiles(context.files) };
  return kind === "archive" ? archiveTransfer(checked) : sftpTransfer(checked);
}

/**
 * The files, checked (files.ts `eachFile`), which refuses a path that is both a file and a
 * folder (`a` and `a/b`) among the other clashes: neither transfer could place both, and it is
 * the generation's fault, not the server's.
 * @throws DeployError `invalid_config`
 */
export async function* placeableFiles(files: DeployFiles): AsyncGenerator<DeployFile> {
  yield* eachFile(files);
}

/** Uploads the archive, extracts it into the release folder and checks the file count. */
async function archiveTransfer({ client, sftp, layout, files, runLog, config, scrubber, state }: TransferContext): Promise<Transferred> {
  const archive = archivePath(layout);
  await runLog.info(`Uploading the files as one tar.gz archive to ${archive}.`, { archive });
  const progress = new UploadProgress(runLog);
  let compressed: number;
  try {
    compressed = await sftp.writeChunks(
      archive,
      tarGz(files, (file) => progress.add(file.content.length)),
    );
  } catch (error) {
    // Best effort: the connection may be gone; a retry overwrites the archive anyway.
    await sftp.unlink(archive).catch(() => undefined);
    throw sshFailure(error, config, scrubber, "archive upload");
  }
  await runLog.info(`Uploaded an archive of ${progress.files} files (${formatBytes(progress.bytes)}, ${formatBytes(compressed)} compressed); extracting it into ${layout.release}.`, {
    files: progress.files,
    bytes: progress.bytes,
    archive_bytes: compressed,
  });
  const [release, tarball] = [shellPath(layout.release), shellPath(archive)];
  // The archive is read from standard input: GNU tar would take `host:path` in `-f` for a remote file.
  const script = `mkdir -- ${release} && tar -x -z --no-same-owner -f - -C ${release} < ${tarball}; s=$?; rm -f -- ${tarball}; [ "$s" -eq 0 ] || exit "$s"; find ${release} -type f | wc -l`;
  const extracted = await execRemote(client, script);
  if (!extracted || extracted.code === null) {
    // The connection went (or the command was killed): nothing says this server cannot extract.
    throw new DeployError("remote_error", `The connection ended before the archive was extracted into ${layout.release}.`);
  }
  const count = /^\s*(\d+)\s*$/.exec(extracted.output.trim().split("\n").at(-1) ?? "")?.[1];
  if (extracted.code !== 0 || count === undefined || Number(count) !== progress.files) {
    const why =
      extracted.code !== 0
        ? `the command exited with ${extracted.code}: ${extracted.output.trim().slice(-300) || "no output"}`
        : `${count ?? "an unreadable number of"} files arrived instead of ${progress.files}`;
    await state.set(ARCHIVE_FAILED, why);
    throw new DeployError("remote_error", `Extracting the archive into ${layout.release} failed (${why}). The next attempt uploads the files one by one over SFTP.`, {
      transfer: "archive",
    });
  }
  await runLog.info(`Extracted ${count} files into ${layout.release}; the archive was removed.`, { files: Number(count) });
  return { kind: "archive", files: progress.files, bytes: progress.bytes };
}

/** Uploads every file over SFTP, several writes in flight. */
async function sftpTransfer({ sftp, layout, files, runLog, config, scrubber, signal }: TransferContext): Promise<Transferred> {
  const root = layout.release;
  try {
    await sftp.mkdir(root);
  } catch (error) {
    throw sshFailure(error, config, scrubber, "preparation");
  }
  await runLog.info(`Uploading into ${root} over SFTP, file by file.`, { release: root });
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
    files,
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
  await runLog.info(`Uploaded ${progress.files} files (${formatBytes(progress.bytes)}).`, { files: progress.files, bytes: progress.bytes });
  return { kind: "sftp", files: progress.files, bytes: progress.bytes };
}
