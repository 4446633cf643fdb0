/**
 * A numeric id in a path is read only as written canonically: " 1", "1.0", "+1", "1e0", "0x1"
 * and "01" are malformed ids (404), not other addresses of resource 1.
 */
import t from "tap";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";

t.test("numeric path ids are read in canonical decimal form only", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const projectId = await buildProject(app.pool, user.id);
  t.equal((await api.get(`/api/projects/${projectId}`)).status, 200, "the canonical id is served");
  t.equal((await api.get(`/api/projects/${projectId}/schemas`)).status, 200, "and in a nested path");

  const spellings = [`%20${projectId}`, `${projectId}%20`, `${projectId}.0`, `%2B${projectId}`, `${projectId}e0`, `0x${projectId.toString(16)}`, `0${projectId}`, `0b${projectId.toString(2)}`];
  for (const spelling of spellings) {
    for (const path of [`/api/projects/${spelling}`, `/api/projects/${spelling}/schemas`]) {
      const res = await api.get(path);
      t.equal(res.status, 404, `${path}: a malformed id`);
      t.equal(res.body.code, "not_found");
    }
  }
  t.equal((await api.get("/api/projects/0")).status, 404, "zero is no id");
  t.equal((await api.get("/api/projects/99999999999999999999")).status, 404, "nor a number past the safe range");
});
