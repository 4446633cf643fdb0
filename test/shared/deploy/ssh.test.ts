import { readdir, readlink } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { DeployError } from "../../../shared/deploy/errors.ts";
import { deploySsh, testSshConnection } from "../../../shared/deploy/ssh/sshDeploy.ts";
import { generateKeyPair, startSshPeer } from "../../support/peers/sshPeer.ts";
import { tableResolver } from "../../support/peers/resolvers.ts";
import { captureLog, expected, exposedText, generation } from "./fixtures.ts";
import { configOf, deploy, extractCommand, extractions, live, network, peer } from "./sshFixtures.ts";

t.test("password login: the files go as one archive extracted into a release, current switched to it", async (t) => {
  const p = await peer(t);
  const files = generation("1");
  const { result, error, entries } = await deploy(p, files);
  t.error(error);
  t.same(await live(p), expected(files), "the files on the server equal the generation's");
  t.equal(await readlink(path.join(p.home, "site/current")), "releases/1", "a relative link");
  t.match(result, {
    releasePath: path.join(p.home, "site/releases/1"),
    currentPath: path.join(p.home, "site/current"),
    hostKeyFingerprint: p.hostKeyFingerprint,
    hostKeyFirstSeen: true,
    transfer: "archive",
    switchMethod: "exec-mv",
    files: files.length,
  });
  t.ok(entries.some((e) => e.message.includes(p.hostKeyFingerprint) && /first connection/.test(e.message)));
  t.ok(entries.some((e) => /^Transfer: one tar\.gz archive over SFTP, extracted on the server \(the server has \/.*tar\)/.test(e.message)));
  t.ok(entries.some((e) => e.message === `Extracted ${files.length} files into ${p.home}/site/releases/1; the archive was removed.`));
  t.equal(entries.at(-1)?.type, "success");
  t.notMatch(exposedText(entries), p.password);
  t.same(p.stats.execs, [
    "command -v tar",
    extractCommand(`${p.home}/site/releases/1`, `${p.home}/site/releases/.1.tar.gz`),
    `mv -Tf -- '${p.home}/site/.current.1.next' '${p.home}/site/current'`,
  ]);
  t.same(await readdir(path.join(p.home, "site/releases")), ["1"], "the archive was removed");
});

t.test("private-key login; a wrong key or password fails cleanly", async (t) => {
  const user = generateKeyPair();
  const p = await peer(t, { authorizedKeys: [user.public] });
  const files = generation("k");
  const ok = await deploy(p, files, { config: { auth_method: "key", password: null, private_key: user.private } });
  t.error(ok.error);
  t.same(await live(p), expected(files));
  t.notMatch(exposedText(ok.entries), user.private.split("\n")[1]!);

  const stranger = generateKeyPair();
  const wrongKey = await deploy(p, files, { id: 2, config: { auth_method: "key", password: null, private_key: stranger.private } });
  t.match(wrongKey.error, { code: "auth_failed", message: /rejected the private key/ });
  t.notMatch(exposedText(wrongKey.entries, wrongKey.error), stranger.private.split("\n")[1]!);

  const wrongPassword = "not-the-Passw0rd";
  const denied = await deploy(p, files, { id: 3, config: { password: wrongPassword } });
  t.type(denied.error, DeployError);
  t.match(denied.error, { code: "auth_failed", retryable: false, message: /SSH login to 127\.0\.0\.1:\d+ as deployer failed: the server rejected the password/ });
  t.match(denied.entries.at(-1), { type: "error", metadata: { code: "auth_failed" } });
  t.notMatch(exposedText(denied.entries, denied.error), wrongPassword);
  t.ok(p.stats.authFailures >= 2);

  const garbage = await deploy(p, files, { id: 4, config: { auth_method: "key", password: null, private_key: "-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key\n-----END OPENSSH PRIVATE KEY-----" } });
  t.match(garbage.error, { code: "invalid_config", message: /private key could not be read/ });
  t.equal(await readlink(path.join(p.home, "site/current")), "releases/1", "failed runs changed nothing");
});

t.test("host key pinning: a matching key passes, a changed key is refused before login", async (t) => {
  const first = await startSshPeer();
  const pinned = first.hostKeyFingerprint;
  t.error((await deploy(first, generation("1"), { config: { host_key_fingerprint: pinned } })).error);
  const home = first.home;
  const port = first.port;
  await first.close();

  // Same address, new host key: a server was replaced or someone is in the middle.
  const impostor = await peer(t, { port, hostKey: generateKeyPair() });
  const { error, entries } = await deploy(impostor, generation("2"), { id: 2, config: { host_key_fingerprint: pinned } });
  t.match(error, { code: "host_key_mismatch", retryable: false });
  t.match((error as Error).message, `expected ${pinned}, got ${impostor.hostKeyFingerprint}`);
  t.match(entries.at(-1), { type: "error", metadata: { expected_fingerprint: pinned, presented_fingerprint: impostor.hostKeyFingerprint } });
  t.equal(impostor.stats.authFailures + impostor.stats.logins, 0, "no credential was offered to the changed host");
  t.notOk(home === impostor.home);

  const test = await testSshConnection(configOf(impostor, { host_key_fingerprint: pinned }), { network });
  t.match(test, { ok: false, code: "host_key_mismatch" });
  const fresh = await testSshConnection(configOf(impostor), { network });
  t.match(fresh, { ok: true, hostKeyFingerprint: impostor.hostKeyFingerprint });
});

t.test("later deployments switch current and prune old releases", async (t) => {
  const p = await peer(t);
  for (const id of [1, 2, 3]) t.error((await deploy(p, generation(String(id)), { id, config: { keep_releases: 2 } })).error);
  t.same(await live(p), expected(generation("3")));
  t.same((await readdir(path.join(p.home, "site/releases"))).sort(), ["2", "3"], "the oldest release was pruned");
  t.match(p.stats.execs.at(-1), /^rm -rf -- '.*\/site\/releases\/1'$/);
  t.same((await readdir(path.join(p.home, "site"))).sort(), ["current", "releases"], "no temporary link is left");
});

t.test("an SFTP-only account: switch by renames, prune over SFTP", async (t) => {
  const p = await peer(t, { allowExec: false });
  t.error((await deploy(p, generation("1"), { id: 1, config: { keep_releases: 1 } })).error);
  const { result, error, entries } = await deploy(p, generation("2"), { id: 2, config: { keep_releases: 1 } });
  t.error(error);
  t.equal(result?.transfer, "sftp");
  t.equal(result?.switchMethod, "sftp-rename");
  t.ok(entries.some((e) => e.type === "warning" && /briefly absent/.test(e.message)));
  t.same(await live(p), expected(generation("2")));
  t.same(await readdir(path.join(p.home, "site/releases")), ["2"]);
  t.same(p.stats.execs, [], "no command ran");
});

t.test("shell metacharacters in remote_path are quoted, never run", async (t) => {
  const p = await peer(t);
  const nasty = `site $(touch pwned1) \`touch pwned2\`; touch pwned3 'q' "d" \\`;
  for (const id of [1, 2]) {
    const { result, error } = await deploy(p, generation(String(id)), { id, config: { remote_path: nasty, keep_releases: 1 } });
    t.error(error);
    t.equal(result?.transfer, "archive");
  }
  t.equal(extractions(p).length, 2);
  t.same(await live(p, nasty), expected(generation("2")));
  t.same(await readdir(p.home), [nasty], "no command injected by the path ran");
  t.same(await readdir(path.join(p.home, nasty, "releases")), ["2"], "rm -rf removed exactly the quoted release, and both archives are gone");
});

t.test("private targets are refused unless allowed", async (t) => {
  const p = await peer(t);
  const capture = captureLog();
  const refused = await deploySsh({ deploymentId: 1, files: generation("1"), config: configOf(p), log: capture.log, network: { allowPrivate: false } }).catch((e: unknown) => e);
  t.match(refused, { code: "network_target_refused" });
  t.equal(p.stats.logins + p.stats.authFailures, 0);
  t.match(await testSshConnection(configOf(p, { host: "169.254.169.254" }), { network }), { ok: false, code: "network_target_refused" });
});

t.test("a host name is resolved by the guard and the checked address is dialled", async (t) => {
  const p = await peer(t);
  const files = generation("n");
  const result = await deploySsh({
    deploymentId: 3,
    files,
    config: configOf(p, { host: "ssh.test" }),
    log: captureLog().log,
    network: { allowPrivate: true, resolver: tableResolver({ "ssh.test": ["127.0.0.1"] }) },
  });
  t.equal(result.files, files.length);
  t.same(await live(p), expected(files));
  const refused = await deploySsh({ deploymentId: 4, files, config: configOf(p, { host: "ssh.test" }), log: captureLog().log, network: { allowPrivate: false, resolver: tableResolver({ "ssh.test": ["::ffff:127.0.0.1"] }) } }).catch(
    (e: unknown) => e,
  );
  t.match(refused, { code: "network_target_refused", message: /ssh\.test: it resolves to a loopback address/ });
  t.notMatch((refused as Error).message, /127\.0\.0\.1|ffff/, "not what the name resolves to");
  t.equal(p.stats.logins, 1, "only the allowed deployment reached the peer");
});
