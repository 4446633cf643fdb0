/**
 * How the SSH deployer moves the files: one archive extracted by the server, or file by
 * file over SFTP when the account runs no commands or has no tar; and retries of either.
 */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, readlink, writeFile } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { deploySsh } from "../../../shared/deploy/ssh/sshDeploy.ts";
import { memoryState } from "../../../shared/deploy/state.ts";
import { commandDir, systemCommand } from "../../support/peers/sshPeer.ts";
import { readTree } from "../../support/peers/tree.ts";
import { captureLog, expected, generation } from "./fixtures.ts";
import { configOf, deploy, extractions, live, network, peer, scratch } from "./sshFixtures.ts";

t.test("no exec channel, or no tar: file by file over SFTP, the same release", async (t) => {
  const files = generation("f");
  const withTar = await peer(t);
  const sftpOnly = await peer(t, { allowExec: false });
  const noTar = await peer(t, { execPath: await commandDir(path.join(await scratch(t), "bin"), ["mv", "rm", "find", "wc", "mkdir"]) });
  const runs = await Promise.all([withTar, sftpOnly, noTar].map((p) => deploy(p, files)));
  for (const run of runs) t.error(run.error);
  t.same(
    runs.map((run) => run.result?.transfer),
    ["archive", "sftp", "sftp"],
  );
  for (const p of [withTar, sftpOnly, noTar]) t.same(await live(p), expected(files), "the same files on every server");
  t.ok(runs[1]!.entries.some((e) => e.message === "Transfer: file by file over SFTP, because the server runs no commands for this account (SFTP only)."));
  t.ok(runs[2]!.entries.some((e) => e.message === "Transfer: file by file over SFTP, because tar was not found on the server."));
  t.same(sftpOnly.stats.execs, []);
  t.same(noTar.stats.execs, ["command -v tar", `mv -Tf -- '${noTar.home}/site/.current.1.next' '${noTar.home}/site/current'`], "no extraction was tried");
});

t.test("an archive the server cannot extract: the attempt fails retryable, the next goes file by file", async (t) => {
  const tar = await systemCommand("tar");
  const brokenTars = {
    "tar fails": { script: 'echo "tar: unrecognized option --no-same-owner" >&2; exit 2', why: /the command exited with 2: tar: unrecognized option --no-same-owner/ },
    // The release folder is the last argument: remove one extracted file.
    "tar loses a file": { script: `"${tar}" "$@" || exit $?; for a in "$@"; do d=$a; done; rm -f "$d/index.php"`, why: /6 files arrived instead of 7/ },
  };
  for (const [name, broken] of Object.entries(brokenTars)) {
    await t.test(name, async (t) => {
      const bin = await commandDir(path.join(await scratch(t), "bin"), ["mv", "rm", "find", "wc", "mkdir", "gzip"], { tar: broken.script });
      const p = await peer(t, { execPath: bin });
      const files = generation("x");
      const state = memoryState();
      const failed = await deploy(p, files, { id: 3, state });
      t.match(failed.error, { code: "remote_error", retryable: true, message: /^Extracting the archive into .*\/releases\/3 failed \(.*\)\. The next attempt uploads the files one by one over SFTP\.$/ });
      t.match((failed.error as Error).message, broken.why);
      t.match(state.entries.get("ssh.archive_failed"), broken.why);
      t.notOk(await lstat(path.join(p.home, "site/current")).catch(() => null), "nothing was switched");
      t.notOk((await readdir(path.join(p.home, "site/releases"))).includes(".3.tar.gz"), "the archive was removed");

      const retried = await deploy(p, files, { id: 3, state });
      t.error(retried.error);
      t.equal(retried.result?.transfer, "sftp");
      t.ok(retried.entries.some((e) => /^Transfer: file by file over SFTP, because an earlier attempt could not extract the archive on the server/.test(e.message)));
      t.ok(retried.entries.some((e) => /Removed the unfinished release/.test(e.message)));
      t.same(await live(p), expected(files));
      t.equal(extractions(p).length, 1, "the retry did not try the archive again");
    });
  }
});

t.test("an archive of many incompressible files arrives whole (many writes in flight)", async (t) => {
  const p = await peer(t);
  const files = Array.from({ length: 150 }, (_, i) => ({ path: `blob/${i % 7}/file-${i}.bin`, content: randomBytes(20_000 + i) }));
  const { result, error } = await deploy(p, files);
  t.error(error);
  t.equal(result?.transfer, "archive");
  const tree = await readTree(path.join(p.home, "site/current"));
  t.equal(tree.size, files.length);
  t.same(
    files.filter((f) => !tree.get(f.path)?.equals(f.content)).map((f) => f.path),
    [],
    "every byte arrived",
  );
});

t.test("a generation holding a path as a file and a folder fails before anything goes live, on both transfers", async (t) => {
  for (const allowExec of [true, false]) {
    const p = await peer(t, { allowExec });
    t.error((await deploy(p, generation("1"), { id: 1 })).error);
    const broken = [...generation("2"), { path: "index.php/inner.txt", content: Buffer.from("x") }];
    const { error, entries } = await deploy(p, broken, { id: 2 });
    t.match(error, { code: "invalid_config", message: /`index\.php` is both a file and a folder \(`index\.php\/inner\.txt`\)/ });
    t.equal(await readlink(path.join(p.home, "site/current")), "releases/1");
    t.same(await live(p), expected(generation("1")));
    t.equal(entries.at(-1)?.type, "error");
    t.same(extractions(p).length, allowExec ? 1 : 0, "the broken archive was never extracted");
  }
});

t.test("retries: an unfinished release is redone, a live one is not touched", async (t) => {
  const p = await peer(t);
  await mkdir(path.join(p.home, "site/releases/5/partial"), { recursive: true });
  await writeFile(path.join(p.home, "site/releases/5/partial/half.txt"), "half");
  await writeFile(path.join(p.home, "site/releases/.5.tar.gz"), "half an archive");
  const files = generation("5");
  const state = memoryState();
  const first = await deploy(p, files, { id: 5, state });
  t.error(first.error);
  t.ok(first.entries.some((e) => /Removed the unfinished release/.test(e.message)));
  t.same(await live(p), expected(files));
  t.same(await readdir(path.join(p.home, "site/releases")), ["5"], "the stale archive was replaced and removed");

  const execs = p.stats.execs.length;
  const again = await deploy(p, files, { id: 5, state });
  t.equal(again.result?.switchMethod, "already-live");
  const withoutState = await deploy(p, files, { id: 5 });
  t.equal(withoutState.result?.switchMethod, "already-live", "the link itself tells the deployment is live");
  t.equal(p.stats.execs.length, execs, "nothing was switched again");
});

t.test("a worker killed between upload and switch: the retry finishes without doing anything twice", async (t) => {
  const p = await peer(t);
  const files = generation("c");
  const cases = [
    // The archive is on the server, not extracted: uploaded again (overwritten), extracted once.
    { id: 11, crashAt: /^Uploaded an archive/, extractedBefore: 0, extractedAfter: 1, redone: false, reused: false },
    // Extracted but not yet recorded: the folder cannot be trusted, so it is removed and redone.
    { id: 12, crashAt: /^Extracted/, extractedBefore: 1, extractedAfter: 2, redone: true, reused: false },
    // Extracted and recorded: the retry only switches.
    { id: 13, crashAt: /^Switching/, extractedBefore: 1, extractedAfter: 1, redone: false, reused: true },
  ];
  for (const c of cases) {
    const state = memoryState();
    const ofThis = () => extractions(p).filter((command) => command.includes(`/releases/${c.id}'`)).length;
    const crashed = await deploy(p, files, { id: c.id, state, crashAt: c.crashAt });
    t.match(crashed.error, { code: "remote_error", message: /worker killed/ }, `crash at ${c.crashAt}`);
    t.not(await readlink(path.join(p.home, "site/current")).catch(() => null), `releases/${c.id}`, "not switched yet");
    t.equal(ofThis(), c.extractedBefore);

    const retried = await deploy(p, files, { id: c.id, state });
    t.error(retried.error);
    t.equal(ofThis(), c.extractedAfter, "extractions after the retry");
    t.equal(retried.entries.some((e) => /Removed the unfinished release/.test(e.message)), c.redone);
    t.equal(retried.entries.some((e) => e.message.startsWith(`An earlier attempt of this deployment already put ${files.length} files into`)), c.reused);
    t.equal(retried.result?.files, files.length);
    t.equal(await readlink(path.join(p.home, "site/current")), `releases/${c.id}`);
    t.same(await live(p), expected(files));
    t.notOk((await readdir(path.join(p.home, "site/releases"))).some((name) => name.startsWith(".")), "no archive is left");
  }
  const skipped = await deploy(p, files, { id: 14, state: memoryState({ "ssh.uploaded": JSON.stringify({ kind: "archive", files: 7, bytes: 1 }) }) });
  t.error(skipped.error);
  t.notOk(skipped.entries.some((e) => /already put/.test(e.message)), "a recorded upload without its folder is redone");
  t.same(await live(p), expected(files));
});

t.test("a cancelled deployment stops promptly on both transfers, nothing switched", async (t) => {
  for (const allowExec of [true, false]) {
    const p = await peer(t, { allowExec });
    const files = Array.from({ length: 2000 }, (_, i) => ({ path: `d${i % 9}/f${i}`, content: randomBytes(8000) }));
    const controller = new AbortController();
    const capture = captureLog();
    const outcome = await deploySsh({
      deploymentId: 1,
      files,
      config: configOf(p),
      network,
      signal: controller.signal,
      log: async (entry) => {
        await capture.log(entry);
        if (/^Uploading/.test(entry.message)) setTimeout(() => controller.abort(), 50);
      },
    }).catch((error: unknown) => error);
    t.match(outcome, { code: "aborted" }, allowExec ? "archive" : "file by file");
    t.notOk(await lstat(path.join(p.home, "site/current")).catch(() => null));
    t.same(extractions(p), []);
  }
});

t.test("a connection lost during extraction is not taken for a server that cannot extract", async (t) => {
  const tar = await systemCommand("tar");
  const slowTar = await commandDir(path.join(await scratch(t), "bin"), ["mv", "rm", "find", "wc", "mkdir", "gzip", "sleep"], { tar: `sleep 1; exec "${tar}" "$@"` });
  const p = await peer(t, { execPath: slowTar });
  const files = generation("l");
  const state = memoryState();
  const controller = new AbortController();
  const outcome = await deploySsh({
    deploymentId: 4,
    files,
    config: configOf(p),
    network,
    state,
    signal: controller.signal,
    log: async (entry) => {
      if (/^Uploaded an archive/.test(entry.message)) setTimeout(() => controller.abort(), 200);
    },
  }).catch((error: unknown) => error);
  t.match(outcome, { code: "aborted" });
  t.equal(extractions(p).length, 1, "the extraction had started");
  t.notOk(state.entries.has("ssh.archive_failed"), "the next attempt still uses the archive");
  const retried = await deploy(p, files, { id: 4, state });
  t.equal(retried.result?.transfer, "archive");
  t.same(await live(p), expected(files));
});
