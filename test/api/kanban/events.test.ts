/**
 * Live board events through pusher-js on `private-kanban-board.{boardId}`: a card's
 * creation, update (with `changes`) and move each arrive once with the spec's data; failed
 * requests (a full column, an invalid assignee, a viewer's change) publish nothing; a
 * stranger's subscription is refused. The event log is compared once a final marker
 * event has arrived, so no timing decides the result.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { connectPusher } from "../../support/pusher.ts";

const KEY = "test-app-key";

t.test("board events", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const viewer = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Live" })).body.project;
  await buildTeam(app.pool, owner.user.id, { [viewer.user.id]: 4 }, [project.id]);
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Live", columns: ["A", "B"] })).body.board;
  const [a, b] = board.columns as { id: number }[];
  await api.put(`/api/kanban-columns/${b!.id}`, { wip_limit: 1 });

  const pusher = await connectPusher(t, app.url, KEY, viewer.token);
  const channel = await pusher.subscribe(`private-kanban-board.${board.id}`);
  const seen: { event: string; data: any }[] = [];
  channel.bind_global((event: string, data: unknown) => {
    if (!event.startsWith("pusher:")) seen.push({ event, data });
  });

  const created = await api.post("/api/kanban-cards", { column_id: a!.id, title: "Live card" });
  t.equal(created.status, 201);
  const card = created.body.card;
  t.equal((await api.put(`/api/kanban-cards/${card.id}`, { title: "Renamed", priority: "high" })).status, 200);
  t.equal((await api.post(`/api/kanban-cards/${card.id}/move`, { column_id: b!.id, order: 0 })).status, 200);

  // Failures: nothing of them may reach the channel.
  const other = (await api.post("/api/kanban-cards", { column_id: a!.id, title: "Other" })).body.card;
  t.equal((await api.post(`/api/kanban-cards/${other.id}/move`, { column_id: b!.id, order: 0 })).status, 409);
  t.equal((await api.post("/api/kanban-cards", { column_id: b!.id, title: "Too many" })).status, 409);
  t.equal((await api.put(`/api/kanban-cards/${card.id}`, { title: "x", assignees: [stranger.user.id] })).status, 422);
  t.equal((await client(app.url, viewer.token).put(`/api/kanban-cards/${card.id}`, { title: "viewer" })).status, 403);

  const marker = pusher.next(channel, "CardUpdated");
  t.equal((await api.put(`/api/kanban-cards/${other.id}`, { title: "marker" })).status, 200);
  await marker;

  t.same(seen.map((e) => e.event), ["CardCreated", "CardUpdated", "CardMoved", "CardCreated", "CardUpdated"]);
  t.match(seen[0]!.data, { card: { id: card.id, title: "Live card", column_id: a!.id } });
  t.same(seen[1]!.data, { card_id: card.id, changes: { title: { old: "Live card", new: "Renamed" }, priority: { old: "medium", new: "high" } } });
  t.same(seen[2]!.data, { card_id: card.id, old_column_id: a!.id, new_column_id: b!.id, order: 0 });
  t.same(seen[4]!.data, { card_id: other.id, changes: { title: { old: "Other", new: "marker" } } });

  const outsider = await connectPusher(t, app.url, KEY, stranger.token);
  const refused = await outsider.subscribe(`private-kanban-board.${board.id}`).then(
    () => undefined,
    (e: { status?: number }) => e,
  );
  t.equal(refused?.status, 403, "a stranger may not subscribe");
});
