/**
 * Security review finding 6: adding a team member by e-mail answers the same whether or
 * not the address has an account, and nobody joins a team without accepting.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("member adds are invitations", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const invitee = await buildUserWithToken(app.pool);
  const other = await buildUserWithToken(app.pool);
  const team = await buildTeam(app.pool, owner.user.id);
  const api = client(app.url, owner.token);
  const inviteeApi = client(app.url, invitee.token);
  const memberIds = async () => (await api.get(`/api/teams/${team}/members`)).body.data.map((m: { user: { id: number } }) => m.user.id);

  const known = await api.post(`/api/teams/${team}/members`, { email: invitee.user.email, role_id: 3 });
  const unknown = await api.post(`/api/teams/${team}/members`, { email: "nobody-yet@example.test", role_id: 3 });
  t.equal(known.status, 201, known.text);
  t.equal(unknown.status, 201, unknown.text);
  const shape = (body: Record<string, unknown>) => ({ keys: Object.keys(body).sort(), message: body.message, invitation: Object.keys(body.invitation as object).sort() });
  t.same(shape(known.body), shape(unknown.body), "an account and an unknown address get the same answer");
  t.same(await memberIds(), [owner.user.id], "nobody joined without accepting");
  t.equal((await inviteeApi.get(`/api/teams/${team}`)).status, 404, "the invitee does not see the team yet");

  const listed = await inviteeApi.get("/api/team-invitations");
  t.equal(listed.status, 200);
  t.equal(listed.body.data.length, 1);
  const id = listed.body.data[0].id as number;
  t.match(listed.body.data[0], { team: { id: team }, role: { name: "member" } });
  t.same((await client(app.url, other.token).get("/api/team-invitations")).body.data, [], "nobody else sees it");
  t.equal((await client(app.url, other.token).post(`/api/team-invitations/${id}/accept`)).status, 404, "nor accepts it");
  t.same(await memberIds(), [owner.user.id]);

  const accepted = await inviteeApi.post(`/api/team-invitations/${id}/accept`);
  t.equal(accepted.status, 200, accepted.text);
  t.same((await memberIds()).sort(), [owner.user.id, invitee.user.id].sort(), "accepting joins");
  t.equal((await inviteeApi.post(`/api/team-invitations/${id}/accept`)).status, 404, "once");

  await api.post(`/api/teams/${team}/members`, { email: other.user.email, role_id: 4 });
  const otherApi = client(app.url, other.token);
  const declined = await otherApi.post(`/api/team-invitations/${(await otherApi.get("/api/team-invitations")).body.data[0].id}/decline`);
  t.equal(declined.status, 200);
  t.same((await otherApi.get("/api/team-invitations")).body.data, []);
  t.notOk((await memberIds()).includes(other.user.id), "declining does not join");
});
