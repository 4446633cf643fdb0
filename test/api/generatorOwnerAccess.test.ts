/**
 * A generator carries its owner's right to the project's content: once the owner no longer
 * may edit that content (removed from the project's team, or made a viewer), neither the owner
 * (who would keep reading the project's current templates and schemas, and writing generations
 * into it) nor the members of the generator's team, whose reach into the project came through
 * the owner, run or change it; only a caller with that right of their own still may.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { buildTemplate } from "../support/templateFactories.ts";

t.test("a generator stops running and changing when its owner loses the project's content", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const owner = await buildUserWithToken(app.pool);
  // The generator's creator holds the admin role, which the spec asks of whoever updates a generator.
  const creator = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const friend = await buildUserWithToken(app.pool);
  const colleague = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, owner.user.id);
  const projectTeam = await buildTeam(app.pool, owner.user.id, { [creator.user.id]: 3, [colleague.user.id]: 3 }, [project]);
  const friends = await buildTeam(app.pool, creator.user.id, { [friend.user.id]: 3, [colleague.user.id]: 3 });
  const template = await buildTemplate(app.pool, { projectId: project }, owner.user.id, { content: "Secret {:name:}" });
  const creatorApi = client(app.url, creator.token);
  const friendApi = client(app.url, friend.token);
  const ownerApi = client(app.url, owner.token);
  const generations = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from code_generations where project_id = ${project}`);

  const created = await creatorApi.post("/api/generators", { project_id: project, name: "G", team_id: friends, template_ids: [template], values: { name: "x" }, status: "Published" });
  t.equal(created.status, 201, created.text);
  const id = created.body.generator.id as number;
  t.equal((await creatorApi.post(`/api/generators/${id}/execute`, {})).status, 200, "runs while its owner is a member of the project");
  t.equal((await friendApi.post(`/api/generators/${id}/execute`, {})).status, 200, "and for the members of its team");
  t.equal(await generations(), 2);

  for (const [how, leave, back] of [
    ["made a viewer", () => app.pool.query(sql.type(z.object({}))`update team_members set role_id = 4 where team_id = ${projectTeam} and user_id = ${creator.user.id}`), () => app.pool.query(sql.type(z.object({}))`update team_members set role_id = 3 where team_id = ${projectTeam} and user_id = ${creator.user.id}`)],
    ["removed from the project's team", () => ownerApi.delete(`/api/teams/${projectTeam}/members/${creator.user.id}`), null],
  ] as const) {
    await leave();
    for (const [who, api] of [["its owner", creatorApi], ["a member of its team", friendApi]] as const) {
      const run = await api.post(`/api/generators/${id}/execute`, {});
      t.equal(run.status, 403, `${how}: ${who} may not run it`);
      t.equal(run.body.code, "forbidden");
      t.notMatch(run.text, /Secret/, "nothing of the project's templates comes back");
    }
    const update = await creatorApi.put(`/api/generators/${id}`, { description: "still mine" });
    t.equal(update.status, 403, `${how}: its owner may not change it`);
    t.equal(await generations(), 2, `${how}: nothing was written into the project`);
    const own = await client(app.url, colleague.token).post(`/api/generators/${id}/execute`, {});
    t.equal(own.status, 200, `${how}: a member of its team who edits the project's content still runs it, on their own right`);
    await app.pool.query(sql.type(z.object({}))`delete from code_generations where id = ${own.body.code_generation_id}`);
    t.equal((await creatorApi.get(`/api/generators/${id}`)).status, 200, "its owner still sees it (and may delete it)");
    if (back) await back();
  }
  t.equal((await creatorApi.delete(`/api/generators/${id}`)).status, 200, "its owner, holding the admin role, clears it away");
});
