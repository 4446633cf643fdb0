/**
 * Soak benchmark: the service as deployed (one `web` and one `worker` process of the CLI, in
 * production mode, configured through the environment) under minutes of a mixed load of
 * virtual users (support/soakMix.ts: projects, schemas, templates and generations, lists,
 * kanban boards watched over pusher-js, message threads, store search, project deletes),
 * sampled every 5 s (one line each on stderr) for what a team running it would page on.
 * The load runs in two phases, the first third of SOAK_SECONDS and the rest, each followed by
 * a rest: the jobs drain, the sockets close, and every V8 heap of both processes (main thread
 * and worker threads) is collected in full through the inspector before what they hold is
 * read. Under load a process's RSS is a saw-tooth of 100 MB and more, so two samples taken
 * under load measure where in it they fell, not what the process kept. Figures:
 * - server errors: 5xx answers and requests without an answer (target 0); other statuses the
 *   mix did not expect (target 0: it sends only valid input); error lines the two processes
 *   logged (target 0);
 * - RSS growth of the web and the worker process between the two rests (target < 32 MB each),
 *   and the growth of their heaps (main and worker threads; target < 16 MB each). The first
 *   third is warm-up (V8 compiles, pools fill, caches load), opened by a burst of concurrent
 *   parses and generations: the template sandbox, SQL parse and deflate thread pools grow only
 *   when all their threads are busy at once, and a thread started late adds 20–32 MB (its heap,
 *   QuickJS's WebAssembly memory) that is bounded by the pool's size, not a leak; the note
 *   says how many threads each process had at the two rests. After the warm-up a process
 *   doing the same work again should hold its size. 32 MB is ~15 % of what a process holds at
 *   rest, above the 10–20 MB allocator fragmentation and code caches move it, and what a leak
 *   of ~10 KB per request reaches in a 2-minute run (~3,000 requests between the rests at
 *   ~37 requests/s), ~4 KB in a 5-minute one; the heaps' 16 MB half that;
 * - database connections: the median of the samples under load in the last third against the
 *   second (after the warm-up; target: not more). A median, since the pools open and close a
 *   connection now and then (graphile-worker's own of up to six most), so the most seen moves
 *   by one between runs, while a leak moves the whole third;
 * - jobs still queued or running after the load and a drain of up to 30 s (target 0), and jobs
 *   that failed (target 0);
 * - realtime events received on the boards' channels against the creates and moves made
 *   (target all), and WebSocket connections the web process still counts after every client
 *   disconnected (target 0);
 * - p99 latency of the whole mix (a generous limit: a schema parse and a generation wait for
 *   their jobs), and requests per second (context);
 * - exit codes of the two processes on SIGTERM (target: both 0).
 * Env: SOAK_SECONDS (default 120), SOAK_USERS (virtual users, default 6), SOAK_THINK_MS
 * (pause between a user's requests, default 150). Tokens come from `POST /api/auth/login` and
 * live an hour, so a run is capped below that.
 */
import pg from "pg";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { createPool } from "../../shared/db/pool.ts";
import { buildUser } from "../support/factories.ts";
import { catalogue } from "../support/storeCatalogue.ts";
import { seedCatalogue } from "../support/storeFactories.ts";
import { procMemory } from "./support/benchProcesses.ts";
import { benchDatabase, percentile } from "./support/db.ts";
import { collectedMemory, procThreads, startService, type CollectedMemory } from "./support/serviceProcesses.ts";
import { newTally, runVirtualUser, warmUpBurst } from "./support/soakMix.ts";
import { floorFigure, limitFigure, ratioFigure, report, type Figure } from "./report.ts";

const SECONDS = Math.min(3000, Number(process.env.SOAK_SECONDS ?? 120));
const USERS = Number(process.env.SOAK_USERS ?? 6);
const THINK_MS = Number(process.env.SOAK_THINK_MS ?? 150);
const SAMPLE_MS = 5000;
const DRAIN_MS = 30_000;
const REST_MS = 5000;
const RSS_GROWTH_LIMIT_MB = 32;
const HEAP_GROWTH_LIMIT_MB = 16;
const MB = 1024 * 1024;

interface Sample {
  t: number;
  /** Whether the users were at work or the load paused (`rest`). */
  phase: "load" | "rest";
  webRss: number;
  webThreads: number;
  workerThreads: number;
  workerRss: number;
  webHeap: number | null;
  connections: number;
  webConnections: number;
  workerConnections: number;
  /** The LISTEN connections of both processes. */
  listenConnections: number;
  queued: number;
  running: number;
  sockets: number | null;
  requests: number;
  serverErrors: number;
}

const db = await benchDatabase();
const password = "soak password 123";
const emails: string[] = [];
{
  const pool = await createPool(db.url);
  const passwordHash = await hashPassword(password);
  for (let i = 0; i < USERS; i += 1) emails.push((await buildUser(pool, { passwordHash })).email);
  const seller = await buildUser(pool);
  await seedCatalogue(pool, seller.id, catalogue(2000));
  await pool.end();
}

// The mix sends ~10 requests per user per second at most; the default budget (1,000 an hour)
// is for people, not for a load generator, so it is raised as an operator would for one.
const service = await startService(db.url, { RATE_LIMIT_USER_PER_HOUR: "10000000" });
const monitor = new pg.Client({ connectionString: db.url, application_name: "soak-monitor" });
let stopped = false;
try {
  await monitor.connect();
  const tokens = await Promise.all(
    emails.map(async (email) => {
      const res = await fetch(`${service.url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) });
      if (res.status !== 200) throw new Error(`login of ${email}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { access_token: string }).access_token;
    }),
  );

  const tally = newTally();
  const samples: Sample[] = [];
  const started = Date.now();
  let phase: Sample["phase"] = "load";

  const sample = async (): Promise<Sample> => {
    const { rows } = await monitor.query<{ connections: number; web: number; worker: number; listen: number; queued: number; running: number }>(`
      select (select count(*)::int from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()) as connections,
        (select count(*)::int from pg_stat_activity where datname = current_database() and application_name like 'schemaforge-web%') as web,
        (select count(*)::int from pg_stat_activity where datname = current_database() and application_name like 'schemaforge-worker%') as worker,
        (select count(*)::int from pg_stat_activity where datname = current_database() and application_name = 'schemaforge-listener') as listen,
        (select count(*)::int from jobs where status = 'queued') as queued,
        (select count(*)::int from jobs where status = 'running') as running`);
    const row = rows[0]!;
    const health = (await fetch(`${service.url}/api/health`).then((r) => r.json()).catch(() => null)) as { realtime?: { connections: number } } | null;
    const metrics = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${service.metricsToken}` } })
      .then((r) => r.text())
      .catch(() => "");
    const heap = /^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?)/m.exec(metrics);
    return {
      t: (Date.now() - started) / 1000,
      phase,
      webRss: procMemory(service.web.pid!).rss,
      webThreads: procThreads(service.web.pid!),
      workerThreads: procThreads(service.worker.pid!),
      workerRss: procMemory(service.worker.pid!).rss,
      webHeap: heap ? Number(heap[1]) : null,
      connections: row.connections,
      webConnections: row.web,
      workerConnections: row.worker,
      listenConnections: row.listen,
      queued: row.queued,
      running: row.running,
      sockets: health?.realtime?.connections ?? null,
      requests: tally.requests,
      serverErrors: tally.serverErrors,
    };
  };
  let printed: Sample | undefined;
  const print = (s: Sample) => {
    const rate = printed ? (s.requests - printed.requests) / Math.max(0.1, s.t - printed.t) : 0;
    printed = s;
    process.stderr.write(
      `soak t=${s.t.toFixed(0)}s ${s.phase} web ${(s.webRss / MB).toFixed(1)} MB (heap ${s.webHeap === null ? "?" : (s.webHeap / MB).toFixed(1)}, ${s.webThreads} threads) worker ${(s.workerRss / MB).toFixed(1)} MB (${s.workerThreads} threads)` +
        ` db ${s.connections} (pools: web ${s.webConnections}, worker ${s.workerConnections}; listen ${s.listenConnections}; other ${s.connections - s.webConnections - s.workerConnections - s.listenConnections}) jobs ${s.queued} queued ${s.running} running` +
        ` ws ${s.sockets ?? "?"} req ${s.requests} (${rate.toFixed(1)}/s) server errors ${s.serverErrors} unexpected ${tally.unexpected}\n`,
    );
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await pause(SAMPLE_MS);
      if (!sampling) break;
      const s = await sample();
      print(s);
      samples.push(s);
    }
  })();

  let loadSeconds = 0;
  /** Runs every virtual user for `seconds`. */
  const load = async (seconds: number, stagger: boolean) => {
    phase = "load";
    const from = Date.now();
    const until = from + seconds * 1000;
    await Promise.all(
      tokens.map(async (token, index) => {
        // Users start a little apart, as people do, instead of all in the same millisecond.
        if (stagger) await pause(index * 400);
        await runVirtualUser({ url: service.url, realtimeKey: service.realtimeKey, token, index, until, tally, thinkMs: THINK_MS, keepProjects: 2, reconnectEvery: 4 });
      }),
    );
    loadSeconds += (Date.now() - from) / 1000;
  };
  /**
   * A pause in the load: the jobs its last requests enqueued drain (up to DRAIN_MS), the
   * clients' sockets close, and each process is collected in full before what it holds is
   * read, so that the state after one phase compares with the state after another.
   */
  const rest = async () => {
    phase = "rest";
    const from = Date.now();
    let drained = await sample();
    while (drained.queued + drained.running > 0 && Date.now() - from < DRAIN_MS) {
      await pause(500);
      drained = await sample();
    }
    const drainSeconds = (Date.now() - from) / 1000;
    await pause(REST_MS);
    const memory = { web: await collectedMemory(service.web), worker: await collectedMemory(service.worker) };
    const after = await sample();
    print(after);
    process.stderr.write(
      `soak at rest after a full collection: ${Object.entries(memory)
        .map(
          ([name, m]) =>
            `${name} ${(m.rss / MB).toFixed(1)} MB (heap ${(m.heapUsed / MB).toFixed(1)}, external ${(m.external / MB).toFixed(1)}, ${m.threads} threads;` +
            ` ${m.workerThreads.length} worker threads: ${m.workerThreads.map((t) => `${t.name} ${(t.heapUsed / MB).toFixed(1)}+${(t.external / MB).toFixed(1)}`).join(" ")})`,
        )
        .join(", ")}\n`,
    );
    return { drained, drainSeconds, memory, after };
  };

  const third = SECONDS / 3;
  await warmUpBurst(service.url, tokens, tally);
  await load(third, true);
  const warm = await rest();
  await load(SECONDS - third, false);
  const end = await rest();
  sampling = false;
  await sampler;
  const failedJobs = (await monitor.query<{ n: number; kinds: string | null }>(`select count(*)::int as n, string_agg(distinct kind, ', ') as kinds from jobs where status = 'failed'`)).rows[0]!;
  const jobKinds = (await monitor.query<{ kind: string; n: number }>(`select kind, count(*)::int as n from jobs group by kind order by n desc`)).rows;

  stopped = true;
  const exits = await service.stop();
  await monitor.end();

  const loadSamples = samples.filter((s) => s.phase === "load");
  const loadEnd = end.drained.t;
  const firstThird = loadSamples.filter((s) => s.t <= third + 1);
  const lastThird = loadSamples.filter((s) => s.t >= loadEnd - third - 1);
  const middleThird = loadSamples.filter((s) => s.t > third + 1 && s.t < loadEnd - third - 1);
  if (firstThird.length === 0 || middleThird.length === 0 || lastThird.length === 0) throw new Error(`too few samples (${samples.length}) for a run of ${SECONDS} s`);
  const most = (of: Sample[], pick: (s: Sample) => number) => Math.max(...of.map(pick));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const growth = (pick: (m: typeof end.memory) => number) => (pick(end.memory) - pick(warm.memory)) / MB;
  const mb = (bytes: number) => Math.round(bytes / MB);
  /**
   * Memory of the worker threads a process started between the two rests (its thread pools
   * grow to their size only when all their threads are busy at once, so a pool may reach it
   * late in a run): the heap and external memory of each thread beyond the count of its kind
   * (script) at the first rest, as reported at the end.
   */
  const newThreads = (name: "web" | "worker") => {
    const before = warm.memory[name].workerThreads;
    const after = end.memory[name].workerThreads;
    let count = 0;
    let bytes = 0;
    let heap = 0;
    for (const kind of new Set(after.map((t) => t.name))) {
      const now = after.filter((t) => t.name === kind);
      const extra = now.length - before.filter((t) => t.name === kind).length;
      if (extra <= 0) continue;
      count += extra;
      bytes += (extra * now.reduce((sum, t) => sum + t.heapUsed + t.external, 0)) / now.length;
      heap += (extra * now.reduce((sum, t) => sum + t.heapUsed, 0)) / now.length;
    }
    return { count, bytes, heap };
  };
  const memoryNote = (name: "web" | "worker") =>
    `at rest after the first third ${mb(warm.memory[name].rss)} MB, at the end ${mb(end.memory[name].rss)} MB; worker threads ${warm.memory[name].workerThreads.length} → ${end.memory[name].workerThreads.length} (${mb(newThreads(name).bytes)} MB of heap and external memory in those started between); ` +
    `heap ${mb(warm.memory[name].heapUsed)} → ${mb(end.memory[name].heapUsed)} MB; peak under load ${mb(most(loadSamples, (s) => (name === "web" ? s.webRss : s.workerRss)))} MB`;
  /** Heap used by the main thread and every worker thread after their collections. */
  const heaps = (m: CollectedMemory) => m.heapUsed + m.workerThreads.reduce((sum, t) => sum + t.heapUsed, 0);
  const latencies = [...tally.latencies].sort((a, b) => a - b);
  const logErrors = service.logs.web.errors + service.logs.worker.errors;
  const logWarnings = service.logs.web.warnings + service.logs.worker.warnings;
  const badExits = [exits.web, exits.worker].filter((code) => code !== 0).length;

  for (const failure of tally.failures) process.stderr.write(`soak failure: ${failure}\n`);
  for (const [name, logs] of Object.entries(service.logs)) for (const line of logs.samples) process.stderr.write(`soak ${name} log: ${line}\n`);
  process.stderr.write(`soak jobs by kind: ${jobKinds.map((k) => `${k.kind} ${k.n}`).join(", ")}\n`);

  const figures: Figure[] = [
    limitFigure("soak.server_errors", tally.serverErrors, "errors", 1, null, `5xx or no answer, of ${tally.requests} requests by ${USERS} users over ${Math.round(loadSeconds)} s (${tally.rounds} rounds)`),
    limitFigure("soak.unexpected_statuses", tally.unexpected, "answers", 1, null, "other statuses to the mix's valid requests"),
    limitFigure("soak.logged_errors", logErrors, "lines", 1, null, `error lines in the web and worker logs; ${logWarnings} warnings`),
    limitFigure("soak.web_rss_growth", growth((m) => m.web.rss), "MB", RSS_GROWTH_LIMIT_MB, null, memoryNote("web")),
    limitFigure("soak.worker_rss_growth", growth((m) => m.worker.rss), "MB", RSS_GROWTH_LIMIT_MB, null, memoryNote("worker")),
    limitFigure("soak.web_heap_growth", growth((m) => heaps(m.web)) - newThreads("web").heap / MB, "MB", HEAP_GROWTH_LIMIT_MB, null, "heap used after full collections, main thread and worker threads, same two points (threads started between left out)"),
    limitFigure("soak.worker_heap_growth", growth((m) => heaps(m.worker)) - newThreads("worker").heap / MB, "MB", HEAP_GROWTH_LIMIT_MB, null, "heap used after full collections, main thread and worker threads, same two points (threads started between left out)"),
    limitFigure(
      "soak.db_connections",
      median(lastThird.map((s) => s.connections)),
      "connections",
      median(middleThird.map((s) => s.connections)) + 1,
      median(middleThird.map((s) => s.connections)),
      `median under load in the last third vs in the second (after the warm-up); most ${most(middleThird, (s) => s.connections)} and ${most(lastThird, (s) => s.connections)}, ${end.after.connections} at rest at the end`,
    ),
    limitFigure("soak.jobs_left", end.drained.queued + end.drained.running, "jobs", 1, null, `queued or running after the load and ${end.drainSeconds.toFixed(1)} s of drain (after the first third: ${warm.drained.queued + warm.drained.running} after ${warm.drainSeconds.toFixed(1)} s)`),
    limitFigure("soak.jobs_failed", failedJobs.n, "jobs", 1, null, failedJobs.kinds ?? "none"),
    ratioFigure("soak.realtime_events", tally.eventsReceived, tally.eventsExpected, "events", 1, "CardCreated and CardMoved received on the boards' channels vs made"),
    limitFigure("soak.realtime_connections_left", end.after.sockets ?? NaN, "sockets", 1, null, `counted by the web process at the end (${warm.after.sockets ?? "?"} in the rest after the first third) after ${tally.socketsOpened} pusher-js clients came and went`),
    limitFigure("soak.p99", percentile(latencies, 99), "ms", 2000, null, `p50 ${Math.round(percentile(latencies, 50))} ms, p90 ${Math.round(percentile(latencies, 90))} ms, max ${Math.round(latencies.at(-1) ?? 0)} ms`),
    { ...floorFigure("soak.requests_per_s", tally.requests / loadSeconds, "req/s", 0, null, `${tally.projectsDeleted} projects deleted again`), target: "context" },
    limitFigure("soak.shutdown_exits", badExits, "processes", 1, null, `exit codes on SIGTERM: web ${exits.web}, worker ${exits.worker}`),
  ];
  report(`Soak: web + worker under ${USERS} users' mixed load for ${SECONDS} s`, figures);
} finally {
  if (!stopped) await service.stop(5000);
  await monitor.end().catch(() => {});
  await db.drop();
}
