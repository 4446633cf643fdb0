/**
 * Kanban boards, columns, cards, labels and assignees through the HTTP API: board reads in
 * position order with counts, column re-ordering and deletion rules, WIP limits enforced by
 * the server, the card write form with its checks, moves and the activity log.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { updateProfile } from "../../../shared/db/users.ts";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("kanban boards", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool, { name: "Ada Lovelace" });
  const member = await buildUserWithToken(app.pool, { name: "Grace" });
  await updateProfile(app.pool, owner.user.id, { kanban_color: "#112233" });
  await updateProfile(app.pool, member.user.id, { kanban_initials: "GH" });
  const outsider = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Board home" })).body.project;
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project.id]);
  const created = await api.post(`/api/projects/${project.id}/kanban`, { name: "Sprint", columns: ["To do", "Doing", "Done"] });
  t.equal(created.status, 201, created.text);
  const board = created.body.board;
  const [todo, doing, done] = board.columns as { id: number }[];
  const positions = async (columnId: number) =>
    app.pool.anyFirst(sql.type(z.object({ id: z.number() }))`select id from kanban_cards where column_id = ${columnId} order by position`);

  t.test("board create and read", async (t) => {
    t.match(board, { name: "Sprint", project_id: project.id, columns: [{ name: "To do", position: 0, card_count: 0, cards: [] }, { name: "Doing", position: 1 }, { name: "Done", position: 2 }] });
    t.equal((await api.get(`/api/projects/${project.id}`)).body.project.kanban_boards_count, 1);
    const list = await api.get(`/api/projects/${project.id}/kanban`);
    t.equal(list.status, 200);
    t.same(list.body.data.map((b: { id: number }) => b.id), [board.id]);
    t.equal((await api.post(`/api/projects/${project.id}/kanban`, { name: "" })).status, 422);
    t.equal((await client(app.url, outsider.token).get(`/api/kanban-boards/${board.id}`)).status, 404);
    const renamed = await api.put(`/api/kanban-boards/${board.id}`, { name: "Sprint 1" });
    t.equal(renamed.body.board.name, "Sprint 1");
  });

  t.test("cards: create at an index, the write form's checks, the full read", async (t) => {
    const a = await api.post("/api/kanban-cards", { column_id: todo!.id, title: "A" });
    t.equal(a.status, 201, a.text);
    t.match(a.body.card, { title: "A", priority: "medium", status: String(todo!.id), position: 0, activities: [{ type: "created" }], comments: [] });
    const b = await api.post("/api/kanban-cards", { column_id: todo!.id, title: "B", order: 0, priority: "high", due_date: "2030-01-31", estimated_hours: 2.5, assignees: [member.user.id] });
    t.equal(b.status, 201, b.text);
    t.match(b.body.card, { due_date: "2030-01-31", estimated_hours: 2.5, assignees: [{ user_id: member.user.id, name: "Grace", initials: "GH", kanban_role: null }] });
    t.same(await positions(todo!.id), [b.body.card.id, a.body.card.id], "B landed at index 0");
    t.match((await api.post("/api/kanban-cards", { column_id: todo!.id, title: "C", assignees: [outsider.user.id] })).body, { code: "validation_failed", errors: { assignees: [/not members/] } });
    t.equal((await api.post("/api/kanban-cards", { column_id: todo!.id, title: "C", labels: [999999] })).status, 422);
    t.equal((await api.post("/api/kanban-cards", { column_id: todo!.id, title: "C", priority: "urgent" })).status, 422);
    // ISO 8601 has a year 0000 and PostgreSQL's date has not (a 500 once, found by fuzzing).
    t.match((await api.post("/api/kanban-cards", { column_id: todo!.id, title: "C", due_date: "0000-02-29" })).body, { code: "validation_failed", errors: { due_date: [/before the year 0001/] } });
    t.match((await api.put(`/api/kanban-cards/${a.body.card.id}`, { title: "A", due_date: "0000-01-01" })).body, { code: "validation_failed", errors: { due_date: [/before the year 0001/] } });
    t.equal((await api.post("/api/kanban-cards", { column_id: 999999, title: "C" })).status, 404);
    t.equal((await client(app.url, outsider.token).post("/api/kanban-cards", { column_id: todo!.id, title: "C" })).status, 404);
    t.same(await positions(todo!.id), [b.body.card.id, a.body.card.id], "refused requests wrote nothing");
    const firstDay = await api.put(`/api/kanban-cards/${a.body.card.id}`, { title: "A", due_date: "0001-01-01" });
    t.equal(firstDay.body.card?.due_date, "0001-01-01", "the first day PostgreSQL holds is accepted");
    const read = await api.get(`/api/kanban-cards/${a.body.card.id}`);
    t.equal(read.status, 200);
    t.equal(read.body.card.title, "A");
  });

  t.test("labels and the update's changes", async (t) => {
    const label = await api.post(`/api/kanban-boards/${board.id}/labels`, { name: "bug", color: "#ff0000" });
    t.equal(label.status, 201, label.text);
    t.equal((await api.post(`/api/kanban-boards/${board.id}/labels`, { name: "x", color: "red" })).status, 422);
    const card = (await api.post("/api/kanban-cards", { column_id: doing!.id, title: "Labelled" })).body.card;
    const updated = await api.put(`/api/kanban-cards/${card.id}`, { title: "Labelled!", labels: [label.body.label.id], assignees: [owner.user.id], priority: "medium" });
    t.equal(updated.status, 200, updated.text);
    t.match(updated.body.card.labels, [{ name: "bug", color: "#ff0000" }]);
    t.match(updated.body.card.assignees, [{ user_id: owner.user.id, initials: "AL", color: "#112233" }]);
    const activity = updated.body.card.activities.find((x: { type: string }) => x.type === "updated");
    t.same(activity.changes, { title: { old: "Labelled", new: "Labelled!" }, assignees: { old: [], new: [owner.user.id] }, labels: { old: [], new: [label.body.label.id] } }, "priority did not change");
    t.ok(updated.body.card.activities.some((x: { type: string }) => x.type === "assigned"));
    t.equal((await api.put(`/api/kanban-labels/${label.body.label.id}`, { color: "#00ff00" })).body.label.color, "#00ff00");
    t.same((await api.get(`/api/kanban-boards/${board.id}/labels`)).body.data.map((l: { name: string }) => l.name), ["bug"]);
    const otherBoard = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Other" })).body.board;
    const foreign = (await api.post(`/api/kanban-boards/${otherBoard.id}/labels`, { name: "x", color: "#000000" })).body.label;
    t.equal((await api.put(`/api/kanban-cards/${card.id}`, { labels: [foreign.id] })).status, 422, "a label of another board");
    t.equal((await api.delete(`/api/kanban-labels/${label.body.label.id}`)).status, 200);
    t.same((await api.get(`/api/kanban-cards/${card.id}`)).body.card.labels, []);
  });

  t.test("assignees with kanban roles", async (t) => {
    const card = (await api.post("/api/kanban-cards", { column_id: doing!.id, title: "Roles" })).body.card;
    const added = await api.post(`/api/kanban-cards/${card.id}/assignees`, { user_id: member.user.id, kanban_role: "Flow Manager" });
    t.equal(added.status, 201, added.text);
    t.match(added.body.assignee, { user_id: member.user.id, kanban_role: "Flow Manager", kanban_role_short: "FM", kanban_role_color: /^#/ });
    t.equal((await api.post(`/api/kanban-cards/${card.id}/assignees`, { user_id: outsider.user.id })).status, 422);
    t.equal(added.body.assignee.id, member.user.id, "an assignee's id is the person's");
    t.equal((await api.delete(`/api/assignees/${added.body.assignee.assignment_id}`)).status, 200);
    t.equal((await api.delete(`/api/assignees/${added.body.assignee.assignment_id}`)).status, 404);
  });

  t.test("WIP limits: full columns refuse creates and moves; lowering below the count is allowed", async (t) => {
    const column = (await api.post("/api/kanban-columns", { board_id: board.id, name: "Review", wip_limit: 1 })).body.column;
    t.match(column, { name: "Review", position: 3, wip_limit: 1 });
    const first = await api.post("/api/kanban-cards", { column_id: column.id, title: "R1" });
    t.equal(first.status, 201);
    const second = await api.post("/api/kanban-cards", { column_id: column.id, title: "R2" });
    t.equal(second.status, 409);
    t.equal(second.body.code, "wip_limit_reached");
    const other = (await api.post("/api/kanban-cards", { column_id: done!.id, title: "D" })).body.card;
    const move = await api.post(`/api/kanban-cards/${other.id}/move`, { column_id: column.id, order: 0 });
    t.equal(move.status, 409);
    t.same(await positions(column.id), [first.body.card.id], "nothing changed");
    t.same(await positions(done!.id), [other.id]);
    await api.put(`/api/kanban-columns/${column.id}`, { wip_limit: null });
    t.equal((await api.post(`/api/kanban-cards/${other.id}/move`, { column_id: column.id, order: 0 })).status, 200);
    const lowered = await api.put(`/api/kanban-columns/${column.id}`, { wip_limit: 1 });
    t.equal(lowered.status, 200);
    t.match(lowered.body.column, { wip_limit: 1, card_count: 2 });
    t.equal((await api.post("/api/kanban-cards", { column_id: column.id, title: "R3" })).status, 409);
    t.equal((await api.post(`/api/kanban-cards/${other.id}/move`, { column_id: column.id, order: 5 })).status, 200, "a move within the column is not a new card");
    t.same(await positions(column.id), [first.body.card.id, other.id]);
  });

  t.test("moves: index, shifting, activity, another project's column", async (t) => {
    const ids = [];
    for (const title of ["m0", "m1", "m2"]) ids.push((await api.post("/api/kanban-cards", { column_id: done!.id, title })).body.card.id);
    const moved = await api.post(`/api/projects/${project.id}/kanban/cards/${ids[2]}/move`, { column_id: done!.id, order: 0 });
    t.equal(moved.status, 200, moved.text);
    t.same(await positions(done!.id), [ids[2], ids[0], ids[1]]);
    t.equal((await api.post(`/api/kanban-cards/${ids[0]}/move`, { status: String(doing!.id), order: 0 })).status, 200, "status names the target column");
    t.same(await positions(done!.id), [ids[2], ids[1]]);
    t.equal((await positions(doing!.id))[0], ids[0]);
    const card = (await api.get(`/api/kanban-cards/${ids[0]}`)).body.card;
    t.match(card.activities.at(-1), { type: "moved", changes: { column_id: { old: done!.id, new: doing!.id } } });
    const otherProject = (await api.post("/api/projects", { name: "Elsewhere" })).body.project;
    const otherBoard = (await api.post(`/api/projects/${otherProject.id}/kanban`, { name: "B", columns: ["x"] })).body.board;
    t.equal((await api.post(`/api/kanban-cards/${ids[1]}/move`, { column_id: otherBoard.columns[0].id, order: 0 })).status, 404);
    t.equal((await api.post(`/api/projects/${otherProject.id}/kanban/cards/${ids[1]}/move`, { column_id: done!.id, order: 0 })).status, 404);
    t.equal((await api.post(`/api/kanban-cards/${ids[1]}/move`, { column_id: done!.id, status: String(doing!.id) })).status, 422);
  });

  t.test("columns: re-order by position; deleting one with cards needs a target", async (t) => {
    const fresh = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Columns", columns: ["a", "b", "c"] })).body.board;
    const [a, b, c] = fresh.columns as { id: number }[];
    t.equal((await api.put(`/api/kanban-columns/${c!.id}`, { position: 0 })).status, 200);
    const order = async () => (await api.get(`/api/kanban-boards/${fresh.id}`)).body.board.columns.map((x: { name: string; position: number }) => `${x.position}${x.name}`);
    t.same(await order(), ["0c", "1a", "2b"]);
    const card = (await api.post("/api/kanban-cards", { column_id: a!.id, title: "stay" })).body.card;
    const refused = await api.delete(`/api/kanban-columns/${a!.id}`);
    t.equal(refused.status, 409);
    t.equal(refused.body.code, "column_not_empty");
    t.equal((await api.delete(`/api/kanban-columns/${a!.id}?target_column_id=${doing!.id}`)).status, 404, "a column of another board");
    t.equal((await api.delete(`/api/kanban-columns/${a!.id}?target_column_id=${b!.id}`)).status, 200);
    t.same(await order(), ["0c", "1b"]);
    t.equal((await api.get(`/api/kanban-cards/${card.id}`)).body.card.column_id, b!.id);
  });

  t.test("deleting a card closes the gap and removes its comments and activities", async (t) => {
    const fresh = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Del", columns: ["only"] })).body.board;
    const col = fresh.columns[0].id;
    const ids = [];
    for (const title of ["d0", "d1", "d2"]) ids.push((await api.post("/api/kanban-cards", { column_id: col, title })).body.card.id);
    t.equal((await api.post(`/api/kanban-cards/${ids[1]}/comments`, { body: "hello" })).status, 201);
    t.equal((await api.delete(`/api/kanban-cards/${ids[1]}`)).status, 200);
    t.same(await positions(col), [ids[0], ids[2]]);
    const left = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select (select count(*) from kanban_comments where card_id = ${ids[1]}) + (select count(*) from kanban_activities where card_id = ${ids[1]})::int as n`);
    t.equal(Number(left), 0);
    t.equal((await api.get(`/api/kanban-cards/${ids[1]}`)).status, 404);
  });

  t.test("project bundles carry boards, columns, labels and cards in order", async (t) => {
    const source = (await api.post("/api/projects", { name: "Bundled" })).body.project;
    const made = (await api.post(`/api/projects/${source.id}/kanban`, { name: "Plan", columns: ["Open", "Closed"] })).body.board;
    await api.put(`/api/kanban-columns/${made.columns[1].id}`, { wip_limit: 7 });
    const label = (await api.post(`/api/kanban-boards/${made.id}/labels`, { name: "ux", color: "#abcdef" })).body.label;
    await api.post("/api/kanban-cards", { column_id: made.columns[0].id, title: "second", priority: "low" });
    await api.post("/api/kanban-cards", { column_id: made.columns[0].id, title: "first", order: 0, labels: [label.id], due_date: "2031-02-03" });
    const bundle = JSON.parse((await api.get(`/api/projects/${source.id}/export`)).text);
    t.equal(bundle.sections.kanban.length, 1);
    const imported = await api.post("/api/projects/import", bundle);
    t.equal(imported.status, 201, imported.text);
    t.equal(imported.body.project.kanban_boards_count, 1);
    const copy = (await api.get(`/api/projects/${imported.body.project.id}/kanban`)).body.data[0];
    t.match(copy, {
      name: "Plan",
      columns: [
        { name: "Open", card_count: 2, cards: [{ title: "first", due_date: "2031-02-03", labels: [{ name: "ux", color: "#abcdef" }] }, { title: "second", priority: "low", labels: [] }] },
        { name: "Closed", wip_limit: 7, card_count: 0 },
      ],
    });
    t.not(copy.id, made.id);
    const projects = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from projects where owner_id = ${owner.user.id}`);
    const before = await projects();
    bundle.sections.kanban[0].columns[0].cards[0].due_date = "0000-12-31";
    const refused = await api.post("/api/projects/import", bundle);
    t.equal(refused.status, 422, "a card due in the year 0000, which PostgreSQL has not");
    t.match(JSON.stringify(refused.body.errors), /before the year 0001/);
    t.equal(await projects(), before, "the refused bundle made no project");
  });

  t.test("viewers read but do not change; a locked project refuses changes", async (t) => {
    const viewer = await buildUserWithToken(app.pool);
    await buildTeam(app.pool, owner.user.id, { [viewer.user.id]: 4 }, [project.id]);
    const view = client(app.url, viewer.token);
    t.equal((await view.get(`/api/projects/${project.id}/kanban`)).status, 200);
    t.equal((await view.post("/api/kanban-cards", { column_id: todo!.id, title: "no" })).status, 403);
    await api.post(`/api/projects/${project.id}/lock`);
    t.equal((await api.post("/api/kanban-cards", { column_id: todo!.id, title: "no" })).status, 423);
    await api.post(`/api/projects/${project.id}/unlock`);
  });
});

t.test("a card's text holding an unpaired surrogate is refused with a 422 on its field, and the card is unchanged", async (t) => {
  // Found by fuzzing: the card's change history is jsonb, which cannot hold a lone surrogate's escape (a 500 before).
  const app = await startTestApp(t);
  const { token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = (await api.post("/api/projects", { name: "Surrogates" })).body.project as { id: number };
  t.ok(project?.id, "project created");
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "S", columns: ["A"] })).body.board as { columns: { id: number }[] };
  const card = (await api.post("/api/kanban-cards", { column_id: board.columns[0]!.id, title: "before" })).body.card as { id: number };
  const send = (path: string, method: string, body: string) =>
    fetch(`${app.url}${path}`, { method, headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body });
  const changed = await send(`/api/kanban-cards/${card.id}`, "PUT", '{"title":"\\ud800"}');
  t.equal(changed.status, 422);
  t.match(await changed.json(), { code: "validation_failed", errors: { title: [/unpaired UTF-16 surrogate/] } });
  const created = await send("/api/kanban-cards", "POST", `{"column_id":${board.columns[0]!.id},"title":"a\\udc00b"}`);
  t.equal(created.status, 422, "creating too");
  t.equal((await api.get(`/api/kanban-cards/${card.id}`)).body.card.title, "before", "unchanged");
  const paired = await send(`/api/kanban-cards/${card.id}`, "PUT", '{"title":"\\ud83d\\ude00 done"}');
  t.equal(paired.status, 200, "a surrogate pair is an ordinary character");
  t.equal((await api.get(`/api/kanban-cards/${card.id}`)).body.card.title, "😀 done");
});

t.test("estimated hours are kept to the hundredth they are stored in; more decimals are a 422, not a change the card never had", async (t) => {
  const app = await startTestApp(t);
  const { token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = (await api.post("/api/projects", { name: "Hours" })).body.project as { id: number };
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "H", columns: ["A"] })).body.board as { columns: { id: number }[] };
  const card = (await api.post("/api/kanban-cards", { column_id: board.columns[0]!.id, title: "estimate", estimated_hours: 1.25 })).body.card as { id: number; estimated_hours: number };
  t.equal(card.estimated_hours, 1.25);
  const activities = async () => (await api.get(`/api/kanban-cards/${card.id}`)).body.card.activities.length as number;
  const before = await activities();
  for (const [path, method, body] of [
    [`/api/kanban-cards/${card.id}`, "PUT", { estimated_hours: 1.234 }],
    ["/api/kanban-cards", "POST", { column_id: board.columns[0]!.id, title: "third", estimated_hours: 0.001 }],
  ] as const) {
    const refused = await (method === "PUT" ? api.put(path, body) : api.post(path, body));
    t.equal(refused.status, 422, `${method} ${path}`);
    t.match(refused.body, { code: "validation_failed", errors: { estimated_hours: [/two decimals/] } });
  }
  t.equal(await activities(), before, "no activity for a change that would not be stored");
  const kept = await api.put(`/api/kanban-cards/${card.id}`, { estimated_hours: 2.5 });
  t.equal(kept.status, 200);
  t.equal(kept.body.card.estimated_hours, 2.5);
  t.equal((await api.put(`/api/kanban-cards/${card.id}`, { estimated_hours: 2.5 })).status, 200);
  t.equal(await activities(), before + 1, "one change recorded, and none for sending the same value again");
});
