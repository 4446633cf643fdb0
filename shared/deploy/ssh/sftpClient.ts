/**
 * Promise wrappers over ssh2's SFTP client, with the few compound operations the SSH
 * deployer needs (create a directory chain, remove a tree, atomic rename when the server
 * offers OpenSSH's `posix-rename@openssh.com`).
 */
import { posix } from "node:path";
import type { FileEntryWithStats, SFTPWrapper, Stats } from "ssh2";

const NO_SUCH_FILE = 2;

const call = <T>(body: (callback: (error: Error | null | undefined, value?: T) => void) => void): Promise<T> =>
  new Promise<T>((resolve, reject) => body((error, value) => (error ? reject(error) : resolve(value as T))));

const isMissing = (error: unknown) => (error as { code?: unknown }).code === NO_SUCH_FILE;

/** An SFTP session as promises. */
export class SftpClient {
  readonly #sftp: SFTPWrapper;

  constructor(sftp: SFTPWrapper) {
    this.#sftp = sftp;
  }

  /** The absolute form of a path (the home directory for `.`). */
  realpath(path: string): Promise<string> {
    return call((cb) => this.#sftp.realpath(path, cb));
  }

  /** The entry's attributes without following a symlink; null when it does not exist. */
  async lstat(path: string): Promise<Stats | null> {
    try {
      return await call<Stats>((cb) => this.#sftp.lstat(path, cb));
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** A symlink's target as stored; null when `path` does not exist or is no symlink. */
  async readlink(path: string): Promise<string | null> {
    const stats = await this.lstat(path);
    if (!stats?.isSymbolicLink()) return null;
    return call<string>((cb) => this.#sftp.readlink(path, cb));
  }

  /** Creates a directory; an existing directory is fine. */
  async mkdir(path: string): Promise<void> {
    try {
      await call((cb) => this.#sftp.mkdir(path, cb));
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

  /** Writes a whole file (created or truncated). */
  writeFile(path: string, content: Buffer): Promise<void> {
    return call((cb) => this.#sftp.writeFile(path, content, cb));
  }

  /** Creates `linkPath` as a symlink to `target` (stored as given, relative targets stay relative). */
  symlink(target: string, linkPath: string): Promise<void> {
    return call((cb) => this.#sftp.symlink(target, linkPath, cb));
  }

  /** SFTP v3 rename: fails when `to` exists. */
  rename(from: string, to: string): Promise<void> {
    return call((cb) => this.#sftp.rename(from, to, cb));
  }

  /** Atomic rename over an existing target; false when the server lacks the extension. */
  async posixRename(from: string, to: string): Promise<boolean> {
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
      await call((cb) => this.#sftp.unlink(path, cb));
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }

  /** The entries of a directory with their attributes. */
  readdir(path: string): Promise<FileEntryWithStats[]> {
    return call<FileEntryWithStats[]>((cb) => this.#sftp.readdir(path, cb));
  }

  /** Removes a tree over SFTP (slow for big trees: one request per entry). */
  async removeTree(path: string): Promise<void> {
    const stats = await this.lstat(path);
    if (!stats) return;
    if (!stats.isDirectory()) return this.unlink(path);
    for (const entry of await this.readdir(path)) await this.removeTree(posix.join(path, entry.filename));
    await call((cb) => this.#sftp.rmdir(path, cb));
  }
}
