/**
 * A project's boards and a board's columns stay within what its own export carries back in
 * (the bundle's `kanban` section: at most 100 boards, 50 columns a board): adding one more is
 * a 422 that changes nothing, and a project filled to both limits exports and imports whole.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { MAX_BOARDS_PER_PROJECT, MAX_COLUMNS_PER_BOARD } from "../../../shared/kanban/store.ts";
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
