/**
 * Promise wrappers over ssh2's SFTP client, with the few compound operations the SSH
 * deployer needs (create a directory chain, remove a tree, atomic rename when the server
 * offers OpenSSH's `posix-rename@openssh.com`).
 */
import { posix } from "node:path";
import type { FileEntryWithStats, SFTPWrapper, Stats } from "ssh2";

const NO_SUCH_FILE = 2;
/**
 * Bytes per WRITE request: under every server's packet limit (ssh2 assumes 34,000 bytes less
 * its overhead for servers that are not OpenSSH) so ssh2 never splits a piece into requests
 * that it then sends one after another.
 */
const WRITE_PIECE = 32 * 1024;

const call = <T>(body: (callback: (error: Error | null | undefined, value?: T) => void) => void): Promise<T> =>
  new Promise<T>((resolve, reject) => body((error, value) => (error ? reject(error) : resolve(value as T))));

const isMissing = (error: unknown) => (error as { code?: unknown }).code === NO_SUCH_FILE;

/** An SFTP session as promises. */
export class SftpClient {
  readonly #sftp: SFTPWrapper;
  #closed = false;

  constructor(sftp: SFTPWrapper) {
    this.#sftp = sftp;
    // ssh2 fails the requests pending when the channel closes, but queues later ones forever.
    sftp.once("close", () => (this.#closed = true));
  }

  /** One request as a promise; refused at once on a closed channel. */
  #call<T>(body: (callback: (error: Error | null | undefined, value?: T) => void) => void): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("the SFTP channel is closed"));
    return call(body);
  }

  /** The absolute form of a path (the home directory for `.`). */
  realpath(path: string): Promise<string> {
    return this.#call((cb) => this.#sftp.realpath(path, cb));
  }

  /** The entry's attributes without following a symlink; null when it does not exist. */
  async lstat(path: string): Promise<Stats | null> {
    try {
      return await this.#call<Stats>((cb) => this.#sftp.lstat(path, cb));
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** A symlink's target as stored; null when `path` does not exist or is no symlink. */
  async readlink(path: string): Promise<string | null> {
    const stats = await this.lstat(path);
    if (!stats?.isSymbolicLink()) return null;
    return this.#call<string>((cb) => this.#sftp.readlink(path, cb));
  }

  /** Creates a directory; an existing directory is fine. */
  async mkdir(path: string): Promise<void> {
    try {
      await this.#call((cb) => this.#sftp.mkdir(path, cb));
    } catch (error) {
      if (!(await this.lstat(path))?.isDirectory()) throw error;
    }
  }

  /** Creates an absolute directory and its missing parents. */
  async mkdirs(path: string): Promise<void> {
    const parts = path.split("/").filter(Boolean);
    for (let i = 1; i <= parts.length; i += 1) {
      const dir = `/${parts.slice(0, i).join("/")}`;
      if (!(await this.lstat(dir))) await this.mkdir(dir);
    }
  }

  /**
   * Writes a whole file (created or truncated). Not ssh2's `writeFile`: after a failed write
   * it closes the handle with a request that never completes once the channel is gone.
   */
  async writeFile(path: string, content: Buffer): Promise<void> {
    await this.writeChunks(path, [content]);
  }

  /**
   * Writes a stream of chunks into a file (created or truncated), with up to `inFlight`
   * WRITE requests outstanding at their offsets: ssh2's own write streams wait for each reply
   * before sending the next piece, one round trip per 32 KB.
   * @returns the bytes written.
   */
  async writeChunks(path: string, chunks: AsyncIterable<Buffer> | Iterable<Buffer>, inFlight = 16): Promise<number> {
    const handle = await this.#call<Buffer>((cb) => this.#sftp.open(path, "w", cb));
    const pending = new Set<Promise<void>>();
    let failure: { error: unknown } | undefined;
    let offset = 0;
    let written = false;
    try {
      for await (const chunk of chunks) {
        for (let start = 0; start < chunk.length; start += WRITE_PIECE) {
          const piece = chunk.subarray(start, start + WRITE_PIECE);
          const at = offset;
          offset += piece.length;
          const write: Promise<void> = this.#call<number>((cb) => this.#sftp.write(handle, piece, 0, piece.length, at, cb)).then(
            () => void pending.delete(write),
            (error: unknown) => {
              failure ??= { error };
              pending.delete(write);
            },
          );
          pending.add(write);
          while (pending.size >= inFlight) await Promise.race(pending);
          if (failure) throw failure.error;
        }
      }
      await Promise.all(pending);
      if (failure) throw failure.error;
      written = true;
    } finally {
      // Every request settles (each catches its own error) before the handle goes; after a
      // failure, a failing close must not hide the first error.
      await Promise.all(pending);
      const closing = this.#call((cb) => this.#sftp.close(handle, cb));
      if (written) await closing;
      else await closing.catch(() => undefined);
    }
    return offset;
  }

  /** Creates `linkPath` as a symlink to `target` (stored as given, relative targets stay relative). */
  symlink(target: string, linkPath: string): Promise<void> {
    return this.#call((cb) => this.#sftp.symlink(target, linkPath, cb));
  }

  /** SFTP v3 rename: fails when `to` exists. */
  rename(from: string, to: string): Promise<void> {
    return this.#call((cb) => this.#sftp.rename(from, to, cb));
  }

  /** Atomic rename over an existing target; false when the server lacks the extension. */
  async posixRename(from: string, to: string): Promise<boolean> {
    if (this.#closed) throw new Error("the SFTP channel is closed");
    const done = Promise.withResolvers<void>();
    try {
      // ssh2 throws synchronously when the server did not advertise the extension.
      this.#sftp.ext_openssh_rename(from, to, (error) => (error ? done.reject(error) : done.resolve()));
    } catch {
      return false;
    }
    await done.promise;
    return true;
  }

  /** Removes a file or symlink; a missing one is fine. */
  async unlink(path: string): Promise<void> {
    try {
      await this.#call((cb) => this.#sftp.unlink(path, cb));
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }

  /** The entries of a directory with their attributes. */
  readdir(path: string): Promise<FileEntryWithStats[]> {
    return this.#call<FileEntryWithStats[]>((cb) => this.#sftp.readdir(path, cb));
  }

  /** Removes a tree over SFTP (slow for big trees: one request per entry). */
  async removeTree(path: string): Promise<void> {
    const stats = await this.lstat(path);
    if (!stats) return;
    if (!stats.isDirectory()) return this.unlink(path);
    for (const entry of await this.readdir(path)) await this.removeTree(posix.join(path, entry.filename));
    await this.#call((cb) => this.#sftp.rmdir(path, cb));
  }
}
