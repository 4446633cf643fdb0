/**
 * HTTP benchmark (issue "Foundation", BENCHMARKS.md "HTTP"): a route doing one SQL query
 * through the full middleware stack (request id, logs, metrics, errors, security headers,
 * router, validation, Slonik with row validation) versus a bare Koa + pg handler doing the
 * same query, 50 concurrent connections, alternating runs. Target ratio ≥ 0.85 (second round;
 * the first asked 0.7).
 * And (issue "Identity") `GET /api/user` with a bearer JWT versus that one-query route:
 * token verification must cost little beyond loading the user. Target ratio ≥ 0.95 (first
 * round 0.8).
 * For context (no target), the same query through the service's Slonik pool behind a bare Koa
 * handler, against the bare Koa + pg server: the share of the gap the database layer takes
 * before any middleware (`http.koa_slonik`).
 *
 * Under `BENCH_CPU_PROF=<dir>` (support/profile.ts) the servers' process is profiled too (its
 * profile is written to <dir> when it stops) and only the one-query route is loaded
 * (`BENCH_CPU_PROF_ROUTE=user`: only `GET /api/user`; `=bare`: only the bare server, to set
 * beside it; `=slonik`: only the Slonik-only server), so the profile shows that route's path.
 */
import autocannon from "autocannon";
import { createPool } from "../../shared/db/pool.ts";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { insertUser } from "../../shared/db/users.ts";
import { benchDatabase } from "./support/db.ts";
import { startHttpServers } from "./support/httpServersProcess.ts";
import { profileDir } from "./support/profile.ts";
import { ratioFigure, report } from "./report.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = 2;

async function load(url: string, seconds: number, token?: string): Promise<number> {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  const result = await autocannon({ url, connections: 50, duration: seconds, pipelining: 1, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

const db = await benchDatabase();
const pool = await createPool(db.url);
await insertUser(pool, { name: "Bench User", username: "bench", email: "bench@example.test", passwordHash: await hashPassword("bench password") });
await pool.end();

const profiling = profileDir() !== null;
const { child, ours: oursPort, bare: barePort, slonik: slonikPort } = await startHttpServers(db.url);
try {
  const oursUrl = `http://127.0.0.1:${oursPort}/api/bench/one-query`;
  const bareUrl = `http://127.0.0.1:${barePort}/`;
  const slonikUrl = `http://127.0.0.1:${slonikPort}/`;
  const userUrl = `http://127.0.0.1:${oursPort}/api/user`;
  const login = await fetch(`http://127.0.0.1:${oursPort}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.test", password: "bench password" }),
  });
  const token = ((await login.json()) as { access_token: string }).access_token;
  const measure = async () => {
    await load(bareUrl, 1);
    await load(userUrl, 1, token);
    const ours: number[] = [];
    const bare: number[] = [];
    const user: number[] = [];
    const slonik: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      bare.push(await load(bareUrl, SECONDS));
      ours.push(await load(oursUrl, SECONDS));
      user.push(await load(userUrl, SECONDS, token));
      slonik.push(await load(slonikUrl, SECONDS));
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    report("HTTP: one SQL query per request, 50 connections", [
      ratioFigure("http.one_query", mean(ours), mean(bare), "req/s", 0.85, "full stack vs bare Koa + pg"),
      ratioFigure("http.get_user_jwt", mean(user), mean(ours), "req/s", 0.95, "GET /api/user with a bearer JWT vs the one-query route"),
      {
        ...ratioFigure("http.koa_slonik", mean(slonik), mean(bare), "req/s", 0, "context: the same query through the service's Slonik pool, no middleware, vs bare Koa + pg"),
        target: "context",
      },
    ]);
  };
  await load(oursUrl, 1);
  if (profiling) {
    const route = process.env.BENCH_CPU_PROF_ROUTE;
    // The rate tells how many requests the profile's samples are spread over.
    const urls: Record<string, string> = { bare: bareUrl, slonik: slonikUrl };
    const rate = route === "user" ? await load(userUrl, SECONDS, token) : await load(urls[route ?? ""] ?? oursUrl, SECONDS);
    console.log(`profiled ${route ?? "one-query"}: ${Math.round(rate)} req/s for ${SECONDS} s`);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM"); // the profile is written as the process exits
    await exited;
  } else {
    await measure();
  }
} finally {
  child.kill("SIGKILL");
  await db.drop();
}
