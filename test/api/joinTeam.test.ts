/**
 * The team of people who joined a project by its code: its managers may stop sharing the
 * project with it (DELETE /teams/{t}/projects/{p}) like with any team. Joining by the code
 * afterwards must still give access to the project, not a membership of a team the project
 * no longer has.
 */
import t from "tap";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";

t.test("joining by code after the join team was detached from the project", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Open door", allow_join_requests: true })).body.project;
  const first = await buildUserWithToken(app.pool);
  t.equal((await client(app.url, first.token).post("/api/projects/join", { join_code: project.join_code })).status, 200);
  const joinTeam = (await api.get(`/api/projects/${project.id}`)).body.project.teams[0].id as number;

  t.equal((await api.delete(`/api/teams/${joinTeam}/projects/${project.id}`)).status, 200, "the owner stops sharing with the joiners");
  t.equal((await client(app.url, first.token).get(`/api/projects/${project.id}`)).status, 404, "who lose access");

  const later = await buildUserWithToken(app.pool);
  const laterApi = client(app.url, later.token);
  const joined = await laterApi.post("/api/projects/join", { join_code: project.join_code });
  t.equal(joined.status, 200, joined.text);
  t.equal(joined.body.project?.access, "member", "the answer gives access");
  t.equal((await laterApi.get(`/api/projects/${project.id}`)).status, 200, "and the project reads");
  t.equal((await client(app.url, first.token).get(`/api/projects/${project.id}`)).status, 404, "the joiners sent away stay away");
});
