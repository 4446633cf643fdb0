/**
 * The board list's answer cache and ETag: after every kind of write that changes what
 * `GET /projects/{p}/kanban` shows, the next read shows it, whether the write went through
 * this process, another web process on the same database, or plain SQL; `If-None-Match`
 * with the current ETag answers 304 and with an old one the new board.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { spawnReady } from "../../support/processes.ts";

interface Card {
  id: number;
  title: string;
  position: number;
  comments_count: number;
  assignees: { user_id: number; name: string; initials: string; color: string }[];
  labels: { id: number; name: string; color: string }[];
}
interface Column {
  id: number;
  name: string;
  card_count: number;
  cards: Card[];
}
interface Board {
  id: number;
  name: string;
  columns: Column[];
}

t.test("the board read follows every write, from any process", async (t) => {
  const app = await startTestApp(t);
  const other = await spawnReady(t, "test/support/webProcess.ts", { DATABASE_URL: app.db.url, APP_URL: app.config.appUrl });
  const otherUrl = `http://127.0.0.1:${/ready (\d+)/.exec(other.output())![1]}`;
  const owner = await buildUserWithToken(app.pool, { name: "Ada Lovelace" });
  const member = await buildUserWithToken(app.pool, { name: "Grace Hopper" });
  const stranger = await buildUserWithToken(app.pool);
  const here = client(app.url, owner.token);
  const there = client(otherUrl, owner.token);
  const project = (await here.post("/api/projects", { name: "Cached board" })).body.project;
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project.id]);
  const board = (await here.post(`/api/projects/${project.id}/kanban`, { name: "Sprint", columns: ["To do", "Done"] })).body.board as Board;
  const [todo, done] = board.columns;
  const label = (await there.post(`/api/kanban-boards/${board.id}/labels`, { name: "bug", color: "#FF0000" })).body.label as { id: number };

  // Reads go to this process, whose cache is warm before each write.
  const read = async (as = owner.token) => {
    const res = await request(app.url, "GET", `/api/projects/${project.id}/kanban`, { token: as });
    if (res.status !== 200) t.fail(`the board read answered ${res.status}: ${res.text}`);
    return { boards: res.body.data as Board[], etag: res.headers.get("etag") };
  };
  const only = async () => (await read()).boards[0]!;
  const cardsOf = async (columnId: number) => (await only()).columns.find((c) => c.id === columnId)!.cards;
  const card = async (id: number) => (await only()).columns.flatMap((c) => c.cards).find((c) => c.id === id);

  await only();
  const a = (await there.post("/api/kanban-cards", { column_id: todo!.id, title: "A" })).body.card as Card;
  t.same((await cardsOf(todo!.id)).map((c) => c.title), ["A"], "a card created by the other process shows");
  const b = (await here.post("/api/kanban-cards", { column_id: todo!.id, title: "B", order: 0 })).body.card as Card;
  t.same((await cardsOf(todo!.id)).map((c) => c.title), ["B", "A"], "a card created here shows");

  await only();
  t.equal((await there.post(`/api/kanban-cards/${b.id}/move`, { column_id: done!.id, order: 0 })).status, 200);
  const afterMove = await only();
  t.same(afterMove.columns.map((c) => [c.card_count, c.cards.map((k) => k.title)]), [[1, ["A"]], [1, ["B"]]], "a move shows with counts and positions");

  t.equal((await there.put(`/api/kanban-cards/${a.id}`, { title: "A2" })).status, 200);
  t.equal((await card(a.id))?.title, "A2", "a card update shows");

  t.equal((await there.put(`/api/kanban-columns/${todo!.id}`, { name: "Backlog" })).status, 200);
  t.equal((await only()).columns[0]!.name, "Backlog", "a column rename shows");

  t.equal((await there.put(`/api/kanban-boards/${board.id}`, { name: "Sprint 2" })).status, 200);
  t.equal((await only()).name, "Sprint 2", "a board rename shows");

  t.equal((await there.put(`/api/kanban-cards/${a.id}`, { labels: [label.id] })).status, 200);
  t.same((await card(a.id))?.labels.map((l) => l.name), ["bug"], "a label put on a card shows");
  t.equal((await there.put(`/api/kanban-labels/${label.id}`, { name: "defect", color: "#00FF00" })).status, 200);
  t.match((await card(a.id))?.labels, [{ name: "defect", color: "#00FF00" }], "a label change shows on its cards");

  const assigned = await there.post(`/api/kanban-cards/${a.id}/assignees`, { user_id: member.user.id, kanban_role: "SRM" });
  t.equal(assigned.status, 201, assigned.text);
  t.match((await card(a.id))?.assignees, [{ user_id: member.user.id, name: "Grace Hopper", initials: "GH" }], "an assignee shows");
  t.equal((await request(otherUrl, "PUT", "/api/profile", { token: member.token, body: { kanban_initials: "GRH", kanban_color: "#123456" } })).status, 200);
  t.match((await card(a.id))?.assignees, [{ initials: "GRH", color: "#123456" }], "the assignee's new initials and colour show");
  t.equal((await request(otherUrl, "PUT", "/api/profile", { token: member.token, body: { name: "Grace B. Hopper" } })).status, 200);
  t.match((await card(a.id))?.assignees, [{ name: "Grace B. Hopper" }], "the assignee's new name shows");

  t.equal((await card(a.id))?.comments_count, 0);
  t.equal((await client(otherUrl, member.token).post(`/api/kanban-cards/${a.id}/comments`, { body: "Looks good" })).status, 201);
  t.equal((await card(a.id))?.comments_count, 1, "a comment counts");

  t.equal((await there.delete(`/api/kanban-cards/${b.id}`)).status, 200);
  t.equal(await card(b.id), undefined, "a deleted card is gone");
  t.same((await only()).columns.map((c) => c.card_count), [1, 0]);

  // Plain SQL, as any other writer: the version triggers still move the answer on.
  await only();
  await app.pool.query(sql.type(z.object({}))`update kanban_cards set title = 'From SQL' where id = ${a.id}`);
  t.equal((await card(a.id))?.title, "From SQL", "a direct SQL card update shows");
  await app.pool.query(sql.type(z.object({}))`update users set kanban_color = '#ABCDEF' where id = ${member.user.id}`);
  t.match((await card(a.id))?.assignees, [{ color: "#ABCDEF" }], "a direct SQL colour change shows");
  await app.pool.query(sql.type(z.object({}))`delete from kanban_comments where card_id = ${a.id}`);
  t.equal((await card(a.id))?.comments_count, 0, "a direct SQL comment delete shows");
  await app.pool.query(sql.type(z.object({}))`insert into kanban_boards (project_id, name) values (${project.id}, 'Second')`);
  t.same((await read()).boards.map((x) => x.name), ["Sprint 2", "Second"], "a new board shows");

  t.test("ETag and 304", async (t) => {
    const first = await read();
    t.match(first.etag, /^"kb\d+-[A-Za-z0-9_-]+"$/);
    const again = await request(otherUrl, "GET", `/api/projects/${project.id}/kanban`, { token: owner.token });
    t.equal(again.headers.get("etag"), first.etag, "the other process names the same state with the same ETag");
    const notModified = await request(app.url, "GET", `/api/projects/${project.id}/kanban`, { token: member.token, headers: { "if-none-match": `W/${first.etag!}` } });
    t.equal(notModified.status, 304);
    t.equal(notModified.text, "");
    t.equal(notModified.headers.get("etag"), first.etag);
    await there.put(`/api/kanban-columns/${done!.id}`, { name: "Shipped" });
    const changed = await request(app.url, "GET", `/api/projects/${project.id}/kanban`, { token: owner.token, headers: { "if-none-match": first.etag! } });
    t.equal(changed.status, 200, "an old ETag gets the new board");
    t.not(changed.headers.get("etag"), first.etag);
    t.equal((changed.body.data as Board[])[0]!.columns[1]!.name, "Shipped");
  });

  t.test("the cache answers no one who may not see the project", async (t) => {
    const { etag } = await read();
    const refused = await request(app.url, "GET", `/api/projects/${project.id}/kanban`, { token: stranger.token, headers: { "if-none-match": etag! } });
    t.equal(refused.status, 404, "a stranger is refused even with the current ETag");
    t.equal(refused.headers.get("etag"), null);
    t.equal((await request(app.url, "GET", `/api/projects/${project.id}/kanban`, { token: stranger.token })).status, 404);
    t.equal((await request(app.url, "GET", `/api/projects/${project.id}/kanban`)).status, 401);
  });
});
