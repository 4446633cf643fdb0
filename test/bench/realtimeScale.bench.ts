/**
 * Realtime at scale (issue "Performance, second round": `realtime.sockets_100k`): 100,000
 * WebSocket sockets across 4 web processes on this machine, every socket subscribed to one
 * public channel; EVENTS events published the production way (NOTIFY → each process's LISTEN
 * connection → its sockets). Figures: publish → receive latency over every delivery, p99
 * (target < 1 s), and the 4 web processes' resident memory together (target < 4 GB).
 *
 * One loopback source address has ~28,000 ephemeral ports, so the client processes connect
 * from 127.0.0.2, 127.0.0.3, … in turn. Each process needs a descriptor per socket: the
 * child processes raise their open-files limit as far as the hard limit lets them (see
 * support/benchProcesses.ts and the README). When that limit cannot hold SOCKETS / 4 per web
 * process, the benchmark runs the largest whole-thousand count that fits and says so in the
 * figure's name and note, instead of stalling on refused accepts. `BENCH_SCALE_SOCKETS` runs
 * a smaller count. Events are INTERVAL_MS apart (`BENCH_SCALE_INTERVAL_MS`, default 5 s) so
 * each event's fan-out is measured on its own, not queued behind the previous one.
 */
import type { ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { createPool } from "../../shared/db/pool.ts";
import { publish } from "../../shared/events/publish.ts";
import { benchDatabase, percentile } from "./support/db.ts";
import { ask, nextMessage, procMemory, procOpenFilesLimit, reply, spawnNode, stopChildren } from "./support/benchProcesses.ts";
import { wallClock } from "./support/realtimeClients.ts";
import { limitFigure, report } from "./report.ts";

const ASKED_SOCKETS = Number(process.env.BENCH_SCALE_SOCKETS ?? 100_000);
const WEB_PROCESSES = 4;
const CLIENT_PROCESSES = 4;
/** Descriptors a process keeps for other things than its sockets (database pool, stdio, …). */
const RESERVED_FILES = 500;
const EVENTS = 10;
const INTERVAL_MS = Number(process.env.BENCH_SCALE_INTERVAL_MS ?? 5000);
const CHANNEL = "bench-scale";
const APP_KEY = "test-app-key"; // REALTIME_APP_KEY of testConfig
const MB = 1024 * 1024;

const db = await benchDatabase();
const pool = await createPool(db.url, { maxPoolSize: 2 });
const servers: ChildProcess[] = [];
const clients: ChildProcess[] = [];
try {
  const ports: number[] = [];
  for (let i = 0; i < WEB_PROCESSES; i += 1) {
    const server = spawnNode(new URL("./support/realtimeServer.ts", import.meta.url), { DATABASE_URL: db.url });
    servers.push(server);
    ports.push(
      await new Promise<number>((resolve, reject) => {
        let out = "";
        server.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const match = /^ready (\d+)$/m.exec(out);
          if (match) resolve(Number(match[1]));
        });
        server.once("exit", (code) => reject(new Error(`server process exited with ${code}`)));
      }),
    );
    server.stdout.resume();
  }
  const idleRss = servers.reduce((sum, s) => sum + procMemory(s.pid!).rss, 0);
  // Each web and client process holds its share of sockets, one descriptor each.
  const openFiles = procOpenFilesLimit(servers[0]!.pid!);
  const perProcess = Math.floor((openFiles - RESERVED_FILES) / 1000) * 1000;
  const SOCKETS = Math.min(ASKED_SOCKETS, perProcess * Math.min(WEB_PROCESSES, CLIENT_PROCESSES));
  const capped =
    SOCKETS < ASKED_SOCKETS
      ? `; CAPPED: ${ASKED_SOCKETS.toLocaleString("en")} asked, but the open-files limit here is ${openFiles} per process (the hard limit cannot be raised), so ${SOCKETS.toLocaleString("en")}`
      : "";
  if (capped) process.stderr.write(`realtimeScale${capped}\n`);
  const SOURCE_ADDRESSES = Math.max(1, Math.ceil(SOCKETS / 10_000));
  const urls = ports.map((port) => `ws://127.0.0.1:${port}/app/${APP_KEY}?protocol=7&client=bench&version=1`);
  const localAddresses = Array.from({ length: SOURCE_ADDRESSES }, (_, i) => `127.0.0.${i + 2}`);
  for (let i = 0; i < CLIENT_PROCESSES; i += 1) {
    const client = spawnNode(new URL("./support/realtimeClients.ts", import.meta.url), {});
    clients.push(client);
    await nextMessage(client, reply("ready"));
  }

  const started = performance.now();
  const answers = await Promise.all(
    clients.map((client, i) => {
      const share = Math.floor(SOCKETS / clients.length) + (i < SOCKETS % clients.length ? 1 : 0);
      return ask(client, { type: "open", url: urls, count: share, channel: CHANNEL, localAddresses }, "opened", 900_000);
    }),
  );
  const openS = (performance.now() - started) / 1000;
  const failed = answers.reduce((sum, a) => sum + a.failed, 0);
  if (failed > 0) throw new Error(`${failed} of ${SOCKETS} sockets could not connect and subscribe: ${answers.find((a) => a.error)?.error}`);
  await sleep(2000);

  for (let seq = 0; seq < EVENTS; seq += 1) {
    await publish(pool, { channel: CHANNEL, event: "bench", data: { seq, sent: wallClock() } });
    await sleep(INTERVAL_MS);
  }
  await sleep(2000);
  const samples = await Promise.all(clients.map((client) => ask(client, { type: "collect" }, "samples", 300_000)));
  const deliveries = samples.flatMap((s) => Object.values(s.latencies).flat());
  deliveries.sort((a, b) => a - b);
  const expected = SOCKETS * EVENTS;
  const closed = samples.reduce((sum, s) => sum + s.closed, 0);
  const serverRss = servers.reduce((sum, s) => sum + procMemory(s.pid!).rss, 0);
  const clientRss = clients.reduce((sum, c) => sum + procMemory(c.pid!).rss, 0);
  const late = deliveries.length < expected ? `, ${expected - deliveries.length} MISSING` : "";
  const label = `realtime.sockets_${SOCKETS >= 1000 ? `${SOCKETS / 1000}k` : SOCKETS}`;
  report(`Realtime: ${SOCKETS.toLocaleString("en")} sockets over ${WEB_PROCESSES} web processes, ${EVENTS} events on one channel`, [
    limitFigure(
      `${label}.p99`,
      percentile(deliveries, 99),
      "ms",
      1000,
      null,
      `publish → receive per delivery; ${deliveries.length}/${expected} deliveries${late}, ${closed} sockets closed; p50 ${Math.round(percentile(deliveries, 50))} ms; opened in ${Math.round(openS)} s from ${SOURCE_ADDRESSES} source addresses; events ${INTERVAL_MS} ms apart${capped}`,
    ),
    limitFigure(`${label}.rss`, serverRss / MB, "MB", 4096, null, `the ${WEB_PROCESSES} web processes' VmRSS together (idle ${Math.round(idleRss / MB)} MB); client processes ${Math.round(clientRss / MB)} MB`),
  ]);
} finally {
  await stopChildren([...clients, ...servers]);
  await pool.end();
  await db.drop();
}
