/**
 * Code-block sandbox security: hostile blocks fail cleanly with a clear error naming the block
 * (file, line, column), stopped by the limit they hit (the message names it), and the process
 * and its sandbox stay healthy: a normal render with a code block works right after each of
 * them. How fast a limit stops a block is measured by `npm run bench template`, not here.
 */
import t, { type Test } from "tap";
import { renderTemplate, sandboxHost, TemplateError, type TemplateLimits } from "../../../shared/template/index.ts";

/** Renders `code` as the only block of a template, placed on line 2 column 3 of file `gen.ts`. */
async function attempt(code: string, limits: Partial<TemplateLimits> = {}) {
  const started = Date.now();
  const result = await renderTemplate({
    content: "",
    files: [{ file_name: "gen.ts", content: `// generated\n  {:code:}\n${code}\n  {:codeend:}\n` }],
    scope: { name: "ada", tables: [{ table_name: "users" }] },
    limits,
  }).then(
    (r) => ({ ok: true as const, files: r.files }),
    (e: unknown) => ({ ok: false as const, error: e }),
  );
  return { ...result, ms: Date.now() - started };
}

/** A normal render with a code block, proving the sandbox still works. */
async function healthy(t: Test) {
  const r = await renderTemplate({ content: "{:for tables:}{:code:}print(item.table_name.toUpperCase()){:codeend:}{:endfor:}", scope: { tables: [{ table_name: "ok" }] } });
  t.equal(r.output, "OK\n", "a normal render works right after");
}

/** Expects a TemplateError at the block (gen.ts, line 2 or a line of its code) matching `message`. */
function expectFailure(t: Test, outcome: Awaited<ReturnType<typeof attempt>>, message: RegExp) {
  if (outcome.ok) return t.fail(`the block succeeded: ${JSON.stringify(outcome.files)}`);
  t.type(outcome.error, TemplateError);
  const issue = (outcome.error as TemplateError).issues[0]!;
  t.equal(issue.file, "gen.ts", "names the file");
  t.ok(issue.line >= 2 && issue.line <= 4, `names a line of the block (${issue.line})`);
  t.match(issue.message, /^Code block `/, "names the block");
  t.match(issue.message, message);
  t.comment(`failed after ${outcome.ms} ms`);
}

type Hostile = [name: string, code: string, message: RegExp, limits?: Partial<TemplateLimits>];

const hostile: Hostile[] = [
  ["an infinite loop", "while (true) {}", /exceeded its time limit of 250 ms/],
  ["an infinite loop in a promise job", "Promise.resolve().then(() => { for (;;) {} })", /exceeded its time limit/],
  ["an infinite loop of long native calls (watchdog)", "for (;;) 'x'.repeat(1e6)", /exceeded its time limit/],
  ["an infinite loop under a shorter limit", "for (;;) {}", /exceeded its time limit of 50 ms/, { timeMs: 50 }],
  ["unbounded allocation", "const a = []; for (;;) a.push(new Array(1e5).fill(1))", /exceeded its (time|memory) limit/],
  ["one huge allocation", "new Float64Array(1e7).length", /exceeded its memory limit of 32 MB/],
  ["a growing array", "new Array(1e7).fill(0).length", /exceeded its (time|memory) limit/],
  ["a huge string", "'x'.repeat(5e7).length", /exceeded its memory limit/],
  ["a huge ArrayBuffer", "new ArrayBuffer(1e8).byteLength", /exceeded its memory limit/],
  ["allocation under a smaller limit", "new Float64Array(2e6).length", /exceeded its memory limit of 8 MB/, { memoryBytes: 8 * 1024 * 1024 }],
  ["unbounded recursion", "function f() { return f() + 1 } f()", /exceeded its stack limit/],
  ["mutual recursion through natives", "const f = (n) => [n].map(f); f(1)", /exceeded its stack limit/],
  ["deeply nested JSON", "JSON.parse('['.repeat(1e5) + ']'.repeat(1e5))", /exceeded its stack limit/],
  ["unbounded output", "for (;;) echo('x'.repeat(1000))", /printed more than 100000 characters/, { maxOutputBytes: 100_000 }],
  ["process", "process.exit(1)", /ReferenceError: 'process' is not defined/],
  ["require", "require('fs').readFileSync('/etc/passwd')", /ReferenceError: 'require' is not defined/],
  ["dynamic import()", "import('fs')", /promise was rejected: .*could not load module 'fs'/],
  ["dynamic import() awaited", "(async () => (await import('node:child_process')).execSync('id'))()", /promise was rejected: .*could not load module/],
  ["static import", "import fs from 'fs'", /SyntaxError/],
  ["fetch", "fetch('http://127.0.0.1/')", /ReferenceError: 'fetch' is not defined/],
  ["setTimeout", "setTimeout(() => {}, 0)", /ReferenceError: 'setTimeout' is not defined/],
  ["setInterval", "setInterval(() => {}, 1)", /ReferenceError: 'setInterval' is not defined/],
  ["file system through std", "std.loadFile('/etc/passwd')", /ReferenceError: 'std' is not defined/],
  ["file system through os", "os.open('/etc/passwd')", /ReferenceError: 'os' is not defined/],
  ["WebAssembly", "WebAssembly.compile(new Uint8Array(8))", /ReferenceError: 'WebAssembly' is not defined/],
  ["Function-constructor escape to process", "Function('return process')()", /ReferenceError: 'process' is not defined/],
  ["constructor-chain escape", "print.constructor.constructor('return require')()('fs')", /ReferenceError: 'require' is not defined/],
  ["globalThis escape", "globalThis.process.mainModule.require('fs')", /TypeError: cannot read property 'mainModule' of undefined/],
  ["eval escape", "eval('process')", /ReferenceError: 'process' is not defined/],
  ["writing the scope", "scope.tables.push({})", /TypeError: .*(not extensible|read-only)/],
  ["throwing a non-error", "throw { toString() { for (;;) {} } }", /failed/],
];

for (const [name, code, message, limits] of hostile) {
  t.test(name, async (t) => {
    expectFailure(t, await attempt(code, limits), message);
    await healthy(t);
  });
}

t.test("the sandbox's global object holds nothing of the host", async (t) => {
  const outcome = await attempt("print(Object.getOwnPropertyNames(globalThis).sort().join(' '))");
  if (!outcome.ok) return t.fail(String(outcome.error));
  const globals = outcome.files["gen.ts"]!.split(/\s+/);
  for (const name of ["process", "require", "module", "Buffer", "fetch", "setTimeout", "setImmediate", "queueMicrotask", "WebAssembly", "std", "os", "console", "Deno", "Bun", "XMLHttpRequest"]) {
    t.notOk(globals.includes(name), `no ${name}`);
  }
  t.ok(globals.includes("print") && globals.includes("echo") && globals.includes("scope"), "print, echo and scope are there");
});

t.test("a block still running when its render's neighbour is stopped is retried", async (t) => {
  const normal = renderTemplate({ content: "{:for xs:}{:code:}item * 2{:codeend:},{:endfor:}", scope: { xs: [1, 2, 3, 4, 5, 6, 7, 8] } });
  const rogue = attempt("for (;;) 'x'.repeat(1e6)");
  const [good, bad] = await Promise.all([normal, rogue]);
  t.equal(good.output, "2,4,6,8,10,12,14,16,", "the normal render completes");
  t.notOk(bad.ok, "the rogue render fails");
});

t.test("the worker is replaced after a watchdog stop and the process keeps serving", async (t) => {
  const before = sandboxHost.generation;
  expectFailure(t, await attempt("for (;;) 'x'.repeat(2e6)"), /exceeded its time limit/);
  t.ok(sandboxHost.generation > before, "the worker was replaced");
  await healthy(t);
  const memory = process.memoryUsage().rss / 1024 / 1024;
  t.ok(memory < 1024, `host memory stays bounded (${Math.round(memory)} MB rss)`);
});

t.test("limits are errors in preview mode too", async (t) => {
  const preview = renderTemplate({ content: "{:code:}for (;;) {}{:codeend:}", scope: {}, mode: "preview", limits: { timeMs: 50 } });
  await t.rejects(preview, { message: /exceeded its time limit of 50 ms/ });
});

t.test("a scope too large for the sandbox memory says so", async (t) => {
  const big = renderTemplate({ content: "{:code:}1{:codeend:}", scope: { big: "x".repeat(4e6) }, limits: { memoryBytes: 2 * 1024 * 1024 } });
  await t.rejects(big, { message: /^\(content\):1:1: Code block `1` could not start: the scope does not fit in the sandbox memory limit of 2 MB\.$/ });
  await healthy(t);
});
