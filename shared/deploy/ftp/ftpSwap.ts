/**
 * The FTP swap: files go to a staging folder next to `remote_path`, and only a complete
 * upload replaces the live folder, by two renames (live → previous, staging → live) and the
 * removal of the previous one. A failed upload never touches the live folder; a run that
 * dies between the two renames leaves `previous`, which the next attempt of the same
 * deployment puts back before it starts.
 *
 * Names derive from the deployment id (`.site.schemaforge-42.new` / `.old` next to `site`),
 * so retries find their leftovers. The FTP root itself cannot be renamed: a `remote_path`
 * of `/` is uploaded in place, with a warning.
 */
import { posix } from "node:path";
import type { Client } from "basic-ftp";
import type { RunLog } from "../runLog.ts";
import { isDirectory, makeDirectory, removeTree } from "./ftpSession.ts";

/** Where a deployment's folders live on the server. */
export interface FtpLayout {
  /** The live folder (`remote_path`, absolute). */
  target: string;
  /** Where this deployment uploads before the swap. */
  staging: string;
  /** Where the live folder goes during the swap. */
  previous: string;
  /** True for `/`: no swap possible, files go straight into the target. */
  inPlace: boolean;
}

/** The layout for an absolute remote path and a safe deployment id. */
export function ftpLayout(remotePath: string, id: string): FtpLayout {
  const target = posix.normalize(remotePath).replace(/(.)\/+$/, "$1");
  if (target === "/") return { target, staging: target, previous: target, inPlace: true };
  const dir = posix.dirname(target);
  const base = posix.basename(target);
  return {
    target,
    staging: posix.join(dir, `.${base}.schemaforge-${id}.new`),
    previous: posix.join(dir, `.${base}.schemaforge-${id}.old`),
    inPlace: false,
  };
}

/** Puts back a live folder that an interrupted swap of this deployment left aside. */
export async function restoreInterruptedSwap(client: Client, layout: FtpLayout, runLog: RunLog): Promise<void> {
  if (layout.inPlace) return;
  if (!(await isDirectory(client, layout.target)) && (await isDirectory(client, layout.previous))) {
    await client.rename(layout.previous, layout.target);
    await runLog.warning(`Restored ${layout.target}, which an interrupted earlier attempt had moved aside.`);
  }
}

/** Removes what an earlier attempt left in staging and creates it empty, parents included. */
export async function prepareStaging(client: Client, layout: FtpLayout, runLog: RunLog): Promise<void> {
  if (layout.inPlace) {
    await runLog.warning("remote_path is the FTP root, which cannot be swapped atomically: files are uploaded in place.");
    return;
  }
  if (await removeTree(client, layout.staging)) await runLog.info(`Removed the unfinished upload of an earlier attempt (${layout.staging}).`);
  const parents = posix.dirname(layout.target).split("/").filter(Boolean);
  for (let i = 1; i <= parents.length; i += 1) await makeDirectory(client, `/${parents.slice(0, i).join("/")}`);
  await makeDirectory(client, layout.staging);
}

/**
 * Swaps staging into place. If the second rename fails, the first is undone.
 * @returns whether a previous live folder was replaced.
 */
export async function swapIntoPlace(client: Client, layout: FtpLayout): Promise<boolean> {
  if (layout.inPlace) return false;
  const hadLive = await isDirectory(client, layout.target);
  if (hadLive) await client.rename(layout.target, layout.previous);
  try {
    await client.rename(layout.staging, layout.target);
  } catch (error) {
    if (hadLive) await client.rename(layout.previous, layout.target);
    throw error;
  }
  return hadLive;
}

/** Removes the replaced live folder; failures only warn (the new site is already live). */
export async function removePrevious(client: Client, layout: FtpLayout, runLog: RunLog): Promise<void> {
  if (layout.inPlace) return;
  try {
    if (await removeTree(client, layout.previous)) await runLog.info(`Removed the previous version (${layout.previous}).`);
  } catch {
    await runLog.warning(`Could not remove the previous version at ${layout.previous}; remove it by hand.`);
  }
}
