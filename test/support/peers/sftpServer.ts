/**
 * The SFTP subsystem of the SSH test peer: SFTP v3 requests served from the local file
 * system, confined to the peer's home directory. Paths are real paths (the home directory
 * is a temporary folder), so the peer's `exec` can run real shell commands on the same
 * files, as an OpenSSH server would for its user. Semantics follow OpenSSH's sftp-server
 * where the deployer depends on them: RENAME refuses an existing target, SYMLINK stores the
 * target as given, READLINK returns it.
 */
import { constants, type Stats } from "node:fs";
import { lstat, mkdir, open, opendir, readlink, rename, rmdir, stat, symlink, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import ssh2, { type Attributes, type SFTPWrapper } from "ssh2";

const { STATUS_CODE, flagsToString } = ssh2.utils.sftp;

type Handle = { kind: "file"; file: FileHandle } | { kind: "dir"; dir: string; done: boolean };

/** Serves SFTP requests on `sftp` from the directory `home`. */
export function serveSftp(sftp: SFTPWrapper, home: string): void {
  const handles = new Map<number, Handle>();
  let nextHandle = 1;
  const newHandle = (value: Handle) => {
    const id = nextHandle++;
    handles.set(id, value);
    const buffer = Buffer.alloc(4);
    buffer.writeUInt32BE(id);
    return buffer;
  };
  const handleOf = (buffer: Buffer) => (buffer.length === 4 ? handles.get(buffer.readUInt32BE(0)) : undefined);

  /** The local path of a request path; null when it leaves the home directory. */
  const local = (requested: string): string | null => {
    const resolved = path.resolve(home, requested);
    return resolved === home || resolved.startsWith(`${home}${path.sep}`) ? resolved : null;
  };

  const fail = (reqId: number, error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    const status = code === "ENOENT" ? STATUS_CODE.NO_SUCH_FILE : code === "EACCES" || code === "EPERM" ? STATUS_CODE.PERMISSION_DENIED : STATUS_CODE.FAILURE;
    sftp.status(reqId, status, (error as Error).message);
  };
  /** Runs a request that changes files on a confined path; answers errors with a status. */
  const onPath = (reqId: number, requested: string, body: (file: string) => Promise<void>) => {
    const file = local(requested);
    if (!file) return sftp.status(reqId, STATUS_CODE.PERMISSION_DENIED, "outside the home directory");
    body(file).catch((error: unknown) => fail(reqId, error));
  };
  /** Runs a read-only request, which like a normal account may look outside its home. */
  const onAnyPath = (reqId: number, requested: string, body: (file: string) => Promise<void>) => {
    body(path.resolve(home, requested)).catch((error: unknown) => fail(reqId, error));
  };

  sftp.on("REALPATH", (reqId, requested) => onAnyPath(reqId, requested, async (file) => void sftp.name(reqId, [{ filename: file, longname: file, attrs: {} as Attributes }])));
  sftp.on("STAT", (reqId, requested) => onAnyPath(reqId, requested, async (file) => void sftp.attrs(reqId, attributes(await stat(file)))));
  sftp.on("LSTAT", (reqId, requested) => onAnyPath(reqId, requested, async (file) => void sftp.attrs(reqId, attributes(await lstat(file)))));
  sftp.on("MKDIR", (reqId, requested) => onPath(reqId, requested, async (file) => (await mkdir(file), sftp.status(reqId, STATUS_CODE.OK))));
  sftp.on("RMDIR", (reqId, requested) => onPath(reqId, requested, async (file) => (await rmdir(file), sftp.status(reqId, STATUS_CODE.OK))));
  sftp.on("REMOVE", (reqId, requested) => onPath(reqId, requested, async (file) => (await unlink(file), sftp.status(reqId, STATUS_CODE.OK))));
  sftp.on("SETSTAT", (reqId) => sftp.status(reqId, STATUS_CODE.OK));
  sftp.on("FSETSTAT", (reqId) => sftp.status(reqId, STATUS_CODE.OK));
  sftp.on("READLINK", (reqId, requested) =>
    onAnyPath(reqId, requested, async (file) => {
      const target = await readlink(file);
      sftp.name(reqId, [{ filename: target, longname: target, attrs: {} as Attributes }]);
    }),
  );
  // ssh2 emits (linkPath, targetPath) in protocol order for clients that are not OpenSSH.
  sftp.on("SYMLINK", (reqId: number, linkPath: string, targetPath: string) =>
    onPath(reqId, linkPath, async (file) => (await symlink(targetPath, file), sftp.status(reqId, STATUS_CODE.OK))),
  );
  sftp.on("RENAME", (reqId, from, to) =>
    onPath(reqId, from, async (source) => {
      const target = local(to);
      if (!target) return void sftp.status(reqId, STATUS_CODE.PERMISSION_DENIED, "outside the home directory");
      if (await lstat(target).then(() => true, () => false)) return void sftp.status(reqId, STATUS_CODE.FAILURE, "target exists");
      await rename(source, target);
      sftp.status(reqId, STATUS_CODE.OK);
    }),
  );
  sftp.on("OPEN", (reqId, requested, flags) =>
    onPath(reqId, requested, async (file) => {
      const mode = flagsToString(flags);
      if (!mode) return void sftp.status(reqId, STATUS_CODE.OP_UNSUPPORTED);
      sftp.handle(reqId, newHandle({ kind: "file", file: await open(file, mode) }));
    }),
  );
  sftp.on("WRITE", (reqId, buffer, offset, data) => {
    const handle = handleOf(buffer);
    if (handle?.kind !== "file") return sftp.status(reqId, STATUS_CODE.FAILURE, "bad handle");
    handle.file.write(data, 0, data.length, offset).then(
      () => sftp.status(reqId, STATUS_CODE.OK),
      (error: unknown) => fail(reqId, error),
    );
  });
  sftp.on("READ", (reqId, buffer, offset, length) => {
    const handle = handleOf(buffer);
    if (handle?.kind !== "file") return sftp.status(reqId, STATUS_CODE.FAILURE, "bad handle");
    const chunk = Buffer.alloc(length);
    handle.file.read(chunk, 0, length, offset).then(
      ({ bytesRead }) => (bytesRead === 0 ? sftp.status(reqId, STATUS_CODE.EOF) : sftp.data(reqId, chunk.subarray(0, bytesRead))),
      (error: unknown) => fail(reqId, error),
    );
  });
  sftp.on("FSTAT", (reqId, buffer) => {
    const handle = handleOf(buffer);
    if (handle?.kind !== "file") return sftp.status(reqId, STATUS_CODE.FAILURE, "bad handle");
    handle.file.stat().then(
      (stats) => sftp.attrs(reqId, attributes(stats)),
      (error: unknown) => fail(reqId, error),
    );
  });
  sftp.on("OPENDIR", (reqId, requested) =>
    onPath(reqId, requested, async (dir) => {
      if (!(await stat(dir)).isDirectory()) return void sftp.status(reqId, STATUS_CODE.FAILURE, "not a directory");
      sftp.handle(reqId, newHandle({ kind: "dir", dir, done: false }));
    }),
  );
  sftp.on("READDIR", (reqId, buffer) => {
    const handle = handleOf(buffer);
    if (handle?.kind !== "dir") return sftp.status(reqId, STATUS_CODE.FAILURE, "bad handle");
    if (handle.done) return sftp.status(reqId, STATUS_CODE.EOF);
    handle.done = true;
    listDirectory(handle.dir).then(
      (names) => sftp.name(reqId, names),
      (error: unknown) => fail(reqId, error),
    );
  });
  sftp.on("CLOSE", (reqId, buffer) => {
    const handle = handleOf(buffer);
    if (!handle) return sftp.status(reqId, STATUS_CODE.FAILURE, "bad handle");
    handles.delete(buffer.readUInt32BE(0));
    const closing = handle.kind === "file" ? handle.file.close() : Promise.resolve();
    closing.then(
      () => sftp.status(reqId, STATUS_CODE.OK),
      (error: unknown) => fail(reqId, error),
    );
  });
  sftp.on("close", () => {
    for (const handle of handles.values()) if (handle.kind === "file") void handle.file.close().catch(() => {});
  });
}

async function listDirectory(dir: string) {
  const names = [];
  for await (const entry of await opendir(dir)) {
    const stats = await lstat(path.join(dir, entry.name));
    names.push({ filename: entry.name, longname: `${stats.isDirectory() ? "d" : "-"}rw-r--r-- 1 peer peer ${stats.size} ${entry.name}`, attrs: attributes(stats) });
  }
  return names;
}

function attributes(stats: Stats): Attributes {
  return {
    mode: stats.mode,
    uid: stats.uid,
    gid: stats.gid,
    size: stats.size,
    atime: Math.floor(stats.atimeMs / 1000),
    mtime: Math.floor(stats.mtimeMs / 1000),
  };
}

/** Whether a mode is a symbolic link (for tests reading attrs). */
export const isSymlinkMode = (mode: number) => (mode & constants.S_IFMT) === constants.S_IFLNK;
