/**
 * Templates built to exhaust the service or to get a wrong answer, through HTTP with a worker:
 * a filter whose pattern backtracked over long names, filter memo tables that kept long
 * values, a number literal past a double, includes that multiply a large text, templates too
 * large to compile, loops whose bodies cost more than their iteration count says, and
 * previews that warned once per missing value. Each is answered at once with its limit, and
 * the worker keeps serving.
 */
import t from "tap";
import { filterCaches, MAX_MEMO_CHARS } from "../../../shared/template/filters.ts";
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

  t.test("filters keep no long text in their memo tables", async (t) => {
    // The tables outlive the render (the worker runs in this process): a long value stayed in
    // them with its result until 10,000 entries had been added to its table.
    const stamp = String(Date.now());
    const text = `${"Long text ".repeat(20_000)}${stamp}`;
    const id = await template("{:text|pascal:}|{:text|upper|snake:}", [], [{ name: "text", type: "string" }]);
    const res = await api.post(`${base}/${id}/preview`, { text });
    t.equal(res.status, 200, res.text.slice(0, 300));
    t.equal(res.body.preview, `${"LongText".repeat(20_000)}${stamp}|${"long_text_".repeat(20_000)}${stamp}`, "filtered as before");
    const longest = Math.max(...Object.values(filterCaches).flatMap((table) => [...table.keys()].map((key) => key.length)));
    t.ok(longest <= MAX_MEMO_CHARS, `the longest memoised text has ${longest} characters`);
  });

  t.test("a number too large for a double is a syntax error, not an empty value", async (t) => {
    const huge = "9".repeat(400);
    const id = await template(`[{:${huge}:}] {:if n < ${huge}:}less{:else:}not less{:endif:}`);
    const compiled = await api.post(`${base}/${id}/compile`);
    t.equal(compiled.status, 200, compiled.text.slice(0, 300));
    t.equal(compiled.body.valid, false, "it printed empty and compared as null");
    t.match(compiled.body.errors[0], { file: "(content)", line: 1, column: 4, message: /The number `9{20}…` is too large \(400 digits\)/ });
    const res = await api.post(`${base}/${id}/execute`, { n: 1 });
    t.equal(res.status, 422, res.text.slice(0, 300));
    const fine = await template(`{:${"9".repeat(300)}:}`);
    t.equal((await api.post(`${base}/${fine}/execute`, {})).body.output, "1e+300", "a large number within a double still prints");
  });

  t.test("includes that repeat a large text are refused when the template compiles", async (t) => {
    // 600 copies of a 1,000,000-character partial: the generated code passed V8's longest
    // string (a 500 from the compile endpoint; a few thousand copies ran the process out of memory).
    const id = await template("{:include: _big.txt:}\n".repeat(600), [{ file_name: "_big.txt", content: "x".repeat(1_000_000) }]);
    const compiled = await api.post(`${base}/${id}/compile`);
    t.equal(compiled.status, 200, compiled.text.slice(0, 300));
    t.equal(compiled.body.valid, false);
    t.match(compiled.body.errors[0], { file: "(content)", message: /grows past 32000000 characters once includes are expanded/ });
    for (const run of ["execute", "preview"]) {
      const res = await api.post(`${base}/${id}/${run}`, {});
      t.equal(res.status, 422, `${run}: ${res.text.slice(0, 300)}`);
      t.equal(res.body.code, "template_error");
    }
    // Files share the budget: each within it alone, together past it.
    const files = Array.from({ length: 40 }, (_, i) => ({ file_name: `f${i}.txt`, content: "{:include: _big.txt:}\n" }));
    const spread = await template("", [{ file_name: "_big.txt", content: "x".repeat(1_000_000) }, ...files]);
    const check = await api.post(`${base}/${spread}/compile`);
    t.equal(check.body.valid, false, "40 files including 1 MB each pass 32 M characters together");
    const fine = await template("{:include: _big.txt:}{:include: _big.txt:}", [{ file_name: "_big.txt", content: "y".repeat(1_000_000) }]);
    t.same((await api.post(`${base}/${fine}/compile`)).body, { valid: true, errors: [] }, "a partial may still be included several times");
  });

  t.test("a template too large to compile is refused before it compiles", async (t) => {
    // Files added one by one (up to 500 of a megabyte each) were all compiled, in the web
    // process for compile and structure: minutes per request, or out of memory.
    const bulky = await template("", Array.from({ length: 20 }, (_, i) => ({ file_name: `f${i}.txt`, content: "z".repeat(1_000_000) })));
    const byText = await api.post(`${base}/${bulky}/compile`);
    t.equal(byText.status, 200, byText.text.slice(0, 300));
    t.match(byText.body, { valid: false, errors: [{ file: "(content)", line: 1, column: 1, message: /too large to compile: its files hold 20000130 characters together, more than 16000000/ }] });
    const busy = await template("", Array.from({ length: 6 }, (_, i) => ({ file_name: `g${i}.txt`, content: "{:a:}".repeat(5_000) })));
    const byNodes = await api.post(`${base}/${busy}/compile`);
    t.match(byNodes.body, { valid: false, errors: [{ file: "g5.txt", message: "The template is too large to compile: its files, includes expanded, hold more than 25000 nodes together." }] });
    const run = await api.post(`${base}/${busy}/execute`, { a: "x" });
    t.equal(run.status, 422, run.text.slice(0, 300));
    t.equal(run.body.code, "template_error");
    // Partials count (and compile) only where they are included: 24,000 nodes, not 48,000.
    const parts = await template("{:include: _a.txt:}", [
      { file_name: "_a.txt", content: "{:a:}".repeat(12_000) },
      { file_name: "_b.txt", content: "{:b:}".repeat(12_000) },
      { file_name: "out.txt", content: "{:include: _b.txt:}" },
    ]);
    t.same((await api.post(`${base}/${parts}/compile`)).body, { valid: true, errors: [] });
    const rendered = await api.post(`${base}/${parts}/execute`, { a: "1", b: "2" });
    t.equal(rendered.status, 200, rendered.text.slice(0, 300));
    t.equal(rendered.body.output, "1".repeat(12_000));
    t.same(rendered.body.files, { "out.txt": "2".repeat(12_000) }, "partials are not written");
  });

  t.test("loops stop at the render's time limit, whatever their bodies cost", async (t) => {
    // 90,000 iterations (far below the iteration limit), each running 20,000 conditions of
    // an included partial: the loop's own checks never saw the time this takes.
    const id = await template("{:for x in xs:}{:for y in xs:}{:include: _p.txt:}{:endfor:}{:endfor:}", [
      { file_name: "_p.txt", content: "{:if a:}{:endif:}".repeat(20_000) },
    ]);
    const started = Date.now();
    const res = await api.post(`${base}/${id}/execute`, { xs: Array.from({ length: 300 }, (_, i) => i) });
    t.equal(res.status, 422, res.text.slice(0, 300));
    t.equal(res.body.code, "template_error");
    t.match(res.body.message, /\(content\):1:\d+: The render exceeded its total time limit of 1500 ms/);
    t.ok(Date.now() - started < 15_000, `stopped after ${Date.now() - started} ms`);

    // A file repeated over a long list, each instance within its own iteration limit.
    const repeated = await buildTemplate(app.pool, { projectId: project }, user.id, {
      content: "",
      variables: [],
      files: [{ file_name: "f/{:loop.index:}.txt", repeat: "xs", content: "{:for a in ys:}{:for b in ys:}{:endfor:}{:endfor:}" }],
    });
    const many = await api.post(`${base}/${repeated}/execute`, { xs: Array.from({ length: 3000 }, () => 0), ys: Array.from({ length: 1000 }, () => 0) });
    t.equal(many.status, 422, many.text.slice(0, 300));
    t.match(many.body.message, /The render exceeded its total time limit of 1500 ms/);

    const after = await api.post(`${base}/${await template("{:for xs:}{:item:}{:endfor:}")}/execute`, { xs: [1, 2, 3] });
    t.equal(after.status, 200, after.text);
    t.equal(after.body.output, "123", "the worker keeps serving");
  });

  t.test("a preview lists at most 100 warnings of one render and counts the rest", async (t) => {
    const id = await template("{:for x in xs:}{:for y in xs:}{:nope:}{:endfor:}{:endfor:}");
    const res = await api.post(`${base}/${id}/preview`, { xs: Array.from({ length: 300 }, (_, i) => i) });
    t.equal(res.status, 200, res.text.slice(0, 300));
    t.equal(res.body.warnings.length, 101, "90,000 missing values made 90,000 warnings");
    t.match(res.body.warnings[0], { file: "(content)", line: 1, column: 31, message: "`nope` is not defined." });
    t.match(res.body.warnings[100], { file: null, line: null, column: null, message: "89900 more warnings of this render are not listed." });

    // The structure endpoint (the web process) names files the same way.
    const named = await buildTemplate(app.pool, { projectId: project }, user.id, {
      content: "",
      variables: [],
      files: [{ file_name: "f/{:loop.index:}{:nope:}.txt", repeat: "xs", content: "" }],
    });
    const values = encodeURIComponent(JSON.stringify({ xs: Array.from({ length: 300 }, (_, i) => i) }));
    const structure = await api.get(`${base}/${named}/structure?values=${values}`);
    t.equal(structure.status, 200, structure.text.slice(0, 300));
    t.equal(structure.body.paths.length, 300);
    t.equal(structure.body.warnings.length, 101);
    t.match(structure.body.warnings[100], { file: null, message: "200 more warnings of this render are not listed." });
  });
});
