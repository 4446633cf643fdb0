/**
 * A project's boards and a board's columns stay within what its own export carries back in
 * (the bundle's `kanban` section: at most 100 boards, 50 columns a board): adding one more is
 * a 422 that changes nothing, and a project filled to both limits exports and imports whole.
 * A column stops at the bundle's 10,000 cards: one more, by create, move or column delete, is a
 * 409 `column_full` that changes nothing, and a full column exports and imports whole.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { MAX_BOARDS_PER_PROJECT, MAX_CARDS_PER_COLUMN, MAX_COLUMNS_PER_BOARD } from "../../../shared/kanban/store.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("boards and columns stop at what a project bundle carries", async (t) => {
  const app = await startTestApp(t);
  const { token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = (await api.post("/api/projects", { name: "Full" })).body.project;
  const count = (table: "kanban_boards" | "kanban_columns") =>
    app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from ${sql.identifier([table])} x
      where ${table === "kanban_boards" ? sql.fragment`x.project_id = ${project.id}` : sql.fragment`x.board_id in (select id from kanban_boards where project_id = ${project.id})`}`);

  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Wide", columns: ["c0"] })).body.board;
  for (let n = 1; n < MAX_COLUMNS_PER_BOARD; n += 1) t.equal((await api.post("/api/kanban-columns", { board_id: board.id, name: `c${n}` })).status, 201);
  const column = await api.post("/api/kanban-columns", { board_id: board.id, name: "one too many" });
  t.equal(column.status, 422, "a column past the limit");
  t.match(column.body, { code: "validation_failed", errors: { board_id: [`A board holds at most ${MAX_COLUMNS_PER_BOARD} columns.`] } });
  t.equal(await count("kanban_columns"), MAX_COLUMNS_PER_BOARD, "no column added");

  for (let n = 1; n < MAX_BOARDS_PER_PROJECT - 3; n += 1) t.equal((await api.post(`/api/projects/${project.id}/kanban`, { name: `b${n}`, columns: [] })).status, 201);
  // Sent at once, the last three places go to three of them.
  const racing = await Promise.all(Array.from({ length: 8 }, (_, n) => api.post(`/api/projects/${project.id}/kanban`, { name: `late ${n}`, columns: [] })));
  t.same(racing.map((r) => r.status).sort(), [201, 201, 201, 422, 422, 422, 422, 422], "three of eight concurrent creates fit");
  const extra = await api.post(`/api/projects/${project.id}/kanban`, { name: "one too many", columns: [] });
  t.equal(extra.status, 422, "a board past the limit");
  t.match(extra.body, { code: "validation_failed", errors: { name: [`A project holds at most ${MAX_BOARDS_PER_PROJECT} boards.`] } });
  t.equal(await count("kanban_boards"), MAX_BOARDS_PER_PROJECT, "no board added");

  const bundle = JSON.parse((await api.get(`/api/projects/${project.id}/export`)).text);
  const imported = await api.post("/api/projects/import", bundle);
  t.equal(imported.status, 201, imported.text);
  t.equal(imported.body.project.kanban_boards_count, MAX_BOARDS_PER_PROJECT, "every board came back");
  const wide = (await api.get(`/api/projects/${imported.body.project.id}/kanban`)).body.data.find((b: { name: string }) => b.name === "Wide");
  t.equal(wide.columns.length, MAX_COLUMNS_PER_BOARD, "with every column");
});

t.test("a column stops at the cards a project bundle's column carries", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = (await api.post("/api/projects", { name: "Deep" })).body.project;
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Deep", columns: ["Full", "Other"] })).body.board;
  const [full, other] = board.columns as { id: number }[];
  // All but one card straight into the table: ten thousand requests would only make the test slow.
  await app.pool.query(sql.type(z.object({}))`
    insert into kanban_cards (board_id, column_id, position, title, created_by)
    select ${board.id}, ${full!.id}, n, 'card ' || n, ${user.id} from generate_series(0, ${MAX_CARDS_PER_COLUMN - 2}) as n`);
  const cards = (columnId: number) => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from kanban_cards where column_id = ${columnId}`);

  t.equal((await api.post("/api/kanban-cards", { column_id: full!.id, title: "the last that fits" })).status, 201);
  const refused = await api.post("/api/kanban-cards", { column_id: full!.id, title: "one too many" });
  t.equal(refused.status, 409, "a card past the limit");
  t.same(refused.body, { message: `The column "Full" holds ${MAX_CARDS_PER_COLUMN} cards, the most a column may hold.`, code: "column_full" });
  const stray = (await api.post("/api/kanban-cards", { column_id: other!.id, title: "stray" })).body.card;
  const moved = await api.post(`/api/kanban-cards/${stray.id}/move`, { column_id: full!.id, order: 0 });
  t.equal(moved.status, 409, "a move into the full column");
  t.equal(moved.body.code, "column_full");
  const merged = await api.delete(`/api/kanban-columns/${other!.id}?target_column_id=${full!.id}`);
  t.equal(merged.status, 409, "a column deleted into the full one");
  t.equal(merged.body.code, "column_full");
  t.equal(await cards(full!.id), MAX_CARDS_PER_COLUMN, "nothing more in the full column");
  t.equal(await cards(other!.id), 1, "the other column keeps its card");

  const bundle = JSON.parse((await api.get(`/api/projects/${project.id}/export`)).text);
  const imported = await api.post("/api/projects/import", bundle);
  t.equal(imported.status, 201, imported.text.slice(0, 500));
  const copy = (await api.get(`/api/projects/${imported.body.project.id}/kanban`)).body.data[0];
  t.same(copy.columns.map((c: { card_count: number }) => c.card_count), [MAX_CARDS_PER_COLUMN, 1], "every card came back");
});
