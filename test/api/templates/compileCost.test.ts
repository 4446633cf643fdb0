/**
 * What compiling a template costs the web process (`compile` and `structure` compile there,
 * synchronously): templates within the budgets compile in seconds at most, one past them is
 * refused before it is compiled, and the process answers other requests meanwhile or
 * promptly after.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

t.test("template compile cost", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const base = `/api/projects/${project}/templates`;
  const template = (content: string, files: { file_name: string; content: string }[] = []) =>
    buildTemplate(app.pool, { projectId: project }, user.id, { content, files, variables: [] });

  t.test("unqualified names deep inside nested loops compile in seconds", async (t) => {
    // 90 nested loops around 3,300 conditions on an unqualified name (10,000 nodes): every
    // such name had become 7 KB of code, and V8 resolved each name through the 90 blocks
    // around it. Compiling took seconds per thousand nodes (40,000 nodes: 205 s and 3.3 GB),
    // holding the process all along.
    const depth = 90;
    const content = `${"{:for t in ts:}".repeat(depth)}${"{:if a:}{:t.x|snake:}{:endif:}\n".repeat(3_300)}${"{:endfor:}".repeat(depth)}`;
    const id = await template(content);
    const started = Date.now();
    const res = await api.post(`${base}/${id}/compile`);
    const took = Date.now() - started;
    t.equal(res.status, 200, res.text.slice(0, 300));
    t.same(res.body, { valid: true, errors: [] });
    t.ok(took < 5_000, `compiled in ${took} ms`);
    const asked = Date.now();
    t.equal((await api.get("/api/health")).status, 200);
    t.ok(Date.now() - asked < 1_000, `the next request answered in ${Date.now() - asked} ms`);
  });
});
