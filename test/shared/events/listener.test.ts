/**
 * The LISTEN connection's reconnect callbacks, against a real PostgreSQL whose backend for the
 * listener is ended with pg_terminate_backend: each callback runs on its own, so one that
 * throws is logged and the ones after it still run, on the one connection that came back.
 */
import pg from "pg";
import t from "tap";
import { PgListener, type ListenGap } from "../../../shared/events/listener.ts";
import { createLogger } from "../../../shared/logger.ts";
import { emptyDatabase } from "../../support/db.ts";
import { until } from "../../support/wait.ts";

/** A guard against hanging only: the reconnect comes within a second. */
const timeoutMs = 20_000;

t.test("a reconnect callback that throws is logged, and the callbacks after it still run", async (t) => {
  const url = await emptyDatabase(t);
  const lines: string[] = [];
  const listener = new PgListener(url, createLogger("trace", undefined, { write: (line: string) => void lines.push(line) }));
  const payloads: string[] = [];
  listener.subscribe("listener_test", (payload) => payloads.push(payload));
  await listener.start();
  t.teardown(() => listener.stop());
  const ran: string[] = [];
  const gaps: ListenGap[] = [];
  listener.onReconnect((gap) => {
    ran.push("first");
    gaps.push(gap);
  });
  listener.onReconnect(() => {
    ran.push("throws");
    throw new Error("a bad callback");
  });
  listener.onReconnect(() => ran.push("last"));

  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  t.teardown(() => admin.end());
  const listeners = async () =>
    (await admin.query<{ pid: number }>("select pid from pg_stat_activity where application_name = 'schemaforge-listener' and datname = current_database()")).rows;
  const [before] = await listeners();
  const cutAt = Date.now();
  await admin.query("select pg_terminate_backend($1)", [before!.pid]);
  await until(() => ran.includes("last"), { message: "the callback after the one that throws", timeoutMs });
  const backAt = Date.now();
  t.same(ran, ["first", "throws", "last"], "each callback once, in order");
  const [gap] = gaps;
  t.ok(
    gap!.since.getTime() >= cutAt && gap!.since.getTime() < gap!.until.getTime() && gap!.until.getTime() <= backAt,
    `the callbacks are given the time the connection was away (${gap!.since.toISOString()} → ${gap!.until.toISOString()}), inside the cut and the return`,
  );

  const failures = lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message: string } }).filter((entry) => entry.level >= 50);
  t.match(failures, [{ msg: "reconnect callback failed", err: { message: "a bad callback" } }], "the throw is logged as an error, once");
  t.notOk(
    lines.some((line) => line.includes("LISTEN reconnect failed")),
    "the connect itself did not fail over it (it would connect again, and run the callbacks again)",
  );
  const after = await listeners();
  t.equal(after.length, 1, "one LISTEN connection");
  t.not(after[0]!.pid, before!.pid, "a new one");
  await admin.query("select pg_notify('listener_test', 'after')");
  await until(() => payloads.length > 0, { message: "the notification after the reconnect", timeoutMs });
  t.same(payloads, ["after"]);
  t.same(ran, ["first", "throws", "last"], "no second reconnect");
});

t.test("shared advisory locks held on the LISTEN connection: holds are counted, the lock goes with the last, and comes back with a new connection", async (t) => {
  const url = await emptyDatabase(t);
  const listener = new PgListener(url, createLogger("silent"));
  await listener.start();
  t.teardown(() => listener.stop());
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  t.teardown(() => admin.end());
  const [key, other] = [7_320_151_901n, 7_320_151_902n];
  /** The sessions holding `k` shared. */
  const holders = async (k: bigint) =>
    (
      await admin.query<{ pid: number }>(
        `select pid from pg_locks where locktype = 'advisory' and granted and mode = 'ShareLock' and objsubid = 1
           and database = (select oid from pg_database where datname = current_database())
           and ((classid::bigint << 32) | objid::bigint) = $1::bigint`,
        [k.toString()],
      )
    ).rows.map((r) => r.pid);

  await listener.holdShared(key);
  await listener.holdShared(key);
  const [holder] = await holders(key);
  t.ok(holder, "held once it resolves");
  const listening = (await admin.query<{ pid: number }>("select pid from pg_stat_activity where application_name = 'schemaforge-listener' and datname = current_database()")).rows;
  t.same(listening.map((r) => r.pid), [holder], "by the LISTEN connection");

  listener.releaseShared(key);
  // Statements on the connection run in order: once a later one is done, an unlock sent before it would be too.
  await listener.holdShared(other);
  t.same(await holders(key), [holder], "still held after one of two holds is given up");
  listener.releaseShared(key);
  await until(async () => (await holders(key)).length === 0, { message: "the lock to go with the last hold", timeoutMs });

  let onReconnect: Promise<number[]> | undefined;
  listener.onReconnect(() => (onReconnect ??= holders(other)));
  await admin.query("select pg_terminate_backend($1)", [holder]);
  await until(() => onReconnect, { message: "the reconnect", timeoutMs });
  const again = await onReconnect!;
  t.equal(again.length, 1, "the lock still held is taken again before the reconnect callbacks run");
  t.not(again[0], holder, "on the new connection");
  t.same(await holders(key), [], "the lock given up before is not");
});
