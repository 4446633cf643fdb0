/**
 * Release folders on the SSH host: each deployment uploads into
 * `<remote_path>/releases/<deployment id>`, then `<remote_path>/current`, a symlink the web
 * server serves from, is switched to it, and old releases are pruned.
 *
 * The switch prepares the new link next to `current` and renames it over `current`:
 * 1. with SFTP `posix-rename@openssh.com` when the server offers it (OpenSSH does): atomic;
 * 2. else with `mv -Tf` through the account's shell (GNU coreutils): atomic;
 * 3. else (SFTP-only account without the extension) with two SFTP renames, `current` aside
 *    and the new link in: a window of one round trip without `current`, logged as a warning.
 * Every path given to the shell is quoted with `shellQuote`.
 */
import { posix } from "node:path";
import type ssh2 from "ssh2";
import { DeployError } from "../errors.ts";
import type { RunLog } from "../runLog.ts";
import type { SftpClient } from "./sftpClient.ts";
import { execRemote, shellQuote } from "./sshSession.ts";

/** Where one deployment's release lives. */
export interface ReleaseLayout {
  base: string;
  releases: string;
  /** The release folder's name (the deployment id). */
  name: string;
  release: string;
  current: string;
  /** The new link before it replaces `current`. */
  nextLink: string;
  /** Where the fallback switch parks the old link. */
  previousLink: string;
}

/** How `current` was switched. */
export type SwitchMethod = "posix-rename" | "exec-mv" | "sftp-rename";

/** The layout under an absolute base path for a safe deployment id. */
export function releaseLayout(base: string, id: string): ReleaseLayout {
  const root = posix.normalize(base).replace(/(.)\/+$/, "$1");
  return {
    base: root,
    releases: posix.join(root, "releases"),
    name: id,
    release: posix.join(root, "releases", id),
    current: posix.join(root, "current"),
    nextLink: posix.join(root, `.current.${id}.next`),
    previousLink: posix.join(root, `.current.${id}.previous`),
  };
}

/** The link target `current` gets (relative, so it survives a chroot or a moved base). */
export const linkTarget = (layout: ReleaseLayout) => `releases/${layout.name}`;

/** Puts back a `current` link that an interrupted fallback switch of this deployment parked. */
export async function restoreInterruptedSwitch(sftp: SftpClient, layout: ReleaseLayout, runLog: RunLog): Promise<void> {
  if (!(await sftp.lstat(layout.current)) && (await sftp.lstat(layout.previousLink))) {
    await sftp.rename(layout.previousLink, layout.current);
    await runLog.warning(`Restored ${layout.current}, which an interrupted earlier attempt had moved aside.`);
  }
}

/**
 * Points `current` at this deployment's release.
 * @throws DeployError `invalid_config` when `current` exists and is not a symlink.
 */
export async function switchCurrent(client: ssh2.Client, sftp: SftpClient, layout: ReleaseLayout, runLog: RunLog): Promise<SwitchMethod> {
  const existing = await sftp.lstat(layout.current);
  if (existing && !existing.isSymbolicLink()) {
    throw new DeployError(
      "invalid_config",
      `${layout.current} exists and is not a symlink. Move it away: the deployer manages ${layout.current} as a link to the live release, and the web server should serve from it.`,
    );
  }
  await sftp.unlink(layout.nextLink);
  await sftp.symlink(linkTarget(layout), layout.nextLink);
  if (await sftp.posixRename(layout.nextLink, layout.current)) return "posix-rename";
  const moved = await execRemote(client, `mv -Tf -- ${shellQuote(layout.nextLink)} ${shellQuote(layout.current)}`);
  if (moved?.code === 0) return "exec-mv";
  if (existing) {
    await sftp.unlink(layout.previousLink);
    await sftp.rename(layout.current, layout.previousLink);
    try {
      await sftp.rename(layout.nextLink, layout.current);
    } catch (error) {
      await sftp.rename(layout.previousLink, layout.current);
      throw error;
    }
    await sftp.unlink(layout.previousLink);
  } else {
    await sftp.rename(layout.nextLink, layout.current);
  }
  await runLog.warning("The server offers neither posix-rename nor a shell with `mv -T`; current was switched by two renames, briefly absent in between.");
  return "sftp-rename";
}

/**
 * Removes the oldest releases beyond `keep` (the live one included, and never removed).
 * @returns the names removed.
 */
export async function pruneReleases(client: ssh2.Client, sftp: SftpClient, layout: ReleaseLayout, keep: number): Promise<string[]> {
  const live = posix.basename((await sftp.readlink(layout.current)) ?? linkTarget(layout));
  const candidates = (await sftp.readdir(layout.releases))
    .filter((entry) => entry.attrs.isDirectory() && entry.filename !== live)
    .sort((a, b) => b.attrs.mtime - a.attrs.mtime || b.filename.localeCompare(a.filename, "en", { numeric: true }));
  const doomed = candidates.slice(Math.max(0, keep - 1)).map((entry) => entry.filename);
  if (doomed.length === 0) return [];
  const paths = doomed.map((name) => posix.join(layout.releases, name));
  const removed = await execRemote(client, `rm -rf -- ${paths.map(shellQuote).join(" ")}`);
  if (removed?.code !== 0) for (const path of paths) await sftp.removeTree(path);
  return doomed;
}
