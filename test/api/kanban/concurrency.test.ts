/**
 * Many people on one board at once: concurrent creates and moves from separate connections
 * (and separate users), then every column's positions are exactly 0…n−1, no card is lost
 * or duplicated, and no WIP limit is exceeded; concurrent creates into a column with room
 * for five cards admit exactly five.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { seededRandom as random } from "../../support/random.ts";

const positionRow = z.object({ column_id: z.number(), positions: z.array(z.coerce.number()), n: z.number() });

t.test("concurrent moves and creates keep positions and WIP limits exact", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const others = await Promise.all([0, 1, 2].map(() => buildUserWithToken(app.pool)));
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Busy" })).body.project;
  await buildTeam(app.pool, owner.user.id, Object.fromEntries(others.map((o) => [o.user.id, 3])), [project.id]);
  const clients = [api, ...others.map((o) => client(app.url, o.token))];
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Busy", columns: ["Backlog", "Doing", "Done"] })).body.board;
  const [backlog, doing, done] = board.columns as { id: number }[];
  await api.put(`/api/kanban-columns/${doing!.id}`, { wip_limit: 4 });
  const cards: number[] = [];
  for (let i = 0; i < 12; i++) cards.push((await api.post("/api/kanban-cards", { column_id: backlog!.id, title: `c${i}` })).body.card.id);

  const columnState = () =>
    app.pool.any(sql.type(positionRow)`
      select c.id as column_id, coalesce(array_agg(k.position order by k.position) filter (where k.id is not null), '{}')::int[] as positions, count(k.id)::int as n
      from kanban_columns c left join kanban_cards k on k.column_id = c.id where c.board_id = ${board.id} group by c.id order by c.id`);

  t.test("40 concurrent moves and creates", async (t) => {
    const next = random(20_261_125);
    const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)]!;
    const columns = [backlog!.id, doing!.id, done!.id];
    const requests = Array.from({ length: 40 }, (_, i) => {
      const who = clients[i % clients.length]!;
      if (i % 4 === 3) return who.post("/api/kanban-cards", { column_id: pick(columns), title: `new ${i}`, order: Math.floor(next() * 6) });
      const card = pick(cards);
      const body = { column_id: pick(columns), order: Math.floor(next() * 8) };
      return i % 2 ? who.post(`/api/kanban-cards/${card}/move`, body) : who.post(`/api/projects/${project.id}/kanban/cards/${card}/move`, body);
    });
    const answers = await Promise.all(requests);
    const statuses = answers.map((r) => r.status);
    t.ok(statuses.every((s) => s === 200 || s === 201 || s === 409), `only successes and full columns: ${[...new Set(statuses)].join(", ")}`);
    t.ok(answers.filter((r) => r.status === 409).every((r) => r.body.code === "wip_limit_reached"));
    t.ok(statuses.filter((s) => s !== 409).length >= 20, "at least 20 changes went through");
    const created = statuses.filter((s) => s === 201).length;
    const state = await columnState();
    for (const column of state) t.same(column.positions, Array.from({ length: column.n }, (_, i) => i), `column ${column.column_id}: positions 0…${column.n - 1}`);
    t.equal(state.reduce((sum, c) => sum + c.n, 0), cards.length + created, "no card lost or duplicated");
    t.ok(state.find((c) => c.column_id === doing!.id)!.n <= 4, "the WIP limit of Doing held");
  });

  t.test("10 concurrent creates into a column with room for 5 admit exactly 5", async (t) => {
    const review = (await api.post("/api/kanban-columns", { board_id: board.id, name: "Review", wip_limit: 5 })).body.column;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => clients[i % clients.length]!.post("/api/kanban-cards", { column_id: review.id, title: `r${i}`, order: 0 })));
    t.equal(answers.filter((r) => r.status === 201).length, 5);
    t.equal(answers.filter((r) => r.status === 409).length, 5);
    const state = (await columnState()).find((c) => c.column_id === review.id)!;
    t.same(state.positions, [0, 1, 2, 3, 4]);
  });

  t.test("concurrent moves into a nearly full column from all others", async (t) => {
    const target = (await api.post("/api/kanban-columns", { board_id: board.id, name: "Ship", wip_limit: 3 })).body.column;
    const state = await app.pool.anyFirst(sql.type(z.object({ id: z.number() }))`
      select id from kanban_cards where board_id = ${board.id} and column_id <> ${target.id} order by id limit 20`);
    const answers = await Promise.all(state.map((id, i) => clients[i % clients.length]!.post(`/api/kanban-cards/${id}/move`, { column_id: target.id, order: i % 3 })));
    t.equal(answers.filter((r) => r.status === 200).length, 3, "three moved in");
    t.equal(answers.filter((r) => r.status === 409).length, state.length - 3, "the rest were refused");
    for (const column of await columnState()) t.same(column.positions, Array.from({ length: column.n }, (_, i) => i), `column ${column.column_id} stays gapless`);
  });
});
