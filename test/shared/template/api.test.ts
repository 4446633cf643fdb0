/**
 * The engine's API beyond single renders: safeOutputPath, checkTemplate collecting problems
 * across files, planTemplate, file order, the compile cache, render limits.
 */
import t from "tap";
import {
  cachedTemplates,
  checkTemplate,
  filters,
  planTemplate,
  renderTemplate,
  safeOutputPath,
  sandboxHost,
  TemplateError,
  UnsafePathError,
} from "../../../shared/template/index.ts";
import { schema } from "./cases/case.ts";

// First in this file: nothing here has run a code block yet.
t.test("templates without code blocks never start the sandbox", async (t) => {
  const r = await renderTemplate({ content: "{:for xs:}{:item|pascal:}{:endfor:}", scope: { xs: ["a_b"] } });
  t.equal(r.output, "AB");
  t.equal(sandboxHost.running, false, "no worker thread");
});

t.test("safeOutputPath normalises safe paths", async (t) => {
  const ok: [string, string][] = [
    ["a.txt", "a.txt"],
    ["src/models/User.ts", "src/models/User.ts"],
    ["./a/./b.ts", "a/b.ts"],
    ["a..b/c...d", "a..b/c...d"],
    ["..hidden", "..hidden"],
    [".env", ".env"],
    ["dir with space/é.md", "dir with space/é.md"],
    ["cafe\u0301.md", "caf\u00e9.md"],
  ];
  for (const [input, output] of ok) t.equal(safeOutputPath(input), output, input);
});

t.test("safeOutputPath refuses paths that leave the root or confuse archives", async (t) => {
  const refused: [string, RegExp][] = [
    ["../a", /`\.\.` is not allowed/],
    ["a/../../b", /`\.\.` is not allowed/],
    ["a/..", /`\.\.` is not allowed/],
    ["/etc/passwd", /absolute/],
    ["C:/Windows/x", /absolute/],
    ["c:x", /absolute/],
    ["a\\b", /backslashes/],
    ["..\\..\\x", /backslashes/],
    ["\\\\server\\share", /backslashes/],
    ["a\u0000b", /control characters/],
    ["a\nb", /control characters/],
    ["a\u007fb", /control characters/],
    ["a\u0085b", /control characters/],
    ["bad\ufffd.txt", /U\+FFFD/],
    ["a//b", /empty path segments/],
    ["a/", /empty path segments/],
    ["", /empty/],
    [".", /names no file/],
    ["./.", /names no file/],
    ["x".repeat(256), /longer than 255/],
    [`${"a/".repeat(600)}b`, /longer than 1024/],
    [".git/hooks/post-checkout", /git folder/],
    ["src/.GIT/config", /git folder/],
    ["git~1/config", /git folder/],
    [".git./config", /ends in a dot/],
    ["src/nul.txt", /Windows device name/],
    ["COM3", /Windows device name/],
    ["a?.md", /Windows cannot store/],
  ];
  for (const [input, message] of refused) {
    t.throws(() => safeOutputPath(input), UnsafePathError, JSON.stringify(input).slice(0, 40));
    t.throws(() => safeOutputPath(input), { message }, `${JSON.stringify(input).slice(0, 40)} says why`);
  }
});

t.test("checkTemplate reports every file's problems with positions", async (t) => {
  const result = checkTemplate({
    content: "ok {:for x:}",
    files: [
      { file_name: "a.ts", content: "\n{:if a ==:}{:endif:}" },
      { file_name: "b.ts", content: "{:include: _missing:}" },
      { file_name: "src/{:name|nope:}.ts", content: "fine" },
      { file_name: "c.ts", content: "fine", repeat: "a b" },
    ],
  });
  t.equal(result.valid, false);
  t.same(
    result.errors.map((e) => [e.file, e.line, e.column]),
    [
      ["(content)", 1, 4],
      ["a.ts", 2, 10],
      ["src/{:name|nope:}.ts", 1, 12],
      ["c.ts", 1, 1],
      ["b.ts", 1, 1],
    ],
  );
  t.match(result.errors[4]!.message, /no file of this template has that name/);
  t.same(checkTemplate({ content: "{:for xs:}{:item:}{:endfor:}", files: [{ file_name: "x", content: "{:y:}" }] }), { valid: true, errors: [] });
});

t.test("a render of an invalid template throws every problem", async (t) => {
  const error = await renderTemplate({ content: "{:if a:}", files: [{ file_name: "f", content: "{:endfor:}" }], scope: {} }).catch((e: unknown) => e);
  t.type(error, TemplateError);
  t.equal((error as TemplateError).issues.length, 2);
  t.match((error as TemplateError).message, /^\(content\):1:1: .*\(and 1 more\)$/);
});

t.test("planTemplate lists output paths without rendering contents", async (t) => {
  const files = [
    { file_name: "src/models/{:table.table_name|singular|pascal:}.ts", content: "{:code:}for(;;){}{:codeend:}", repeat: "schema.tables", order: 2 },
    { file_name: "README.md", content: "{:missing:}", order: 1 },
    { file_name: "_partial.ts", content: "" },
  ];
  const plan = planTemplate({ content: "", files, scope: { schema } });
  t.same(plan, { paths: ["README.md", "src/models/UserCategory.ts", "src/models/Person.ts"], warnings: [], omittedWarnings: 0 });
  const partial = planTemplate({ content: "", files, scope: {} });
  t.same(partial.paths, ["README.md"]);
  t.match(partial.warnings, [{ file: files[0]!.file_name, line: 1, column: 1, message: /`schema.tables` is not defined/ }]);
  t.throws(() => planTemplate({ content: "", files, scope: {}, mode: "execute" }), TemplateError);
});

t.test("files come out in `order`, ties in input order", async (t) => {
  const r = await renderTemplate({
    content: "",
    files: [
      { file_name: "c", content: "", order: 2 },
      { file_name: "a", content: "", order: 1 },
      { file_name: "d", content: "", order: 2 },
      { file_name: "b", content: "" },
    ],
    scope: {},
  });
  t.same(Object.keys(r.files), ["b", "a", "c", "d"]);
});

t.test("templates compile once and are cached by content", async (t) => {
  const content = `cache probe ${Math.random()} {:x:}`;
  const before = cachedTemplates();
  await renderTemplate({ content, scope: { x: 1 } });
  t.equal(cachedTemplates(), before + 1, "a new template is compiled and cached");
  const again = await renderTemplate({ content, scope: { x: 2 } });
  t.equal(cachedTemplates(), before + 1, "the same template is not compiled again");
  t.equal(again.output.endsWith(" 2"), true, "a cached template renders the new scope");
  for (let i = 0; i < 300; i++) checkTemplate({ content: `filler ${i} ${Math.random()}` });
  t.ok(cachedTemplates() <= 256, "the cache is bounded");
});

t.test("a template changed in place between renders renders the change", async (t) => {
  const file = { file_name: "{:name:}.txt", content: "one {:name:}", order: 0, repeat: null as string | null };
  const input = { content: "main", files: [file], scope: { name: "x", xs: [{ name: "y" }] } };
  t.same((await renderTemplate(input)).files, { "x.txt": "one x" });
  file.content = "two {:name:}";
  t.same((await renderTemplate(input)).files, { "x.txt": "two x" }, "new content");
  file.repeat = "xs";
  t.same((await renderTemplate(input)).files, { "y.txt": "two y" }, "new repeat");
  input.files.push({ file_name: "b.txt", content: "b", order: -1, repeat: null });
  const r = await renderTemplate(input);
  t.same(Object.keys(r.files), ["b.txt", "y.txt"], "a new file, ordered first");
  input.content = "{:name:}!";
  t.equal((await renderTemplate(input)).output, "x!", "new main content");
});

t.test("every filter chain applies all its filters, past the number of chains given memo tables", async (t) => {
  const memoised = ["pascal", "camel", "snake", "kebab", "plural", "singular"];
  const chains = memoised.flatMap((a) => memoised.flatMap((b) => ["upper", ...memoised].map((c) => [a, b, c])));
  t.ok(chains.length > 200, "more chains than the engine keeps tables for");
  const content = chains.map((c) => `{:n|${c.join("|")}:}`).join("\n");
  const r = await renderTemplate({ content, scope: { n: "order_line_item" } });
  const apply = (c: string[]) => c.reduce<unknown>((v, name) => filters[name]!(v), "order_line_item");
  t.same(r.output.split("\n"), chains.map(apply));
});

t.test("render limits stop runaway loops", async (t) => {
  const xs = Array.from({ length: 100 }, (_, i) => i);
  const loops = renderTemplate({ content: "{:for a in xs:}{:for b in xs:}{:for c in xs:}{:endfor:}{:endfor:}{:endfor:}", scope: { xs }, limits: { maxIterations: 10_000 } });
  await t.rejects(loops, { message: /More than 10000 loop iterations in one file/ });
  const big = renderTemplate({ content: "{:for a in xs:}{:for b in xs:}{:s:}{:endfor:}{:endfor:}", scope: { xs, s: "x".repeat(1000) }, limits: { maxOutputBytes: 100_000 } });
  await t.rejects(big, { message: /output of one file grew past 100000 characters/ });
});

t.test("the output limit holds for a file without loops, for the files of a render together, and past the engine's longest string", async (t) => {
  const s = "x".repeat(1000);
  const limits = { maxOutputBytes: 100_000 };
  const flat = renderTemplate({ content: "{:s:}".repeat(200), scope: { s }, limits });
  await t.rejects(flat, { message: /output of one file grew past 100000 characters/ }, "no loop, still the file's limit");
  const xs = Array.from({ length: 10 }, (_, i) => i);
  const many = { content: "", files: [{ file_name: "{:item:}.txt", repeat: "xs", content: "{:item:}{:s:}".repeat(20) }], scope: { xs, s }, limits };
  for (const mode of ["execute", "preview"] as const) {
    await t.rejects(renderTemplate({ ...many, mode }), { message: /output of the render \(all its files together\) grew past 100000 characters/ }, `${mode}: 10 files of 20,000`);
  }
  const fits = await renderTemplate({ ...many, scope: { xs: xs.slice(0, 4), s } });
  t.equal(Object.keys(fits.files).length, 4, "what fits renders");
  // 1.1 billion characters: past the longest string V8 makes, which threw a RangeError outside the template's errors.
  const huge = renderTemplate({ content: "{:s:}".repeat(1100), scope: { s: "y".repeat(1_000_000) } });
  await t.rejects(huge, TemplateError);
  await t.rejects(huge, { message: /output of one file grew past 67108864 characters/ });
});

t.test("the scope is only read", async (t) => {
  const scope = { schema: structuredClone(schema) };
  await renderTemplate({ content: "{:for schema.tables:}{:code:}item.table_name{:codeend:}{:endfor:}", scope });
  t.same(scope, { schema }, "the input scope is unchanged");
});

t.test("a file's name placed once for a value is placed alike when the value comes again", async (t) => {
  // Renders of one template keep each file's output path by the value its name inserts (see
  // codegen's generateUnit): a value seen before must give the same path and the same checks.
  const tables = ["order_lines", "people", "order_lines"].map((table_name) => ({ table_name }));
  const file = { file_name: "src/{:table.table_name|singular|pascal:}.ts", content: "{:table.table_name:}", repeat: "schema.tables" };
  for (const round of [1, 2]) {
    const once = await renderTemplate({ content: "", files: [file], scope: { schema: { tables: tables.slice(0, 2) } } });
    t.same(once.files, { "src/OrderLine.ts": "order_lines", "src/Person.ts": "people" }, `round ${round}`);
    const twice = await renderTemplate({ content: "", files: [file], scope: { schema: { tables } } }).catch((e: unknown) => e);
    t.ok(twice instanceof TemplateError && /`src\/OrderLine.ts` is produced twice/.test(twice.message), `execute: a repeated path is an error, round ${round}`);
    const preview = await renderTemplate({ content: "", files: [file], scope: { schema: { tables } }, mode: "preview" });
    t.same(Object.keys(preview.files), ["src/OrderLine.ts", "src/Person.ts"], `preview keeps the first, round ${round}`);
    t.ok(preview.warnings.some((w) => /produced twice/.test(w.message)), `preview warns, round ${round}`);
  }
  // A name that needs normalising, and one refused, the same on every render.
  const dotted = { file_name: "{:d:}/x.ts", content: "{:d:}" };
  for (const round of [1, 2]) {
    t.same((await renderTemplate({ content: "", files: [dotted], scope: { d: "./a" } })).files, { "a/x.ts": "./a" }, `normalised, round ${round}`);
    const refused = await renderTemplate({ content: "", files: [dotted], scope: { d: ".." } }).catch((e: unknown) => e);
    t.ok(refused instanceof TemplateError && /`\.\.` is not allowed/.test(refused.message), `refused, round ${round}`);
    const missing = await renderTemplate({ content: "", files: [dotted], scope: {}, mode: "preview" });
    t.same(missing.files, {}, `a name left without its value is refused, round ${round}`);
    t.ok(missing.warnings.some((w) => /`d` is not defined/.test(w.message)), `a missing value still warns, round ${round}`);
  }
});
