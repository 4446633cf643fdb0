/**
 * An embedded server's port is a preference (the service asks for 54329): it is checked free
 * and then bound by the server a moment later, and another process can take it in between.
 * Two servers started at once with the same preferred port both come up, one on it and one on
 * another, instead of the second failing with "Address already in use".
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import t from "tap";
import { freePort, startEmbeddedPostgres } from "../../shared/db/embedded.ts";

t.test("two servers started at once with the same preferred port both come up", async (t) => {
  const base = await mkdtemp(path.join(os.tmpdir(), "sf-embedded-port-"));
  const dirs = [path.join(base, "a"), path.join(base, "b")];
  // Created first, so that the two starts below go straight to choosing a port (no initdb
  // between one's check and the other's) and both find the preferred one free.
  for (const dataDir of dirs) await (await startEmbeddedPostgres({ dataDir, settings: { fsync: "off" } })).stop();
  const preferred = await freePort(0);
  const starts = await Promise.allSettled(dirs.map((dataDir) => startEmbeddedPostgres({ dataDir, port: preferred, persistent: false, settings: { fsync: "off" } })));
  const servers = starts.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  // Registered before any assertion, so a server that did start is stopped whatever fails.
  t.teardown(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await rm(base, { recursive: true, force: true });
  });
  t.same(starts.flatMap((s) => (s.status === "rejected" ? [String(s.reason).split("\n")[0]] : [])), [], "both started");
  t.ok(servers.some((s) => s.port === preferred), `one has the preferred port ${preferred}`);
  t.not(servers[0]!.port, servers[1]!.port, "the other another one");
  for (const server of servers) {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    const { rows } = await client.query<{ one: number }>("select 1 as one");
    await client.end();
    t.equal(rows[0]?.one, 1, `the server on ${server.port} answers`);
  }
});
