/**
 * Security review finding 6: adding a team member by e-mail answers the same whether or
 * not the address has an account, and nobody joins a team without accepting: in the app, or
 * by registering with the invitation's link (verifying the address then joins that team only).
 */
import t from "tap";
import { z } from "zod";
import { verificationLink } from "../../../shared/auth/emailVerification.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startSmtp } from "../../support/smtp.ts";

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

t.test("verifying an address joins only the teams its account registered for", async (t) => {
  const smtp = await startSmtp(t);
  const app = await startTestApp(t, { worker: true, env: { SMTP_URL: smtp.url } });
  const inviter = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const registeredFor = await buildTeam(app.pool, inviter.user.id);
  const notAccepted = await buildTeam(app.pool, stranger.user.id);
  const publicApi = client(app.url);
  const verify = async (user: { id: number; email: string }) => {
    const link = new URL(verificationLink(app.config.frontendUrl, app.config.appKey, user));
    const verified = await publicApi.post(`/api/auth/email/verify${link.pathname.slice("/verify-email".length)}${link.search}`);
    t.equal(verified.status, 200, verified.text);
    return verified.body;
  };
  const teamsOf = async (token: string) => (await client(app.url, token).get("/api/teams")).body.data.map((x: { id: number }) => x.id);

  // Registered with an invitation's token: that team, and no team that invited the address after.
  t.equal((await client(app.url, inviter.token).post(`/api/teams/${registeredFor}/members`, { email: "newcomer@example.test", role_id: 3 })).status, 201);
  const mail = await smtp.waitFor("newcomer@example.test", /invited you to the team/);
  const token = new URL(mail.links.find((l) => l.includes("invitation_token"))!).searchParams.get("invitation_token")!;
  const newcomer = (await publicApi.post("/api/auth/register", { name: "Newcomer", email: "newcomer@example.test", password: "long password", invitation_token: token })).body.user;
  t.equal((await client(app.url, stranger.token).post(`/api/teams/${notAccepted}/members`, { email: "newcomer@example.test", role_id: 2 })).status, 201);
  const joined = await verify(newcomer);
  t.equal(joined.invitation_auto_accepted, true);
  t.same(await teamsOf(joined.access_token), [registeredFor], "the team registered for, not the one that invited the address since");
  const open = (await client(app.url, joined.access_token).get("/api/team-invitations")).body.data;
  t.match(open, [{ team: { id: notAccepted } }], "which waits for an answer");

  // Registered without one: an invitation sent to the address meanwhile waits too.
  const plain = (await publicApi.post("/api/auth/register", { name: "Plain", email: "plain@example.test", password: "long password" })).body.user;
  t.equal((await client(app.url, stranger.token).post(`/api/teams/${notAccepted}/members`, { email: "plain@example.test", role_id: 3 })).status, 201);
  const verified = await verify(plain);
  t.equal(verified.invitation_auto_accepted, false);
  t.same(await teamsOf(verified.access_token), [], "no team joined by verifying");
  const waiting = (await client(app.url, verified.access_token).get("/api/team-invitations")).body.data;
  t.equal((await client(app.url, verified.access_token).post(`/api/team-invitations/${waiting[0].id}/accept`)).status, 200, "accepted when the account says so");
  t.same(await teamsOf(verified.access_token), [notAccepted]);
});

t.test("an invitation lapses when whoever sent it may no longer give that role", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool);
  const removedAdmin = await buildUserWithToken(app.pool);
  const invitees = [await buildUserWithToken(app.pool), await buildUserWithToken(app.pool), await buildUserWithToken(app.pool)];
  const team = await buildTeam(app.pool, owner.user.id, { [admin.user.id]: 2, [removedAdmin.user.id]: 2 });
  const api = client(app.url, owner.token);
  const memberIds = async () => (await api.get(`/api/teams/${team}/members`)).body.data.map((m: { user: { id: number } }) => m.user.id);
  const invite = async (by: string, email: string, role_id: number) => t.equal((await client(app.url, by).post(`/api/teams/${team}/members`, { email, role_id })).status, 201);
  await invite(admin.token, invitees[0]!.user.email, 3);
  await invite(removedAdmin.token, invitees[1]!.user.email, 4);
  await invite(owner.token, invitees[2]!.user.email, 2);
  const ids = await Promise.all(invitees.map(async (i) => (await client(app.url, i.token).get("/api/team-invitations")).body.data[0]?.id as number));
  t.ok(ids.every((id) => id > 0), "each invitee sees their invitation");

  t.equal((await api.put(`/api/teams/${team}/members/${admin.user.id}`, { role_id: 3 })).status, 200, "the first admin is demoted");
  t.equal((await api.delete(`/api/teams/${team}/members/${removedAdmin.user.id}`)).status, 200, "the second removed");
  for (const [n, invitee] of invitees.slice(0, 2).entries()) {
    const inviteeApi = client(app.url, invitee.token);
    t.same((await inviteeApi.get("/api/team-invitations")).body.data, [], "no longer listed");
    t.equal((await inviteeApi.post(`/api/team-invitations/${ids[n]}/accept`)).status, 404, "nor accepted");
  }
  t.equal((await client(app.url, invitees[2]!.token).post(`/api/team-invitations/${ids[2]}/accept`)).status, 200, "the owner's invitation stands");
  t.same((await memberIds()).sort(), [owner.user.id, admin.user.id, invitees[2]!.user.id].sort(), "only its invitee joined");
});

t.test("an account that has not proven its address neither sees nor answers the invitations sent to it", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const team = await buildTeam(app.pool, owner.user.id);
  t.equal((await client(app.url, owner.token).post(`/api/teams/${team}/members`, { email: "someone@example.test", role_id: 3 })).status, 201);
  const invitation = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`select id from team_invitations where email = 'someone@example.test'`);

  // Anyone may register with the address (without the invitation's link) and sign in before verifying it.
  const publicApi = client(app.url);
  const registered = await publicApi.post("/api/auth/register", { name: "Not Someone", email: "someone@example.test", password: "long password" });
  t.equal(registered.status, 201, registered.text);
  t.equal(registered.body.has_pending_invitation, false, "registering does not tell");
  const login = await publicApi.post("/api/auth/login", { email: "someone@example.test", password: "long password" });
  t.equal(login.status, 200, login.text);
  t.equal(login.body.has_pending_invitation, false, "nor signing in");
  const squatter = client(app.url, login.body.access_token);
  t.same((await squatter.get("/api/team-invitations")).body.data, [], "the team, its inviter and the role stay hidden");
  t.equal((await squatter.post(`/api/team-invitations/${invitation}/decline`)).status, 404, "and the invitation cannot be thrown away");
  t.ok(await app.pool.exists(sql.type(z.object({}))`select 1 from team_invitations where id = ${invitation}`), "it still waits for the owner of the address");

  const user = (await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`select id from users where email = 'someone@example.test'`));
  await app.pool.query(sql.type(z.object({}))`update users set email_verified_at = now() where id = ${user}`);
  t.equal((await squatter.get("/api/team-invitations")).body.data.length, 1, "a verified address sees it");
});
