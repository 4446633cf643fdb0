/**
 * Store search benchmark (issue "Template store"): `GET /store/templates?q=…` with typos on a
 * catalogue of 100,000 generated templates. Figures:
 * - p50 and p99 latency of the route through the full stack (one request at a time, so the
 *   load generator in this process does not queue them); target p99 < 50 ms;
 * - searches per second of the route's query (full-text search OR trigram word similarity,
 *   ranked, counted, one page) against a plain `name ilike '%term%' or description ilike
 *   '%term%'` query over the same rows, both from 8 concurrent clients on the same pool in the
 *   same run; target ≥ 5× the ILIKE query's throughput.
 */
import { z } from "zod";
import { buildAppDeps } from "../../api/appDeps.ts";
import { startWeb } from "../../api/server.ts";
import { testConfig } from "../support/app.ts";
import { createPool, sql, type DatabasePool } from "../../shared/db/pool.ts";
import { EventHub } from "../../shared/events/hub.ts";
import { PgListener } from "../../shared/events/listener.ts";
import { createLogger } from "../../shared/logger.ts";
import { searchStore } from "../../shared/store/search.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { catalogue } from "../support/storeCatalogue.ts";
import { buildSeller, seedCatalogue } from "../support/storeFactories.ts";
import { benchDatabase, percentile } from "./support/db.ts";
import { limitFigure, ratioFigure, report } from "./report.ts";

const TEMPLATES = Number(process.env.BENCH_STORE_TEMPLATES ?? 100_000);
const LATENCY_REQUESTS = 400;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CLIENTS = 8;
const queries = ["crm dashbord", "invoce generator", "kanbn tracker", "newsleter portal", "inventroy api", "payrol backend", "wether admin panel", "portfolo starter"];

/** Runs `once` from `CLIENTS` concurrent loops for `SECONDS`; returns completed calls per second. */
async function throughput(once: (q: string) => Promise<unknown>): Promise<number> {
  const deadline = Date.now() + SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = client; Date.now() < deadline; i += 1) {
        await once(queries[i % queries.length]!);
        done += 1;
      }
    }),
  );
  return done / SECONDS;
}

const ilike = (pool: DatabasePool, q: string) =>
  pool.any(sql.type(z.object({ id: z.number(), name: z.string() }))`
    select id, name from store_templates
    where status = 'published' and (name ilike ${`%${q}%`} or description ilike ${`%${q}%`})
    order by published_at desc limit 12`);

const db = await benchDatabase();
const config = testConfig(db.url, { LOG_LEVEL: "silent", DATABASE_POOL_SIZE: "10" });
const log = createLogger("silent");
const pool = await createPool(db.url, { maxPoolSize: 10 });
try {
  const seller = await buildSeller({ pool, config });
  const { token } = await buildUserWithToken(pool);
  const entries = catalogue(TEMPLATES);
  for (let start = 0; start < entries.length; start += 10_000) await seedCatalogue(pool, seller.user.id, entries.slice(start, start + 10_000));
  await pool.query(sql.type(z.object({}))`analyze store_templates`);

  const listener = new PgListener(db.url, log);
  await listener.start();
  const hub = new EventHub(listener, pool, log);
  hub.start();
  const deps = await buildAppDeps({ config, pool, log, hub });
  const web = await startWeb(deps, 0, "127.0.0.1");
  try {
    const url = (q: string) => `http://127.0.0.1:${web.port}/api/store/templates?q=${encodeURIComponent(q)}`;
    const headers = { authorization: `Bearer ${token}` };
    // Warm-up, and a check that each typo finds its template.
    for (const q of queries) {
      const res = await fetch(url(q), { headers });
      const body = (await res.json()) as { data: { name: string }[] };
      if (res.status !== 200 || body.data.length === 0) throw new Error(`${q}: ${res.status}, ${body.data?.length} results`);
    }
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_REQUESTS; i += 1) {
      const started = performance.now();
      const res = await fetch(url(queries[i % queries.length]!), { headers });
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
    }
    latencies.sort((a, b) => a - b);

    const ilikeRate = await throughput((q) => ilike(pool, q));
    const searchRate = await throughput((q) => searchStore(pool, { q, page: 1, rows: 12 }, null));

    report(`Store search over ${TEMPLATES.toLocaleString("en")} templates, typo queries`, [
      limitFigure("store.search.route.p50", percentile(latencies, 50), "ms", 50),
      limitFigure("store.search.route.p99", percentile(latencies, 99), "ms", 50),
      ratioFigure("store.search.throughput", searchRate, ilikeRate, "searches/s", 5, `${CLIENTS} clients; baseline: name/description ILIKE '%q%'`),
    ]);
  } finally {
    await web.stop();
    await deps.identity.close();
    hub.stop();
    await listener.stop();
  }
} finally {
  await pool.end();
  await db.drop();
}
