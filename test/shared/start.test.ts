/**
 * `npm start` on a machine without PostgreSQL (issue "Done means"): `bin.ts start` with
 * DATABASE_URL unset starts the embedded server in a fresh data folder, migrates, prints
 * its URL and the development secrets it generated (the first-party OAuth client among
 * them) and serves /api/health (database and queue ok); SIGTERM stops it cleanly, the
 * embedded server included. How long the first start took is reported, not judged (the
 * wait for it is only a guard against a hang). As root, the same holds for a data folder
 * the `postgres` user cannot reach (a checkout in root's home): the cluster is kept outside
 * it, and a later start reuses it and the secrets.
 */
import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readlink, rm, rmdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import t from "tap";
import { alive, postmasterPid, processesNaming, startService } from "../support/startedService.ts";

t.test("bin.ts start without DATABASE_URL serves /api/health and stops cleanly on SIGTERM", async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "sf-start-"));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // As root, the embedded server runs as the `postgres` user; opening the folder lets it
  // keep the cluster in place (the next test covers a folder it cannot reach).
  if (process.getuid?.() === 0) await chmod(dataDir, 0o755);
  const pgDir = path.join(dataDir, "pg");
  const service = await startService(t, dataDir);
  const { url, health, elapsed } = service;
  const output = service.output();

  t.ok(url, `the URL is printed:\n${output.slice(-2000)}`);
  t.match(output, /listening on http:\/\/127\.0\.0\.1:\d+/, "as a readable line");
  const printed = /First-party OAuth client: client_id=(\S+) client_secret=(\S+) \(kept in (\S+)\)/.exec(output);
  t.ok(printed, "the generated first-party client is printed");
  const secrets = JSON.parse(readFileSync(path.join(dataDir, "secrets.json"), "utf8")) as Record<string, string>;
  t.same([secrets.OAUTH_CLIENT_ID, secrets.OAUTH_CLIENT_SECRET, path.join(dataDir, "secrets.json")], printed?.slice(1), "as kept in <DATA_DIR>/secrets.json");
  t.equal(health?.status, 200, `/api/health answers 200 (${JSON.stringify(health?.body)})`);
  t.equal(health?.body.database.ok, true, "database ok");
  t.equal(health?.body.queue.ok, true, "queue ok");
  t.ok(health?.body.queue.workers >= 1, "its worker is beating");
  t.comment(`first start answered /api/health after ${elapsed} ms`);
  t.ok(existsSync(path.join(pgDir, "PG_VERSION")), "the embedded server lives in <DATA_DIR>/pg");
  t.notOk(lstatSync(pgDir).isSymbolicLink(), "itself, not elsewhere through a link");
  const serverPid = await postmasterPid(pgDir);
  t.ok(alive(serverPid), "the embedded server runs");

  t.equal(await service.stop(), 0, "SIGTERM: exits 0");
  t.notOk(alive(serverPid), "the embedded server stopped with it");
  t.notOk(existsSync(path.join(pgDir, "postmaster.pid")), "and shut down cleanly (no postmaster.pid left)");
  t.same(processesNaming(pgDir), [], "no process left for this data folder");
  t.match(service.output(), /"msg":"stopped"/, "the shutdown finished");
});

const notRoot = process.getuid?.() !== 0 && "only meaningful as root: the embedded server then runs as the postgres user, which must reach the data folder";

t.test("as root, a data folder the postgres user cannot reach (a checkout in a mode-700 home) still works", { skip: notRoot }, async (t) => {
  // A fresh mode-700 folder stands for /root: the postgres user cannot pass through it.
  const home = await mkdtemp(path.join(os.tmpdir(), "sf-private-home-"));
  t.equal(statSync(home).mode & 0o777, 0o700, "the home is closed to other users");
  const dataDir = path.join(home, "checkout", ".data");
  const pgDir = path.join(dataDir, "pg");
  t.teardown(async () => {
    const target = await readlink(pgDir).catch(() => undefined);
    await rm(home, { recursive: true, force: true });
    if (target) {
      await rm(path.resolve(dataDir, target), { recursive: true, force: true });
      await rmdir(path.dirname(path.resolve(dataDir, target))).catch(() => {}); // only when no other cluster lives there
    }
  });

  // What a start before this fix left behind: an empty <DATA_DIR>/pg its initdb could not enter.
  await mkdir(pgDir, { recursive: true, mode: 0o700 });

  const first = await startService(t, dataDir);
  t.equal(first.health?.status, 200, `/api/health answers 200 (${JSON.stringify(first.health?.body) ?? first.output().slice(-3000)})`);
  t.equal(first.health?.body.database.ok, true, "database ok");
  t.ok(lstatSync(pgDir, { throwIfNoEntry: false })?.isSymbolicLink(), "<DATA_DIR>/pg is a link");
  const clusterDir = path.resolve(dataDir, await readlink(pgDir));
  t.notOk(clusterDir.startsWith(`${home}${path.sep}`), `to a folder outside the closed home (${clusterDir})`);
  t.ok(existsSync(path.join(clusterDir, "PG_VERSION")), "which holds the cluster");
  t.match(first.output(), /cannot reach [^"]*\/pg \(a folder above it is closed to other users\), so the cluster lives in /, "and the log says where and why");
  const serverPid = await postmasterPid(clusterDir);
  t.equal(await first.stop(), 0, "SIGTERM: exits 0");
  t.notOk(alive(serverPid), "the embedded server stopped with it");

  const second = await startService(t, dataDir);
  t.equal(second.health?.status, 200, `a second start serves /api/health too (${JSON.stringify(second.health?.body) ?? second.output().slice(-3000)})`);
  t.equal(path.resolve(dataDir, await readlink(pgDir)), clusterDir, "through the same link");
  t.notMatch(second.output(), /applied \d+ migration/, "on the same cluster: nothing to migrate again");
  t.notMatch(second.output(), /Generated|First-party OAuth client/, "with the secrets of the first start: nothing generated or printed again");
  t.match(second.output(), new RegExp(`is a link: the cluster lives in ${clusterDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`), "and says where it is");
  t.equal(await second.stop(), 0, "SIGTERM: exits 0", { output: second.output().slice(-3000) });

  // Deleting the data folder resets the database, as it does when the cluster lives in it.
  await rm(dataDir, { recursive: true, force: true });
  const third = await startService(t, dataDir);
  t.equal(third.health?.status, 200, `after deleting the data folder, a start serves /api/health (${JSON.stringify(third.health?.body) ?? third.output().slice(-3000)})`);
  t.equal(path.resolve(dataDir, await readlink(pgDir)), clusterDir, "from the same place outside");
  t.match(third.output(), /applied \d+ migration/, "on a new, empty cluster");
  t.equal(await third.stop(), 0, "SIGTERM: exits 0", { output: third.output().slice(-3000) });
});
