/**
 * Graceful shutdown of a web process on SIGTERM (api/server.ts): it stops accepting
 * connections at once, lets the requests in flight finish, tells WebSocket clients to
 * reconnect elsewhere (close code 4200) and exits 0 once they are done, without waiting for
 * SHUTDOWN_TIMEOUT_MS; a request that outlives that timeout is cut off rather than holding
 * the process. The timeouts are chosen far from the requests' lengths (60 s against a 2.5 s
 * request, 1 s against a 60 s one), so a busy machine cannot blur the two outcomes.
 */
import http from "node:http";
import net from "node:net";
import t, { type Test } from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { freshDatabase, type TestDatabase } from "../support/db.ts";
import { spawnReady, type Child } from "../support/processes.ts";
import { rawSocket } from "../support/pusher.ts";
import { SLOW_QUERY_TAG } from "../support/testRoutes.ts";

const REALTIME_KEY = "test-app-key";

interface Outcome {
  status?: number;
  body?: string;
  error?: string;
  /** When the response (or the failure) arrived. */
  at: number;
}

/** GET `path` on a connection of its own; resolves with the answer or the connection's failure. */
function get(port: number, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, body, at: Date.now() }));
      res.on("error", (error) => resolve({ error: error.message, at: Date.now() }));
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, at: Date.now() }));
  });
}

/** Whether a new TCP connection to `port` is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

/** Waits until the slow route's query runs in the database, i.e. the request is in flight. */
async function slowQueryRunning(db: TestDatabase): Promise<boolean> {
  for (let i = 0; i < 200; i += 1) {
    const running = await db.pool.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from pg_stat_activity
      where datname = current_database() and state = 'active' and query like ${`%${SLOW_QUERY_TAG}%`} and pid <> pg_backend_pid()`);
    if (running > 0) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

async function startWebProcess(t: Test, db: TestDatabase, shutdownTimeoutMs: number): Promise<{ child: Child; port: number; exited: Promise<{ code: number | null; at: number }> }> {
  const child = await spawnReady(t, "test/support/webProcess.ts", { DATABASE_URL: db.url, SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) });
  const port = Number(/^ready (\d+)/m.exec(child.output())![1]);
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.process.once("exit", (code) => resolve({ code, at: Date.now() })));
  return { child, port, exited };
}

t.test("SIGTERM: in-flight requests finish, new connections are refused, sockets are told to reconnect, exit 0 without waiting for the timeout", async (t) => {
  const db = await freshDatabase(t);
  const shutdownTimeoutMs = 60_000;
  const { child, port, exited } = await startWebProcess(t, db, shutdownTimeoutMs);
  const base = `http://127.0.0.1:${port}`;

  const socket = await rawSocket(t, base, REALTIME_KEY);
  await socket.waitFor("pusher:connection_established");
  t.equal((await get(port, "/api/health")).status, 200, "serving");

  const slowMs = 2500;
  const slow = get(port, `/api/test/slow?ms=${slowMs}`);
  t.ok(await slowQueryRunning(db), "the slow request is in flight");
  const signalledAt = Date.now();
  child.process.kill("SIGTERM");

  let refusedAt: number | undefined;
  for (let i = 0; i < 100 && refusedAt === undefined; i += 1) {
    if (await refused(port)) refusedAt = Date.now();
    else await new Promise((r) => setTimeout(r, 20));
  }
  t.ok(refusedAt !== undefined, "new connections are refused");
  const closed = await socket.closed;
  t.equal(closed.code, 4200, "WebSocket clients get the reconnect-now close code");

  const answer = await slow;
  t.equal(answer.status, 200, `the in-flight request completes (${answer.error ?? answer.body})`);
  t.same(JSON.parse(answer.body ?? "null"), { slept_ms: slowMs });
  t.ok(refusedAt! < answer.at, "connections were refused while the request was still running");

  const exit = await exited;
  t.equal(exit.code, 0, "exits 0");
  t.ok(exit.at >= answer.at, "after the request finished");
  t.ok(exit.at - signalledAt < shutdownTimeoutMs, `once drained, not at SHUTDOWN_TIMEOUT_MS (${exit.at - signalledAt} ms after SIGTERM)`);
});

t.test("SIGTERM: a request outliving SHUTDOWN_TIMEOUT_MS is cut off and the process still exits 0", async (t) => {
  const db = await freshDatabase(t);
  const shutdownTimeoutMs = 1000;
  const { child, port, exited } = await startWebProcess(t, db, shutdownTimeoutMs);
  const requestMs = 60_000;
  const sentAt = Date.now();
  const slow = get(port, `/api/test/slow?ms=${requestMs}`);
  t.ok(await slowQueryRunning(db), "the slow request is in flight");
  const signalledAt = Date.now();
  child.process.kill("SIGTERM");
  const answer = await slow;
  t.ok(answer.error, `the request is cut off (${answer.error ?? answer.status})`);
  const exit = await exited;
  t.equal(exit.code, 0, "exits 0");
  t.ok(answer.at - signalledAt >= shutdownTimeoutMs - 50, "not before the timeout");
  t.ok(exit.at - sentAt < requestMs, `without waiting for the request (exited ${exit.at - signalledAt} ms after SIGTERM)`);
});
