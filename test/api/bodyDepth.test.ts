/**
 * Body nesting is bounded once, where bodies are parsed (issue 14, item 2): a JSON body nested
 * 5,000 levels deep answered 500 on the routes that walk their bodies recursively (a bundle
 * import, a template run, saved values). Now every route answers 422 on the field that nests
 * too deep, writes nothing, and a body within the bound still works.
 */
import t from "tap";
import { z } from "zod";
import { jsonTextDepth, MAX_BODY_DEPTH, tooDeepField } from "../../api/middleware/bodyDepth.ts";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { request } from "../support/http.ts";
import { buildGenerator, buildSchema, buildTemplate } from "../support/templateFactories.ts";

/** `{"a": {"a": … 1 …}}` nested `levels` objects deep (the outer one is level 1). */
const nestedObject = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
/** `[[…[]…]]`, `levels` arrays deep. */
const nestedArray = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

t.test("bodies nested deeper than the bound get 422 on every route and change nothing", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const projectId = await buildProject(app.pool, user.id);
  const schemaId = await buildSchema(app.pool, projectId, user.id);
  const templateId = await buildTemplate(app.pool, { projectId }, user.id);
  const generatorId = await buildGenerator(app.pool, { userId: user.id, projectId, templateIds: [templateId], schemaId });
  const counts = () =>
    app.pool.one(sql.type(z.object({ projects: z.number(), values: z.number(), generations: z.number(), jobs: z.number() }))`
      select (select count(*)::int from projects) as projects, (select count(*)::int from template_variable_values) as values,
        (select count(*)::int from code_generations) as generations, (select count(*)::int from jobs) as jobs`);
  const before = await counts();

  const deep = 5000;
  const routes: [string, string, string][] = [
    ["POST", "/api/projects/import", `{"bundle": ${nestedObject(deep)}}`],
    ["POST", "/api/projects/import/validate", nestedObject(deep)],
    ["POST", `/api/generators/${generatorId}/execute`, `{"values": {"name": ${nestedArray(deep)}}}`],
    ["POST", `/api/projects/${projectId}/templates/${templateId}/preview`, `{"name": ${nestedObject(deep)}}`],
    ["PUT", `/api/projects/${projectId}/templates/${templateId}/values`, `{"name": ${nestedArray(deep)}}`],
    ["POST", `/api/projects/${projectId}/schemas`, nestedArray(deep)],
  ];
  for (const [method, path, body] of routes) {
    const res = await request(app.url, method, path, { token, raw: true, body, headers: { "content-type": "application/json" } });
    t.equal(res.status, 422, `${method} ${path}: 422 (${res.text.slice(0, 200)})`);
    t.equal(res.body?.code, "validation_failed", "validation_failed");
    const [field, messages] = Object.entries(res.body?.errors ?? {})[0] ?? [];
    t.match(messages, [new RegExp(`nested deeper than ${MAX_BODY_DEPTH} levels`)], `the message names the bound, on ${field}`);
  }
  t.same(await counts(), before, "nothing was written");

  const within = `{"name": ${nestedArray(MAX_BODY_DEPTH - 1)}}`;
  const saved = await request(app.url, "PUT", `/api/projects/${projectId}/templates/${templateId}/values`, { token, raw: true, body: within, headers: { "content-type": "application/json" } });
  t.not(saved.status, 500, `a value nested to the bound is read: ${saved.status} ${saved.text.slice(0, 200)}`);
  t.not(saved.body?.errors?.name?.[0] ?? "", /nested deeper/, "and not refused for its depth");

  const health = await request(app.url, "GET", "/api/health");
  t.equal(health.status, 200, "the service is still healthy");
});

t.test("a bundle uploaded as a file is bounded like a JSON body: 422, not 500, and nothing imported", async (t) => {
  const app = await startTestApp(t);
  const { token } = await buildUserWithToken(app.pool);
  const projects = sql.type(z.object({ n: z.number() }))`select count(*)::int as n from projects`;
  const before = await app.pool.oneFirst(projects);
  const deepValues = `{"format": "schemaforge-project", "version": 1, "project": {"name": "Deep"}, "sections": {"templates": [{"id": 1, "name": "t", "content": "x", "values": {"v": ${nestedArray(5000)}}}]}}`;
  for (const path of ["/api/projects/import", "/api/projects/import/validate"]) {
    for (const [name, text] of [["a bundle nested 5,000 levels", nestedObject(5000)], ["saved values nested 5,000 levels", deepValues]] as const) {
      const form = new FormData();
      form.append("bundle", new Blob([text]), "bundle.json");
      const res = await request(app.url, "POST", path, { token, body: form, raw: true });
      t.equal(res.status, 422, `${path}, ${name}: 422 (${res.status} ${res.text.slice(0, 200)})`);
      t.match(res.body?.errors?.bundle, [new RegExp(`nested deeper than ${MAX_BODY_DEPTH} levels`)], "on the bundle field, naming the bound");
    }
  }
  t.equal(await app.pool.oneFirst(projects), before, "nothing was imported");
});

t.test("the depth read from the body's text is the depth of the parsed value", async (t) => {
  /** The nesting of objects and arrays in `value`, counted on the value (the body itself is level 1). */
  const depthOf = (value: unknown): number =>
    value === null || typeof value !== "object" ? 0 : 1 + Math.max(0, ...Object.values(value as Record<string, unknown>).map(depthOf));
  const tricky = ['{[', ']}', '"', '\\', '\\"', '\\\\"[', "[[[[[[[[[[", "}}}}", "\u2028 [ \u0000 {"];
  const values: unknown[] = [
    1,
    "text [with] {brackets}",
    [],
    {},
    { a: [1, { b: [] }], c: "]]]" },
    ...tricky.map((text) => ({ [text]: [text, { [text]: text }] })),
    JSON.parse(nestedArray(MAX_BODY_DEPTH)),
    JSON.parse(nestedObject(MAX_BODY_DEPTH + 1)),
    { fine: "[".repeat(5000), deep: JSON.parse(nestedArray(MAX_BODY_DEPTH + 3)) },
  ];
  for (const [index, value] of values.entries()) {
    const text = JSON.stringify(value);
    // Named by position: a NUL or a line separator in a name breaks TAP's output.
    const name = `value ${index}`;
    t.equal(jsonTextDepth(text), depthOf(value), name);
    t.equal(jsonTextDepth(text) > MAX_BODY_DEPTH, tooDeepField(value) !== null, `${name}: the same verdict as the walk`);
  }
  t.equal(jsonTextDepth(JSON.stringify({ a: 1 }, null, 2)), 1, "whitespace between tokens");
});

t.test("brackets inside strings do not count toward the bound", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const projectId = await buildProject(app.pool, user.id);
  const templateId = await buildTemplate(app.pool, { projectId }, user.id);
  const body = JSON.stringify({ name: "[{".repeat(3000) });
  const res = await request(app.url, "PUT", `/api/projects/${projectId}/templates/${templateId}/values`, { token, raw: true, body, headers: { "content-type": "application/json" } });
  t.not(res.body?.errors?.name?.[0] ?? "", /nested deeper/, `not refused for its depth: ${res.status} ${res.text.slice(0, 200)}`);
  t.not(res.status, 500);
});
