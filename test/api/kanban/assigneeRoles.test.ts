/**
 * Changing the kanban role of someone already assigned (`POST /kanban-cards/{id}/assignees`
 * again) is a change of the card like the others: an `assigned` activity and one
 * `CardUpdated` with `kanban_roles` ({old, new}, keyed by the person's user id). Re-sending the
 * same role, or none, changes nothing and records and publishes nothing. The event log is
 * compared once a final marker event has arrived, so no timing decides the result.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { connectPusher } from "../../support/pusher.ts";
import { until } from "../../support/wait.ts";

const KEY = "test-app-key";

t.test("a changed kanban role is recorded and published", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool, { name: "Grace Hopper" });
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Roles" })).body.project;
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 4 }, [project.id]);
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Roles", columns: ["A"] })).body.board;
  const card = (await api.post("/api/kanban-cards", { column_id: board.columns[0].id, title: "Roles" })).body.card;

  const pusher = await connectPusher(t, app.url, KEY, member.token);
  const channel = await pusher.subscribe(`private-kanban-board.${board.id}`);
  const seen: { event: string; data: any }[] = [];
  channel.bind_global((event: string, data: unknown) => {
    if (!event.startsWith("pusher:")) seen.push({ event, data });
  });
  const assign = (body: Record<string, unknown>) => api.post(`/api/kanban-cards/${card.id}/assignees`, { user_id: member.user.id, ...body });

  const first = await assign({ kanban_role: "SRM" });
  t.equal(first.status, 201, first.text);
  const changed = await assign({ kanban_role: "SDM" });
  t.equal(changed.status, 201, changed.text);
  t.match(changed.body.assignee, { user_id: member.user.id, assignment_id: first.body.assignee.assignment_id, kanban_role: "SDM", kanban_role_short: "SDM" });
  t.equal((await assign({ kanban_role: "SDM" })).body.assignee.kanban_role, "SDM", "the same role again");
  t.equal((await assign({})).body.assignee.kanban_role, "SDM", "no role given keeps the role");
  t.equal((await assign({ kanban_role: null })).body.assignee.kanban_role, null, "null clears it");

  // The marker is the last change: once its event is in the log, every earlier one is too
  // (events of one channel arrive in order). Waiting for "the next CardUpdated" instead could
  // be satisfied by an earlier change's event still on its way.
  t.equal((await api.put(`/api/kanban-cards/${card.id}`, { title: "marker" })).status, 200);
  await until(() => seen.some((e) => e.data?.changes?.title?.new === "marker"), { message: "the marker's CardUpdated" });

  const key = String(member.user.id);
  t.same(
    seen.map((e) => e.data),
    [
      { card_id: card.id, changes: { assignees: { old: [], new: [member.user.id] } } },
      { card_id: card.id, changes: { kanban_roles: { old: { [key]: "SRM" }, new: { [key]: "SDM" } } } },
      { card_id: card.id, changes: { kanban_roles: { old: { [key]: "SDM" }, new: { [key]: null } } } },
      { card_id: card.id, changes: { title: { old: "Roles", new: "marker" } } },
    ],
    "one CardUpdated per change, none for a request that changed nothing",
  );
  t.same(seen.map((e) => e.event), ["CardUpdated", "CardUpdated", "CardUpdated", "CardUpdated"]);

  const activities = (await api.get(`/api/kanban-cards/${card.id}`)).body.card.activities as { type: string; description: string; changes: unknown; actor: { id: number } }[];
  const roles = activities.filter((a) => a.type === "assigned" && "kanban_roles" in (a.changes as object));
  t.same(
    roles.map((a) => [a.description, a.changes]).sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    [
      ["made Grace Hopper SDM", { kanban_roles: { old: { [key]: "SRM" }, new: { [key]: "SDM" } } }],
      ["removed the kanban role of Grace Hopper", { kanban_roles: { old: { [key]: "SDM" }, new: { [key]: null } } }],
    ],
    "each role change is an activity",
  );
  t.ok(roles.every((a) => a.actor.id === owner.user.id), "by whoever changed it");
});
