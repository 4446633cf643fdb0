import { mkdir, readdir, rename } from "node:fs/promises";
import path from "node:path";
import { Client } from "basic-ftp";
import t, { type Test } from "tap";
import { DeployError } from "../../../shared/deploy/errors.ts";
import { deployFtp, testFtpConnection } from "../../../shared/deploy/ftp/ftpDeploy.ts";
import { memoryState } from "../../../shared/deploy/state.ts";
import type { DeployFile } from "../../../shared/deploy/types.ts";
import { startFtpLatencyProxy } from "../../support/peers/ftpLatencyProxy.ts";
import { startFtpPeer, type FtpPeer } from "../../support/peers/ftpPeer.ts";
import { tableResolver } from "../../support/peers/resolvers.ts";
import { asText, readTree } from "../../support/peers/tree.ts";
import { captureLog, expected, exposedText, generation, manyFiles } from "./fixtures.ts";

const network = { allowPrivate: true };

async function peer(t: Test, options: Parameters<typeof startFtpPeer>[0] = {}): Promise<FtpPeer> {
  const started = await startFtpPeer(options);
  t.teardown(() => started.close());
  return started;
}

const configOf = (p: FtpPeer, overrides: Record<string, unknown> = {}) => ({
  host: p.host,
  port: p.port,
  username: p.username,
  password: p.password,
  remote_path: "/site",
  passive_mode: true,
  ...overrides,
});

async function deploy(p: FtpPeer, files: DeployFile[], options: { id?: number; config?: Record<string, unknown>; state?: ReturnType<typeof memoryState>; signal?: AbortSignal } = {}) {
  const capture = captureLog();
  const run = deployFtp({
    deploymentId: options.id ?? 1,
    files,
    config: configOf(p, options.config),
    log: capture.log,
    network,
    ...(options.state ? { state: options.state } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const outcome = await run.then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  return { ...outcome, entries: capture.entries };
}

const siteOf = async (p: FtpPeer) => asText(await readTree(path.join(p.root, "site")));

t.test("deploys a generation: the files on the server equal the generation's", async (t) => {
  const p = await peer(t);
  const files = generation("1");
  const { result, error, entries } = await deploy(p, files);
  t.error(error);
  t.same(await siteOf(p), expected(files));
  t.match(result, { files: files.length, remotePath: "/site", connections: 4 });
  t.equal(p.stats.maxOpen, 4, "the pool opened its connections");
  t.same(await readdir(p.root), ["site"], "no staging or previous folder is left");
  t.equal(entries.at(-1)?.type, "success");
  t.ok(entries.some((e) => /Connecting to 127\.0\.0\.1/.test(e.message)));
  t.notMatch(exposedText(entries), p.password);
});

t.test("a second deployment replaces the whole tree", async (t) => {
  const p = await peer(t);
  await deploy(p, generation("1"), { id: 1 });
  const second = [...generation("2").slice(0, 3), { path: "new/only-in-v2.txt", content: Buffer.from("v2") }];
  const { error, entries } = await deploy(p, second, { id: 2 });
  t.error(error);
  t.same(await siteOf(p), expected(second), "files of the first version are gone");
  t.same(await readdir(p.root), ["site"]);
  t.ok(entries.some((e) => /now serves the new version/.test(e.message)));
});

t.test("a relative remote_path and many files through the pool", async (t) => {
  const p = await peer(t);
  const files = manyFiles(120, 512);
  const { error, result } = await deploy(p, files, { config: { remote_path: "www/app", connections: 6 } });
  t.error(error);
  t.equal(result?.remotePath, "/www/app");
  t.same(asText(await readTree(path.join(p.root, "www/app"))), expected(files));
  t.equal(p.stats.maxOpen, 6);
});

t.test("a wrong password fails cleanly, logged, without echoing the password", async (t) => {
  const p = await peer(t, { echoPasswordOnFailure: true });
  const wrong = "Wr0ng-Passw0rd-given";
  // The server itself quotes the password in its reply: the deployer must not pass it on.
  const raw = new Client();
  const rawError = await raw.access({ host: p.host, port: p.port, user: p.username, password: wrong }).catch((e: Error) => e);
  raw.close();
  t.match((rawError as Error).message, wrong, "the peer echoes the password");

  const { error, entries } = await deploy(p, generation("1"), { config: { password: wrong } });
  t.type(error, DeployError);
  t.match(error, { code: "auth_failed", retryable: false, message: /FTP login to 127\.0\.0\.1:\d+ as deployer failed: the server rejected the username or password/ });
  t.match(entries.at(-1), { type: "error", metadata: { code: "auth_failed" } });
  t.notMatch(exposedText(entries, error), wrong);
  t.same(await readdir(p.root), []);

  const test = await testFtpConnection(configOf(p, { password: wrong }), { network });
  t.match(test, { ok: false, code: "auth_failed" });
  t.notMatch(test.message, wrong);
});

t.test("a failed upload leaves the previous site intact", async (t) => {
  const p = await peer(t);
  const v1 = generation("1");
  t.error((await deploy(p, v1, { id: 1 })).error);
  p.controls.failWritesAfter = p.stats.stores + 3;
  const { error, entries } = await deploy(p, generation("2"), { id: 2 });
  t.match(error, { code: "permission_denied", message: /upload of .* was refused: .*Disk quota exceeded/ });
  t.same(await siteOf(p), expected(v1), "the live folder still holds version 1");
  t.same(await readdir(p.root), ["site"], "the partial upload was removed");
  t.ok(entries.some((e) => e.type === "warning" && /left unchanged/.test(e.message)));
});

t.test("a retry after a crash between the two renames restores, then completes", async (t) => {
  const p = await peer(t);
  t.error((await deploy(p, generation("1"), { id: 1 })).error);
  // The crash: deployment 7 had moved the live folder aside and died.
  await rename(path.join(p.root, "site"), path.join(p.root, ".site.schemaforge-7.old"));
  await mkdir(path.join(p.root, ".site.schemaforge-7.new", "half"), { recursive: true });
  const v2 = generation("2");
  const state = memoryState();
  const { error, entries } = await deploy(p, v2, { id: 7, state });
  t.error(error);
  t.same(await siteOf(p), expected(v2));
  t.same(await readdir(p.root), ["site"]);
  t.ok(entries.some((e) => /Restored \/site/.test(e.message)));
  t.ok(entries.some((e) => /Removed the unfinished upload/.test(e.message)));

  // A retry after the swap (the job died before recording success) uploads nothing again.
  const stores = p.stats.stores;
  const again = await deploy(p, v2, { id: 7, state });
  t.error(again.error);
  t.equal(p.stats.stores, stores, "no file was uploaded twice");
  t.ok(again.entries.some((e) => /already switched/.test(e.message)));
});

t.test("unreachable host, refused private target, bad paths, cancellation", async (t) => {
  const p = await peer(t);
  const closed = await startFtpPeer();
  const closedPort = closed.port;
  await closed.close();
  const unreachable = await deploy(p, generation("1"), { config: { port: closedPort } });
  t.match(unreachable.error, { code: "unreachable", retryable: true, message: /connection refused/ });

  const capture = captureLog();
  const refused = await deployFtp({ deploymentId: 1, files: generation("1"), config: configOf(p), log: capture.log, network: { allowPrivate: false } }).catch((e: unknown) => e);
  t.match(refused, { code: "network_target_refused", message: /127\.0\.0\.1: a loopback address/ });
  t.equal(p.stats.logins, 0, "the server was never contacted");
  t.equal(capture.entries.at(-1)?.type, "error");

  const traversal = await deploy(p, [{ path: "../escape.txt", content: Buffer.from("x") }]);
  t.match(traversal.error, { code: "invalid_config", message: /Invalid file path/ });
  const injection = await deploy(p, [{ path: "a\r\nDELE /x", content: Buffer.from("x") }]);
  t.match(injection.error, { code: "invalid_config" });

  // One connection, so the abort falls between transfers: ftp-srv keeps the passive listener
  // of an abandoned transfer, with a 30 s timer that would hold this test process open.
  const controller = new AbortController();
  const slow = (async function* () {
    yield* generation("1");
    controller.abort();
    yield { path: "late.txt", content: Buffer.from("late") };
  })();
  const aborted = await deployFtp({ deploymentId: 9, files: slow, config: configOf(p, { connections: 1 }), log: captureLog().log, network, signal: controller.signal }).catch((e: unknown) => e);
  t.match(aborted, { code: "aborted" });
  t.notOk((await readdir(p.root)).includes("site"), "nothing went live");
});

t.test("testConnection reports the remote path", async (t) => {
  const p = await peer(t);
  const before = await testFtpConnection(configOf(p), { network });
  t.match(before, { ok: true, message: /\/site does not exist yet/ });
  await mkdir(path.join(p.root, "site"));
  t.match(await testFtpConnection(configOf(p), { network }), { ok: true, message: /\/site exists/ });
  t.match(await testFtpConnection(configOf(p), { network: { allowPrivate: false } }), { ok: false, code: "network_target_refused" });
  t.match(await testFtpConnection({ ...configOf(p), port: "nope" }, { network }), { ok: false, code: "invalid_config", message: /port/ });
});

t.test("a host name is resolved by the guard and the checked address is dialled", async (t) => {
  const p = await peer(t);
  const files = generation("n");
  const capture = captureLog();
  const result = await deployFtp({
    deploymentId: 3,
    files,
    config: { ...configOf(p), host: "ftp.test" },
    log: capture.log,
    network: { allowPrivate: true, resolver: tableResolver({ "ftp.test": ["127.0.0.1"] }) },
  });
  t.equal(result.files, files.length);
  t.same(await siteOf(p), expected(files));
  const refused = await deployFtp({ deploymentId: 4, files, config: { ...configOf(p), host: "ftp.test" }, log: captureLog().log, network: { allowPrivate: false, resolver: tableResolver({ "ftp.test": ["10.0.0.8"] }) } }).catch((e: unknown) => e);
  t.match(refused, { code: "network_target_refused", message: /^Refused to connect to ftp\.test: it resolves to a private network address\./ });
  t.notMatch((refused as Error).message, /10\.0\.0\.8/, "not what the name resolves to");
});

t.test("through a proxy that delays every chunk (the benchmark's model of a nearby server) the deployment lands whole", async (t) => {
  const p = await peer(t);
  const proxy = await startFtpLatencyProxy({ host: p.host, port: p.port }, 5);
  t.teardown(() => proxy.close());
  const files = generation("1");
  const started = performance.now();
  const capture = captureLog();
  const result = await deployFtp({ deploymentId: 1, files, config: { ...configOf(p), host: proxy.host, port: proxy.port }, log: capture.log, network });
  const elapsed = performance.now() - started;
  t.same(await siteOf(p), expected(files), "every file arrived through rewritten passive replies");
  t.match(result, { files: files.length });
  // Login alone is several round trips of 10 ms; a proxy that forwarded without delay would be far quicker.
  t.ok(elapsed > 50, `the delay applied (${Math.round(elapsed)} ms)`);
});
