/**
 * The kanban routes that change a board from a card, a label, a comment or an assignment
 * follow their project's state like the board and card routes: a locked project answers 423
 * `project_locked`, an expired subscription 402 `subscription_expired`, an archived project 409
 * `project_archived`, and nothing of the board changes. Found by the project-state fuzz
 * (test/api/fuzz.states.test.ts): their guards refused, but the routes did not list those
 * statuses, so tests got a 500 and the document hid the answers from clients.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken, projectStateRefusals, setProjectState } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("card moves, assignments, labels and comments are refused in a locked, expired or archived project", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "States" })).body.project as { id: number };
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project.id]);
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "B", columns: ["A", "B"] })).body.board;
  const [todo, done] = board.columns as { id: number }[];
  const card = (await api.post("/api/kanban-cards", { column_id: todo!.id, title: "Card" })).body.card;
  const label = (await api.post(`/api/kanban-boards/${board.id}/labels`, { name: "bug", color: "#ff0000" })).body.label;
  const comment = (await api.post(`/api/kanban-cards/${card.id}/comments`, { body: "First" })).body.comment;
  const assignee = (await api.post(`/api/kanban-cards/${card.id}/assignees`, { user_id: owner.user.id })).body.assignee;
  t.ok(card?.id && label?.id && comment?.id && assignee?.assignment_id, "the board's things exist");

  const changes: [string, string, unknown?][] = [
    ["POST", `/api/kanban-cards/${card.id}/move`, { column_id: done!.id, order: 0 }],
    ["POST", `/api/projects/${project.id}/kanban/cards/${card.id}/move`, { column_id: done!.id, order: 0 }],
    ["POST", `/api/kanban-cards/${card.id}/assignees`, { user_id: member.user.id }],
    ["DELETE", `/api/assignees/${assignee.assignment_id}`],
    ["POST", `/api/kanban-boards/${board.id}/labels`, { name: "feature", color: "#00ff00" }],
    ["PUT", `/api/kanban-labels/${label.id}`, { name: "defect", color: "#0000ff" }],
    ["DELETE", `/api/kanban-labels/${label.id}`],
    ["POST", `/api/kanban-cards/${card.id}/comments`, { body: "Second" }],
    ["POST", `/api/comments/${comment.id}/replies`, { body: "Reply" }],
    ["PUT", `/api/comments/${comment.id}`, { body: "Edited" }],
    ["DELETE", `/api/comments/${comment.id}`],
  ];
  const boardIds = sql.fragment`(select id from kanban_boards where project_id = ${project.id})`;
  const snapshot = () =>
    app.pool.oneFirst(sql.type(z.object({ rows: z.string() }))`
      select jsonb_build_array(
        (select jsonb_agg(to_jsonb(c) order by c.id) from kanban_cards c where c.board_id in ${boardIds}),
        (select jsonb_agg(to_jsonb(l) order by l.id) from kanban_labels l where l.board_id in ${boardIds}),
        (select jsonb_agg(to_jsonb(m) order by m.id) from kanban_comments m where m.card_id = ${card.id}),
        (select jsonb_agg(to_jsonb(a) order by a.id) from kanban_card_assignees a where a.card_id = ${card.id})
      )::text as rows`);
  const before = await snapshot();

  for (const { state, status, code } of projectStateRefusals) {
    await setProjectState(app.pool, project.id, state);
    for (const [method, path, body] of changes) {
      const res = await api[method.toLowerCase() as "post" | "put" | "delete"](path, body);
      t.match({ status: res.status, code: res.body?.code }, { status, code }, `${method} ${path} while ${state}`);
    }
  }
  t.equal(await snapshot(), before, "nothing of the board changed");
  await setProjectState(app.pool, project.id, "normal");
  t.equal((await api.post(`/api/kanban-cards/${card.id}/move`, { column_id: done!.id, order: 0 })).status, 200, "back to normal, the move goes through");
});
