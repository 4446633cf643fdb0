import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";

const eventTypes = sql.type(z.object({ event_type: z.string() }));

t.test("projects", async (t) => {
  const app = await startTestApp(t);
  const alice = await buildUserWithToken(app.pool);
  const bob = await buildUserWithToken(app.pool);
  const api = client(app.url, alice.token);

  t.test("create: 201 with counts and a subscription to the default plan", async (t) => {
    const res = await api.post("/api/projects", { name: "Shop", description: "An online shop", is_public: false });
    t.equal(res.status, 201, res.text);
    const p = res.body.project;
    t.match(p, { name: "Shop", description: "An online shop", owner_id: alice.user.id, is_locked: false, access: "owner", teams_count: 0, schemas_count: 0 });
    t.same(p.owner, { id: alice.user.id, name: alice.user.name, username: alice.user.username });
    t.equal(p.subscription.is_expired, false);
    t.equal(p.subscription.days_remaining, 365);
    const subs = await api.get("/api/subscriptions");
    t.match(subs.body.data[0], { project_id: p.id, plan: { code: "free" }, credits_allocated: 100, credits_used: 0, is_expired: false });
    const bad = await api.post("/api/projects", { name: "", form_designer_grid_size: 0 });
    t.equal(bad.status, 422);
    t.same(Object.keys(bad.body.errors).sort(), ["form_designer_grid_size", "name"]);
  });

  t.test("list: own and shared, paginated; the public gallery; search", async (t) => {
    const shared = await buildProject(app.pool, bob.user.id, { name: "Bob's shared" });
    await buildTeam(app.pool, bob.user.id, { [alice.user.id]: 4 }, [shared]);
    const publicOne = await buildProject(app.pool, bob.user.id, { name: "Bob's public", isPublic: true });
    await buildProject(app.pool, bob.user.id, { name: "Bob's private" });
    const mine = await api.get("/api/projects?per_page=10");
    const names = mine.body.data.map((p: { name: string }) => p.name);
    t.ok(names.includes("Shop") && names.includes("Bob's shared"));
    t.notOk(names.includes("Bob's private") || names.includes("Bob's public"));
    t.equal(mine.body.data.find((p: { id: number }) => p.id === shared).access, "viewer");
    t.match(mine.body.meta, { current_page: 1, per_page: 10, total: 2 });
    const gallery = await api.get("/api/projects?public=true");
    t.same(gallery.body.data.map((p: { id: number }) => p.id), [publicOne]);
    t.match(gallery.body.data[0], { name: "Bob's public", is_public: true, owner: { id: bob.user.id }, access: null, join_code: null, teams_count: 0 });
    t.notOk("teams" in gallery.body.data[0], "the gallery shows list fields only");
    const bobApi = client(app.url, bob.token);
    t.same((await bobApi.get("/api/projects?public=true")).body.data.map((p: { id: number }) => p.id), [publicOne], "the owner's gallery shows it too");
    t.equal((await bobApi.get(`/api/projects/${publicOne}`)).status, 200, "the owner reads it");
    // Being public only lists a project in the gallery: nothing of it or inside it is shown to a stranger.
    const inside = ["", "/schemas", "/templates", "/code-generations", "/environments", "/deployments", "/webhooks", "/export", "/translations/export?format=csv"];
    for (const path of inside) {
      const res = await api.get(`/api/projects/${publicOne}${path}`);
      t.equal(res.status, 404, `GET /projects/{public}${path}: 404 for a stranger`);
      t.equal(res.body.code, "not_found");
    }
    t.equal((await api.put(`/api/projects/${publicOne}`, { name: "mine now" })).status, 404, "nor is it changed");
    const search = await api.get("/api/projects?q=sho");
    t.same(search.body.data.map((p: { name: string }) => p.name), ["Shop"]);
  });

  t.test("update, settings, join code; ProjectUpdated recorded", async (t) => {
    const id = (await api.post("/api/projects", { name: "Settings" })).body.project.id;
    const res = await api.put(`/api/projects/${id}`, { form_designer_snap_to_grid: false, form_designer_grid_size: 16, allow_join_requests: true });
    t.equal(res.status, 200, res.text);
    t.match(res.body.project, { form_designer_snap_to_grid: false, form_designer_grid_size: 16, allow_join_requests: true });
    t.match(res.body.project.join_code, /^[A-Za-z0-9_-]{6,32}$/, "a code is generated when join requests open");
    t.equal((await api.put(`/api/projects/${id}`, { join_code: "a b" })).status, 422);
    t.equal((await api.put(`/api/projects/${id}`, {})).status, 422, "nothing to change");
    const events = await app.pool.anyFirst(sql.type(z.object({ event_type: z.string() }))`select event_type from outbox_events where project_id = ${id}`);
    t.same(events, ["ProjectUpdated"]);

    const joiner = await buildUserWithToken(app.pool);
    const joined = await client(app.url, joiner.token).post("/api/projects/join", { join_code: res.body.project.join_code });
    t.equal(joined.status, 200, joined.text);
    t.equal(joined.body.project.access, "member");
    t.equal((await client(app.url, joiner.token).post("/api/projects/join", { join_code: res.body.project.join_code })).status, 409);
    t.equal((await client(app.url, joiner.token).post("/api/projects/join", { join_code: "nope-nope" })).status, 404);
    t.equal((await client(app.url, joiner.token).get(`/api/projects/${id}`)).body.project.access, "member", "a joiner reads the project");
    await api.put(`/api/projects/${id}`, { allow_join_requests: false });
    const late = await buildUserWithToken(app.pool);
    t.equal((await client(app.url, late.token).post("/api/projects/join", { join_code: res.body.project.join_code })).status, 404, "closed");
  });

  t.test("joining a public project by its code; refused while locked (423) or expired (402)", async (t) => {
    const project = (await api.post("/api/projects", { name: "Open house", is_public: true, allow_join_requests: true })).body.project;
    const stranger = await buildUserWithToken(app.pool);
    const visitor = client(app.url, stranger.token);
    t.equal((await visitor.get(`/api/projects/${project.id}`)).status, 404, "public, but not readable before joining");
    const memberships = () => app.pool.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from team_members tm join team_projects tp on tp.team_id = tm.team_id
      where tp.project_id = ${project.id} and tm.user_id = ${stranger.user.id}`);

    await api.post(`/api/projects/${project.id}/lock`);
    const locked = await visitor.post("/api/projects/join", { join_code: project.join_code });
    t.equal(locked.status, 423);
    t.equal(locked.body.code, "project_locked");
    await api.post(`/api/projects/${project.id}/unlock`);

    await app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() - interval '1 day' where project_id = ${project.id}`);
    const expired = await visitor.post("/api/projects/join", { join_code: project.join_code });
    t.equal(expired.status, 402);
    t.equal(expired.body.code, "subscription_expired");
    t.equal(await memberships(), 0, "not joined while refused");
    await app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() + interval '30 days' where project_id = ${project.id}`);

    const joined = await visitor.post("/api/projects/join", { join_code: project.join_code });
    t.equal(joined.status, 200, joined.text);
    t.equal((await visitor.get(`/api/projects/${project.id}`)).body.project.access, "member", "a member now");
    t.equal(await memberships(), 1);
  });

  t.test("a locked project refuses changes with 423; an expired subscription with 402", async (t) => {
    const id = (await api.post("/api/projects", { name: "Lockable" })).body.project.id;
    t.equal((await api.post(`/api/projects/${id}/lock`)).status, 200);
    t.equal((await api.get(`/api/projects/${id}`)).body.project.is_locked, true);
    const refused = await api.put(`/api/projects/${id}`, { name: "changed" });
    t.equal(refused.status, 423);
    t.equal(refused.body.code, "project_locked");
    t.equal((await api.delete(`/api/projects/${id}`)).status, 423);
    t.equal((await api.post(`/api/projects/${id}/unlock`)).status, 200);
    t.equal((await api.put(`/api/projects/${id}`, { name: "changed" })).status, 200);
    t.same(await app.pool.anyFirst(eventTypes`select event_type from outbox_events where project_id = ${id} order by id`), ["ProjectLocked", "ProjectUnlocked", "ProjectUpdated"]);

    await app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() - interval '1 day' where project_id = ${id}`);
    const expired = await api.get(`/api/projects/${id}`);
    t.match(expired.body.project.subscription, { is_expired: true, days_remaining: 0 });
    const soft = await api.put(`/api/projects/${id}`, { name: "again" });
    t.equal(soft.status, 402);
    t.equal(soft.body.code, "subscription_expired");
    t.equal((await api.delete(`/api/projects/${id}`)).status, 200, "the owner may still delete it");
  });

  t.test("archiving follows delete: allowed when the subscription expired, refused (423) while locked", async (t) => {
    const id = (await api.post("/api/projects", { name: "Lapsed" })).body.project.id;
    await app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() - interval '1 day' where project_id = ${id}`);
    const archived = await api.post(`/api/projects/${id}/archive`);
    t.equal(archived.status, 200, archived.text);
    t.equal(archived.body.project.is_archived, true);
    const restored = await api.post(`/api/projects/${id}/unarchive`);
    t.equal(restored.status, 200, restored.text);
    t.equal(restored.body.project.is_archived, false);
    t.equal((await api.put(`/api/projects/${id}`, { name: "again" })).body.code, "subscription_expired", "still soft-locked for changes");
    await app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() + interval '30 days' where project_id = ${id}`);
    t.equal((await api.post(`/api/projects/${id}/lock`)).status, 200);
    const locked = await api.post(`/api/projects/${id}/archive`);
    t.equal(locked.status, 423);
    t.equal(locked.body.code, "project_locked");
    t.equal((await api.get(`/api/projects/${id}`)).body.project.is_archived, false, "nothing changed");
  });

  t.test("archive hides a project and makes it read-only; delete is soft", async (t) => {
    const id = (await api.post("/api/projects", { name: "Old stuff" })).body.project.id;
    t.equal((await api.post(`/api/projects/${id}/archive`)).body.project.is_archived, true);
    t.notOk((await api.get("/api/projects")).body.data.some((p: { id: number }) => p.id === id));
    t.ok((await api.get("/api/projects?archived=true")).body.data.some((p: { id: number }) => p.id === id));
    t.equal((await api.put(`/api/projects/${id}`, { name: "x" })).body.code, "project_archived");
    t.equal((await api.post(`/api/projects/${id}/unarchive`)).body.project.is_archived, false);
    t.equal((await api.delete(`/api/projects/${id}`)).status, 200);
    t.equal((await api.get(`/api/projects/${id}`)).status, 404, "gone for every read");
    t.equal((await api.delete(`/api/projects/${id}`)).status, 404);
    const kept = await app.pool.one(sql.type(z.object({ deleted: z.boolean() }))`select deleted_at is not null as deleted from projects where id = ${id}`);
    t.equal(kept.deleted, true, "the record is kept");
  });

  t.test("concurrent updates both apply; a lock racing an update never leaves a modified locked project", async (t) => {
    for (let round = 0; round < 15; round += 1) {
      const id = (await api.post("/api/projects", { name: `Race ${round}` })).body.project.id;
      const [a, b, lock] = await Promise.all([
        api.put(`/api/projects/${id}`, { name: `renamed ${round}` }),
        api.put(`/api/projects/${id}`, { description: `described ${round}` }),
        api.post(`/api/projects/${id}/lock`),
      ]);
      t.equal(lock.status, 200);
      for (const res of [a, b]) t.ok(res.status === 200 || res.status === 423, `update ${res.status}`);
      const final = (await api.get(`/api/projects/${id}`)).body.project;
      t.equal(final.is_locked, true);
      t.equal(final.name === `renamed ${round}`, a.status === 200, "a name change is there exactly when its update succeeded");
      t.equal(final.description === `described ${round}`, b.status === 200, "likewise the description");
      const events = await app.pool.anyFirst(eventTypes`select event_type from outbox_events where project_id = ${id} order by id`);
      t.equal(events.at(-1), "ProjectLocked", "no update committed after the lock");
    }
  });
});
