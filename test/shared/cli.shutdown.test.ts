/**
 * Shutdown of the real `web` command (bin.ts web, production settings) is bounded by
 * SHUTDOWN_TIMEOUT_MS plus a little: a request cut off at the timeout whose query still
 * runs does not hold the process while the database pool closes (the query's backend is
 * terminated, so it does not keep running, or holding locks, for a process that is gone),
 * and neither does a WebSocket client that never answers the closing handshake.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import net from "node:net";
import pg from "pg";
import t, { type Test } from "tap";
import { freePort } from "../../shared/db/embedded.ts";
import { freshDatabase, type TestDatabase } from "../support/db.ts";

const bin = new URL("../../shared/cli/bin.ts", import.meta.url).pathname;
const SHUTDOWN_TIMEOUT_MS = 1000;
const REALTIME_KEY = "prod-app-key";

interface Web {
  port: number;
  output: () => string;
  /** Sends SIGTERM; resolves with the exit code and how long after the signal it came. */
  terminate: () => Promise<{ code: number | null; afterMs: number }>;
}

/** Runs `bin.ts web` with production settings on `db` until it listens. */
async function startWebCommand(t: Test, db: TestDatabase): Promise<Web> {
  const port = await freePort();
  const child = spawn(process.execPath, [bin, "web"], {
    env: {
      PATH: process.env.PATH!,
      NODE_ENV: "production",
      METRICS_TOKEN: "metrics-token-0123456789",
      DATABASE_URL: db.url,
      DATA_DIR: t.testdir(),
      HOST: "127.0.0.1",
      PORT: String(port),
      APP_URL: `http://127.0.0.1:${port}`,
      APP_KEY: "5f2b9c0e8d7a41f3b6e2c9d8a7f01e4c3b2a19087f6e5d4c3b2a1908f7e6d5c4",
      REALTIME_APP_KEY: REALTIME_KEY,
      REALTIME_APP_SECRET: "prod-app-secret-0123456789",
      OAUTH_CLIENT_ID: "first-party",
      OAUTH_CLIENT_SECRET: "first-party-secret-0123456789",
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once("exit", (code) => resolve({ code, at: Date.now() })));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`web not listening after 30 s:\n${output}`)), 30_000);
    child.stdout.on("data", () => /listening on/.test(output) && (clearTimeout(timer), resolve()));
    child.once("exit", (code) => (clearTimeout(timer), reject(new Error(`web exited (${code}):\n${output}`))));
  });
  return {
    port,
    output: () => output,
    terminate: async () => {
      const signalledAt = Date.now();
      child.kill("SIGTERM");
      const exit = await exited;
      return { code: exit.code, afterMs: exit.at - signalledAt };
    },
  };
}

t.test("SIGTERM during a request whose query outlives SHUTDOWN_TIMEOUT_MS: the process exits soon after the timeout and the query is cancelled", async (t) => {
  const db = await freshDatabase(t);
  const web = await startWebCommand(t, db);

  // The slow request: /api/health reads worker_processes, which this test holds locked, so
  // the request's query waits in the database for as long as the test wants.
  const locker = new pg.Client({ connectionString: db.url });
  await locker.connect();
  t.teardown(() => locker.end());
  await locker.query("begin");
  await locker.query("lock table worker_processes in access exclusive mode");
  const answer = new Promise<{ status?: number; error?: string }>((resolve) => {
    const req = http.get({ host: "127.0.0.1", port: web.port, path: "/api/health", agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode }));
      res.on("error", (error) => resolve({ error: error.message }));
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
  });
  const waitingQueries = async () =>
    (
      await locker.query<{ pid: number; application_name: string }>(
        "select pid, application_name from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()",
      )
    ).rows;
  let waiting: { pid: number; application_name: string }[] = [];
  for (let i = 0; i < 200 && waiting.length === 0; i += 1) {
    waiting = await waitingQueries();
    if (waiting.length === 0) await new Promise((r) => setTimeout(r, 25));
  }
  t.equal(waiting.length, 1, "the request's query waits in the database");
  t.match(waiting[0]?.application_name, /^schemaforge-web-[0-9a-f]{8}$/, "on a pool connection named for its process");

  const exit = await web.terminate();
  const cut = await answer;
  t.ok(cut.error, `the request was cut off (${cut.error ?? cut.status})`);
  t.equal(exit.code, 0, `exits 0:\n${web.output().slice(-3000)}`);
  // That it exited because the query was cut, not when the query ended, is what the log says.
  t.comment(`exited ${exit.afterMs} ms after SIGTERM (timeout ${SHUTDOWN_TIMEOUT_MS} ms)`);
  t.match(web.output(), /"terminated":1,.*their backends were terminated/, "saying it cancelled the query");
  t.match(web.output(), /"msg":"stopped"/, "the shutdown finished");
  t.same(await waitingQueries(), [], "the query no longer runs in the database");
  await locker.query("rollback");
});

t.test("SIGTERM with a WebSocket client that never answers the closing handshake: the process still exits soon after the timeout", async (t) => {
  const db = await freshDatabase(t);
  const web = await startWebCommand(t, db);
  const socket = net.connect(web.port, "127.0.0.1");
  t.teardown(() => socket.destroy());
  let received = "";
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
      if (received.includes("pusher:connection_established")) resolve();
    });
    socket.write(
      `GET /app/${REALTIME_KEY}?protocol=7&client=js&version=8.4.0 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
  t.match(received, /^HTTP\/1\.1 101 /, "the WebSocket is open (and this client will stay silent)");

  const exit = await web.terminate();
  t.equal(exit.code, 0, `exits 0:\n${web.output().slice(-3000)}`);
  t.match(web.output(), /"msg":"stopped"/, "the shutdown finished");
  // Left to itself, ws waits 30 s for each closing handshake; the shutdown deadline cuts the
  // socket first. Only that 30 s wait is ruled out here, a ceiling no busy machine reaches.
  t.ok(exit.afterMs < 30_000, `the silent client did not hold the exit for ws's 30 s wait (${exit.afterMs} ms)`);
});
