/**
 * Labels through a project bundle: a board may hold two labels of one name, and each card
 * comes back with the very labels it had (by index, not by name); a bundle written before
 * `label_indexes` still imports by name, and indexes that disagree with the names are a 422
 * that makes no project.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

type BoardRead = { columns: { cards: { title: string; labels: { name: string; color: string }[] }[] }[] };

t.test("labels of one name keep their cards through export and import", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const source = (await api.post("/api/projects", { name: "Twins" })).body.project;
  const board = (await api.post(`/api/projects/${source.id}/kanban`, { name: "Plan", columns: ["Open"] })).body.board;
  const label = async (name: string, color: string) => (await api.post(`/api/kanban-boards/${board.id}/labels`, { name, color })).body.label.id as number;
  const red = await label("bug", "#ff0000");
  const blue = await label("bug", "#0000ff");
  const ux = await label("ux", "#00ff00");
  const card = async (title: string, labels: number[]) => t.equal((await api.post("/api/kanban-cards", { column_id: board.columns[0].id, title, labels })).status, 201);
  await card("blue only", [blue]);
  await card("red only", [red]);
  await card("both and ux", [red, blue, ux]);

  /** Each card's labels as `name color`, sorted, by title. */
  const labelsByTitle = async (projectId: number) => {
    const read = (await api.get(`/api/projects/${projectId}/kanban`)).body.data[0] as BoardRead;
    return Object.fromEntries(read.columns[0]!.cards.map((c) => [c.title, c.labels.map((l) => `${l.name} ${l.color}`).sort()]));
  };
  const expected = { "blue only": ["bug #0000ff"], "red only": ["bug #ff0000"], "both and ux": ["bug #0000ff", "bug #ff0000", "ux #00ff00"] };
  t.same(await labelsByTitle(source.id), expected, "the source board");

  const bundle = JSON.parse((await api.get(`/api/projects/${source.id}/export`)).text);
  const imported = await api.post("/api/projects/import", bundle);
  t.equal(imported.status, 201, imported.text);
  t.same(await labelsByTitle(imported.body.project.id), expected, "the copy: every card with the labels it had");

  t.test("a bundle without label indexes imports by name", async (t) => {
    const older = structuredClone(bundle);
    for (const c of older.sections.kanban[0].columns[0].cards) delete c.label_indexes;
    const res = await api.post("/api/projects/import", older);
    t.equal(res.status, 201, res.text);
    const copy = await labelsByTitle(res.body.project.id);
    t.same(copy["red only"], ["bug #ff0000"], "a name stands for the board's first label of that name");
    t.same(copy["both and ux"], ["bug #ff0000", "ux #00ff00"]);
  });

  t.test("indexes that disagree with the names are refused", async (t) => {
    const projects = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from projects where owner_id = ${owner.user.id}`);
    const before = await projects();
    const wrong = structuredClone(bundle);
    const first = wrong.sections.kanban[0].columns[0].cards[0];
    first.label_indexes = [2];
    const res = await api.post("/api/projects/import", wrong);
    t.equal(res.status, 422, res.text);
    t.same(Object.keys(res.body.errors), ["sections.kanban.0.columns.0.cards.0.label_indexes"]);
    first.label_indexes = [7];
    t.equal((await api.post("/api/projects/import", wrong)).status, 422, "an index past the board's labels");
    t.equal(await projects(), before, "no project made");
  });
});
