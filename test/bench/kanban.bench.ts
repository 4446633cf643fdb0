/**
 * Kanban benchmark (BENCHMARKS.md, second round): `GET /api/projects/{p}/kanban` on a board
 * of 10 columns × 200 cards, each card with two assignees, a label and two comments, against
 * the one-query route of the HTTP benchmark in the same run (target ≥ 0.3×: the board is read
 * in a fixed number of queries, not one per card); and card moves per second from 20
 * concurrent clients on that board (reported, no target). The board reads send a browser's
 * `Accept-Encoding`, as real clients do, and get the cached compressed answer.
 */
import autocannon from "autocannon";
import { z } from "zod";
import { createPersonalToken } from "../../shared/auth/personalTokens.ts";
import { createPool, sql } from "../../shared/db/pool.ts";
import { insertUser } from "../../shared/db/users.ts";
import { createProject } from "../../shared/projects/createProject.ts";
import { benchDatabase } from "./support/db.ts";
import { startHttpServers } from "./support/httpServersProcess.ts";
import { profileDir } from "./support/profile.ts";
import { limitFigure, ratioFigure, report } from "./report.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const COLUMNS = 10;
const CARDS_PER_COLUMN = 200;
const MOVERS = 20;
const ids = z.object({ id: z.number() });

/** What a browser or the pusher app sends: the board read then answers its compressed copy. */
const ACCEPT_ENCODING = "gzip, deflate, br, zstd";

async function load(url: string, seconds: number, token?: string): Promise<number> {
  const headers = { "accept-encoding": ACCEPT_ENCODING, ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const result = await autocannon({ url, connections: 10, duration: seconds, pipelining: 1, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

const db = await benchDatabase();
const pool = await createPool(db.url);
// The one-query route reads user 1.
const owner = await insertUser(pool, { name: "Bench Owner", username: "bench_owner", email: "owner@example.test", passwordHash: null });
const helper = await insertUser(pool, { name: "Bench Helper", username: "bench_helper", email: "helper@example.test", passwordHash: null });
const token = (await createPersonalToken(pool, owner.id, "bench")).plainText;
const projectId = await pool.transaction((tx) => createProject(tx, { ownerId: owner.id, name: "Bench board" }));
const boardId = await pool.transaction(async (tx) => {
  const board = await tx.oneFirst(sql.type(ids)`insert into kanban_boards (project_id, name, created_by) values (${projectId}, 'Big', ${owner.id}) returning id`);
  await tx.query(sql.type(z.object({}))`insert into kanban_columns (board_id, name, position) select ${board}, 'Column ' || g, g from generate_series(0, ${COLUMNS - 1}) g`);
  await tx.query(sql.type(z.object({}))`
    insert into kanban_cards (board_id, column_id, position, title, description, created_by)
    select ${board}, c.id, g, 'Card ' || c.position || '.' || g, 'Some **markdown** text', ${owner.id}
    from kanban_columns c, generate_series(0, ${CARDS_PER_COLUMN - 1}) g where c.board_id = ${board}`);
  await tx.query(sql.type(z.object({}))`insert into kanban_labels (board_id, name, color) select ${board}, 'label ' || g, '#3B82F6' from generate_series(1, 5) g`);
  await tx.query(sql.type(z.object({}))`
    insert into kanban_card_assignees (card_id, user_id, kanban_role)
    select k.id, u.id, case when u.id = ${owner.id} then 'SRM' end from kanban_cards k, (values (${owner.id}::int8), (${helper.id}::int8)) u(id) where k.board_id = ${board}`);
  await tx.query(sql.type(z.object({}))`
    insert into kanban_card_labels (card_id, label_id)
    select k.id, (select id from kanban_labels where board_id = ${board} order by id offset (k.id % 5) limit 1) from kanban_cards k where k.board_id = ${board}`);
  await tx.query(sql.type(z.object({}))`
    insert into kanban_comments (card_id, user_id, body) select k.id, ${owner.id}, 'Comment ' || g from kanban_cards k, generate_series(1, 2) g where k.board_id = ${board}`);
  return board;
});
const cardIds = await pool.anyFirst(sql.type(ids)`select id from kanban_cards where board_id = ${boardId} order by id`);
const columnIds = await pool.anyFirst(sql.type(ids)`select id from kanban_columns where board_id = ${boardId} order by position`);
await pool.end();

const { child, ours: port } = await startHttpServers(db.url, { BENCH_LOG_LEVEL: "warn" });
try {
  const base = `http://127.0.0.1:${port}`;
  const oneQuery = `${base}/api/bench/one-query`;
  const boardUrl = `${base}/api/projects/${projectId}/kanban`;
  const check = await fetch(boardUrl, { headers: { authorization: `Bearer ${token}`, "accept-encoding": ACCEPT_ENCODING } });
  if (check.headers.get("content-encoding") !== "br") throw new Error(`the board read came as ${check.headers.get("content-encoding") ?? "identity"}`);
  const body = (await check.json()) as { data: { columns: { cards: unknown[] }[] }[] };
  const cardsRead = body.data[0]!.columns.reduce((n, c) => n + c.cards.length, 0);
  if (cardsRead !== COLUMNS * CARDS_PER_COLUMN) throw new Error(`the board read ${cardsRead} cards`);
  await load(oneQuery, 1);
  await load(boardUrl, 1, token);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const baseline: number[] = [];
  const board: number[] = [];
  for (let round = 0; round < 2; round += 1) {
    baseline.push(await load(oneQuery, SECONDS));
    board.push(await load(boardUrl, SECONDS, token));
  }

  // Moves: 20 clients, each moving random cards of the board to random columns and indexes.
  let moves = 0;
  let failures = 0;
  const latencies: number[] = [];
  const deadline = Date.now() + SECONDS * 1000;
  let seed = 7;
  const next = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  await Promise.all(
    Array.from({ length: MOVERS }, async () => {
      while (Date.now() < deadline) {
        const card = cardIds[Math.floor(next() * cardIds.length)]!;
        const started = performance.now();
        const res = await fetch(`${base}/api/kanban-cards/${card}/move`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ column_id: columnIds[Math.floor(next() * columnIds.length)], order: Math.floor(next() * CARDS_PER_COLUMN) }),
        });
        await res.arrayBuffer();
        if (res.status === 200) {
          moves += 1;
          latencies.push(performance.now() - started);
        } else failures += 1;
      }
    }),
  );
  if (failures) throw new Error(`${failures} moves failed`);
  if (profileDir()) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM"); // the profile is written as the process exits
    await exited;
  }
  latencies.sort((a, b) => a - b);
  report(`Kanban: board read (${COLUMNS} × ${CARDS_PER_COLUMN} cards), moves by ${MOVERS} clients`, [
    ratioFigure("kanban.board_read", mean(board), mean(baseline), "req/s", 0.3, "GET /projects/{p}/kanban vs the one-query route, 10 connections"),
    limitFigure("kanban.moves_per_s", moves / SECONDS, "moves/s", Number.POSITIVE_INFINITY, null, `${MOVERS} concurrent clients on one board; p50 ${Math.round(latencies[Math.floor(latencies.length / 2)] ?? 0)} ms`),
  ]);
} finally {
  child.kill("SIGKILL");
  await db.drop();
}
