/**
 * The web process compiles templates (`compile`, `structure`, a zip import's check) on its
 * compile threads: other requests are answered while a template at the node budget compiles,
 * and a compile past TEMPLATE_COMPILE_TIME_LIMIT_MS ends as a template issue. Decided by order
 * and counts, not by a clock: requests answered one after another while the compile is pending
 * (compiled on the request's thread, none could be).
 */
import t, { type Test } from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

// 90 nested loops around conditions: 25,000 nodes, the costliest shape at the node budget
// (seconds to compile; test/api/templates/compileCost.test.ts).
const atBudget = `${"{:for t in ts:}".repeat(90)}${"{:if a:}{:t.x|snake:}{:endif:}\n".repeat(8_270)}${"{:endfor:}".repeat(90)}`;

async function setUp(t: Test, env: Record<string, string> = {}) {
  const app = await startTestApp(t, { env });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const id = await buildTemplate(app.pool, { projectId: project }, user.id, { content: atBudget, files: [], variables: [] });
  return { api, base: `/api/projects/${project}/templates/${id}` };
}

t.test("other requests are answered while a template compiles", async (t) => {
  const { api, base } = await setUp(t);
  let compiled = false;
  const compile = api.post(`${base}/compile`).then((res) => {
    compiled = true;
    return res;
  });
  let answered = 0;
  const statuses = new Set<number>();
  while (!compiled) {
    statuses.add((await api.get("/api/health")).status);
    if (!compiled) answered += 1;
  }
  t.same([...statuses], [200]);
  const res = await compile;
  t.equal(res.status, 200, res.text.slice(0, 300));
  t.same(res.body, { valid: true, errors: [] });
  // Before the compile starts the route reads the template (a few queries): a handful of
  // requests may be answered then (seven, with the compile on the request's thread), never fifty.
  t.ok(answered >= 50, `${answered} requests answered while the template compiled`);
});

t.test("a compile past the time limit is a template issue, and the process goes on", async (t) => {
  const { api, base } = await setUp(t, { TEMPLATE_COMPILE_TIME_LIMIT_MS: "100" });
  const check = await api.post(`${base}/compile`);
  t.equal(check.status, 200, check.text.slice(0, 300));
  t.match(check.body, { valid: false, errors: [{ file: "(content)", line: 1, column: 1, message: /took longer than 100 ms to compile/ }] });
  const structure = await api.get(`${base}/structure`);
  t.equal(structure.status, 422, structure.text.slice(0, 300));
  t.equal(structure.body.code, "template_error");
  t.match(structure.body.message, /took longer than 100 ms to compile/);
  t.equal((await api.get("/api/health")).status, 200);
});
