/**
 * The generation as one gzip-compressed tar archive, built while the files are read and
 * uploaded, so it is never whole in memory: the SSH deployer's primary transfer (transfer.ts).
 *
 * tar-stream writes the headers (ustar, with a pax record for a name longer than ustar holds
 * or not ASCII), which GNU tar, bsdtar and busybox tar all read; hand-written headers would
 * have to get those cases and the checksum right themselves. Entries are regular files only
 * (mode 0644, owner 0, one modification time for the whole archive), named by the
 * generation's normalised relative paths: `eachFile` (files.ts) refuses absolute paths, `..`,
 * control characters and repeated paths before they reach the archive, so extracting it can
 * only create files and folders inside the target folder.
 */
import { pipeline, Readable } from "node:stream";
import { createGzip } from "node:zlib";
import { pack } from "tar-stream";
import { eachFile } from "../files.ts";
import type { DeployFile, DeployFiles } from "../types.ts";

/** Mode of every archived file: readable by the web server, writable by the account only. */
const FILE_MODE = 0o644;

/**
 * The files as a tar.gz byte stream. `onFile` is awaited after each file went into the
 * archive (progress). A bad or repeated path, or any error of `files`, fails the stream.
 * Destroying the stream (the upload failed) stops reading `files`.
 */
export function tarGz(files: DeployFiles, onFile: (file: DeployFile) => Promise<void>, mtime = new Date()): Readable {
  const archive = pack();
  // Errors reach the consumer through the pipeline; without a listener, a destroyed packer
  // (the upload stopped reading) would be an uncaught 'error' event.
  archive.on("error", () => {});
  const feed = async () => {
    for await (const file of eachFile(files)) {
      // Waiting for each entry keeps one file at a time in the packer, whatever the consumer's pace.
      await new Promise<void>((resolve, reject) => {
        const entry = archive.entry({ name: file.path, type: "file", mode: FILE_MODE, mtime, size: file.content.length }, file.content, (error) => (error ? reject(error) : resolve()));
        entry.on("error", () => {});
      });
      await onFile(file);
    }
    archive.finalize();
  };
  feed().catch((error: unknown) => archive.destroy(error instanceof Error ? error : new Error(String(error))));
  return pipeline(Readable.from(archive), createGzip(), () => {});
}
