import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { startSmtp } from "../support/smtp.ts";

t.test("teams, members and invitations", async (t) => {
  const smtp = await startSmtp(t);
  const app = await startTestApp(t, { worker: true, env: { SMTP_URL: smtp.url } });
  const owner = await buildUserWithToken(app.pool);
  const carol = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const team = (await api.post("/api/teams", { name: "Core", description: "The core team" })).body.team;
  const project = (await api.post("/api/projects", { name: "Engine" })).body.project;

  t.test("create, list, roles", async (t) => {
    t.match(team, { name: "Core", owner_id: owner.user.id, members_count: 1, projects_count: 0, role: "owner" });
    t.same((await api.get("/api/team-roles")).body.data, [
      { id: 1, name: "owner" },
      { id: 2, name: "admin" },
      { id: 3, name: "member" },
      { id: 4, name: "viewer" },
    ]);
    t.same((await api.get("/api/teams")).body.data.map((x: { id: number }) => x.id), [team.id]);
    t.equal((await client(app.url, carol.token).get("/api/teams")).body.data.length, 0);
    t.equal((await api.post("/api/teams", { name: " " })).status, 422);
  });

  t.test("an existing user joins on accepting the invitation; roles change; the owner stays the owner", async (t) => {
    const added = await api.post(`/api/teams/${team.id}/members`, { email: carol.user.email.toUpperCase(), role_id: 4 });
    t.equal(added.status, 201, added.text);
    t.match(added.body, { message: "Invitation sent.", invitation: { role: "viewer" } });
    const invitation = (await client(app.url, carol.token).get("/api/team-invitations")).body.data[0];
    t.match(invitation, { team: { id: team.id }, role: { id: 4, name: "viewer" } });
    t.equal((await client(app.url, carol.token).post(`/api/team-invitations/${invitation.id}/accept`)).status, 200);
    t.equal((await api.post(`/api/teams/${team.id}/members`, { email: carol.user.email, role_id: 3 })).status, 409);
    t.equal((await api.post(`/api/teams/${team.id}/members`, { email: "x@example.test", role_id: 1 })).status, 422, "no second owner");
    t.equal((await api.post(`/api/teams/${team.id}/projects`, { project_id: project.id })).status, 201);
    const carolApi = client(app.url, carol.token);
    t.equal((await carolApi.get(`/api/projects/${project.id}`)).body.project.access, "viewer", "sharing gives access");
    t.equal((await carolApi.put(`/api/projects/${project.id}`, { name: "x" })).status, 403);
    const promoted = await api.put(`/api/teams/${team.id}/members/${carol.user.id}`, { role_id: 2 });
    t.equal(promoted.body.member.role.name, "admin");
    t.equal((await carolApi.put(`/api/projects/${project.id}`, { description: "by carol" })).status, 200, "team admins manage the project");
    t.equal((await carolApi.put(`/api/teams/${team.id}/members/${owner.user.id}`, { role_id: 4 })).status, 422, "the owner's role is fixed");
    t.equal((await carolApi.delete(`/api/teams/${team.id}/members/${owner.user.id}`)).status, 403);
    const members = await api.get(`/api/teams/${team.id}/members`);
    t.same(members.body.data.map((m: { role: { name: string } }) => m.role.name), ["owner", "admin"]);
    const show = await api.get(`/api/projects/${project.id}`);
    t.same(
      show.body.project.teams,
      [{ id: team.id, name: "Core", description: "The core team", owner_id: owner.user.id, members_count: 2, projects_count: 1, role: "owner", created_at: team.created_at }],
      "a single read carries each team as the full Team resource",
    );
    t.equal((await carolApi.get(`/api/projects/${project.id}`)).body.project.teams[0].role, "admin", "with the caller's role in it");
    t.equal(show.body.project.teams_count, 1);
  });

  t.test("admins cannot appoint admins; members may leave", async (t) => {
    const dave = await buildUserWithToken(app.pool);
    const carolApi = client(app.url, carol.token);
    t.equal((await carolApi.post(`/api/teams/${team.id}/members`, { email: dave.user.email, role_id: 2 })).status, 403);
    t.equal((await carolApi.post(`/api/teams/${team.id}/members`, { email: dave.user.email, role_id: 3 })).status, 201);
    const daveInvitation = (await client(app.url, dave.token).get("/api/team-invitations")).body.data[0];
    t.equal((await client(app.url, dave.token).post(`/api/team-invitations/${daveInvitation.id}/accept`)).status, 200);
    t.equal((await client(app.url, dave.token).delete(`/api/teams/${team.id}/members/${dave.user.id}`)).status, 200, "leaving");
    t.equal((await client(app.url, dave.token).get(`/api/teams/${team.id}`)).status, 404, "gone");
  });

  t.test("an unknown e-mail is invited; registering with the token and verifying joins the team", async (t) => {
    const invited = await api.post(`/api/teams/${team.id}/members`, { email: "newbie@example.test", role_id: 3 });
    t.equal(invited.status, 201, invited.text);
    t.match(invited.body, { message: "Invitation sent.", invitation: { email: "newbie@example.test", role: "member" } });
    const mail = await smtp.waitFor("newbie@example.test", /invited you to the team Core/);
    const link = new URL(mail.links.find((l) => l.includes("invitation_token"))!);
    const token = link.searchParams.get("invitation_token")!;
    const publicApi = client(app.url);
    const wrongEmail = await publicApi.post("/api/auth/register", { name: "Impostor", email: "other@example.test", password: "long password", invitation_token: token });
    t.equal(wrongEmail.status, 422);
    t.ok(wrongEmail.body.errors.invitation_token);
    const registered = await publicApi.post("/api/auth/register", { name: "Newbie", email: "newbie@example.test", password: "long password", invitation_token: token });
    t.equal(registered.status, 201, registered.text);
    t.equal(registered.body.has_pending_invitation, true);
    const verifyMail = await smtp.waitFor("newbie@example.test", /Confirm your e-mail/);
    const verifyLink = new URL(verifyMail.links.find((l) => l.includes("/verify-email/"))!);
    const verified = await publicApi.post(`/api/auth/email/verify${verifyLink.pathname.slice("/verify-email".length)}${verifyLink.search}`);
    t.equal(verified.status, 200, verified.text);
    t.equal(verified.body.invitation_auto_accepted, true);
    t.equal(verified.body.project_name, "Engine");
    const newbie = client(app.url, verified.body.access_token);
    t.same((await newbie.get("/api/teams")).body.data.map((x: { id: number; role: string }) => [x.id, x.role]), [[team.id, "member"]]);
    t.equal((await newbie.get(`/api/projects/${project.id}`)).body.project.access, "member");
    const login = await publicApi.post("/api/auth/login", { email: "newbie@example.test", password: "long password" });
    t.equal(login.body.has_pending_invitation, false, "nothing pending any more");
  });

  t.test("sharing is part of the project: a locked, expired or archived project is neither shared nor unshared", async (t) => {
    const held = (await api.post("/api/projects", { name: "Held" })).body.project.id;
    const other = (await api.post("/api/teams", { name: "Other" })).body.team.id;
    t.equal((await api.post(`/api/teams/${other}/projects`, { project_id: held })).status, 201);
    const sharedWith = () => app.pool.anyFirst(sql.type(z.object({ team_id: z.number() }))`select team_id from team_projects where project_id = ${held} order by team_id`);
    const expiry = (interval: string) => app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() + ${interval}::interval where project_id = ${held}`);
    const states: [string, number, string, () => Promise<unknown>, () => Promise<unknown>][] = [
      ["locked", 423, "project_locked", () => api.post(`/api/projects/${held}/lock`), () => api.post(`/api/projects/${held}/unlock`)],
      ["expired", 402, "subscription_expired", () => expiry("-1 day"), () => expiry("30 days")],
      ["archived", 409, "project_archived", () => api.post(`/api/projects/${held}/archive`), () => api.post(`/api/projects/${held}/unarchive`)],
    ];
    for (const [state, status, code, enter, leave] of states) {
      await enter();
      const detach = await api.delete(`/api/teams/${other}/projects/${held}`);
      t.equal(detach.status, status, `${state}: unsharing refused`);
      t.equal(detach.body.code, code);
      const attach = await api.post(`/api/teams/${team.id}/projects`, { project_id: held });
      t.equal(attach.status, status, `${state}: sharing refused`);
      t.equal(attach.body.code, code);
      t.same(await sharedWith(), [other], `${state}: still shared with the same team`);
      await leave();
    }
    t.equal((await api.delete(`/api/teams/${other}/projects/${held}`)).status, 200, "unshared once the project accepts changes again");
    t.same(await sharedWith(), []);
    t.equal((await api.delete(`/api/teams/${other}/projects/${held}`)).status, 404, "not shared any more");
  });

  t.test("unsharing removes access; deleting a team keeps its projects", async (t) => {
    t.equal((await api.delete(`/api/teams/${team.id}/projects/${project.id}`)).status, 200);
    t.equal((await client(app.url, carol.token).get(`/api/projects/${project.id}`)).status, 404);
    t.equal((await api.delete(`/api/teams/${team.id}`)).status, 200);
    t.equal((await api.get(`/api/projects/${project.id}`)).status, 200);
    t.equal((await api.get(`/api/teams/${team.id}`)).status, 404);
  });
});

t.test("project export → import round trip gives an equal project", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const other = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const id = (await api.post("/api/projects", { name: "Exported", description: "with settings", form_designer_grid_size: 24, form_designer_snap_to_grid: false })).body.project.id;

  const exported = await api.get(`/api/projects/${id}/export`);
  t.equal(exported.status, 200);
  t.match(exported.headers.get("content-disposition"), /^attachment; filename="Exported-\d{4}-\d{2}-\d{2}\.json"$/);
  t.match(exported.body, { format: "schemaforge-project", version: 1, project: { name: "Exported" } });

  const otherApi = client(app.url, other.token);
  const checked = await otherApi.post("/api/projects/import/validate", exported.body);
  t.match(checked.body, { valid: true, errors: {}, summary: { name: "Exported", schemas: 0, templates: 0 } });
  const imported = await otherApi.post("/api/projects/import", { bundle: exported.body });
  t.equal(imported.status, 201, imported.text);
  t.equal(imported.body.project.owner_id, other.user.id);
  t.not(imported.body.project.id, id);
  const again = await otherApi.get(`/api/projects/${imported.body.project.id}/export`);
  const strip = (b: Record<string, unknown>) => ({ ...b, exported_at: undefined });
  t.same(strip(again.body), strip(exported.body), "the re-export equals the original");

  const bad: [string, unknown, string][] = [
    ["not a bundle", { hello: "world" }, "format"],
    ["future version", { ...exported.body, version: 99 }, "version"],
    ["broken project", { ...exported.body, project: { name: "" } }, "project.name"],
    ["unknown section", { ...exported.body, sections: { wormholes: [] } }, "sections.wormholes"],
  ];
  for (const [name, body, field] of bad) {
    const res = await otherApi.post("/api/projects/import", { bundle: body });
    t.equal(res.status, 422, name);
    t.ok(res.body.errors[field], `${name}: error on ${field}`);
    t.equal((await otherApi.post("/api/projects/import/validate", { bundle: body })).body.valid, false);
  }
  const huge = { ...exported.body, project: { ...exported.body.project, description: "x".repeat(11 * 1024 * 1024) } };
  const tooLarge = await otherApi.post("/api/projects/import", { bundle: huge });
  t.equal(tooLarge.status, 413, "a body over the limit is refused before it is read");
  t.equal(tooLarge.body.code, "payload_too_large");
  t.equal((await otherApi.get("/api/projects")).body.meta.total, 1, "nothing written by the refused imports");

  const form = new FormData();
  form.set("bundle", new Blob([JSON.stringify(exported.body)], { type: "application/json" }), "project.json");
  const upload = await fetch(`${app.url}/api/projects/import`, { method: "POST", headers: { authorization: `Bearer ${other.token}` }, body: form });
  t.equal(upload.status, 201, "a bundle file upload works too");
});
