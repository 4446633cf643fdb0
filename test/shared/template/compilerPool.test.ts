/**
 * Template checks and output plans on compile threads (shared/template/compiler/pool.ts): the
 * caller's event loop runs while a template at the node budget compiles; a compile past its
 * time or heap limit ends as a template issue and the next compile gets a fresh thread; a full
 * queue is refused at once (503); a plan answers what planTemplate would, prototype-less scope
 * keys included.
 */
import t, { type Test } from "tap";
import { dict } from "../../../shared/dict.ts";
import { AppError } from "../../../shared/errors.ts";
import { TemplateCompiler } from "../../../shared/template/compiler/pool.ts";
import { TemplateError } from "../../../shared/template/index.ts";

// The costliest shape measured (test/api/templates/compileCost.test.ts): 90 nested loops around
// conditions, 25,000 nodes at 8,270 lines; seconds and hundreds of MB to compile.
const deep = (lines: number) => `${"{:for t in ts:}".repeat(90)}${"{:if a:}{:t.x|snake:}{:endif:}\n".repeat(lines)}${"{:endfor:}".repeat(90)}`;
const atBudget = { content: deep(8_270), files: [] };

const compiler = (t: Test, options: Partial<ConstructorParameters<typeof TemplateCompiler>[0]> = {}) => {
  const c = new TemplateCompiler({ threads: 1, timeLimitMs: 120_000, memoryMb: 512, ...options });
  t.teardown(() => c.close());
  return c;
};

t.test("the caller's event loop runs while a template at the budget compiles", async (t) => {
  const c = compiler(t);
  let turns = 0;
  const ticker = setInterval(() => (turns += 1), 10);
  const result = await c.check(atBudget);
  clearInterval(ticker);
  t.same(result, { valid: true, errors: [] });
  // Compiled on the caller's thread, no timer could fire until it was done.
  t.ok(turns >= 10, `${turns} timer turns during the compile`);
  t.same(await c.check({ content: "{:if:}", files: [] }), { valid: false, errors: [{ file: "(content)", line: 1, column: 5, message: "Expected a value." }] });
});

t.test("a compile past its time limit is ended and reported; the next one runs", async (t) => {
  const c = compiler(t, { timeLimitMs: 100 });
  const result = await c.check(atBudget);
  t.equal(result.valid, false);
  t.match(result.errors, [{ file: "(content)", line: 1, column: 1, message: /took longer than 100 ms to compile/ }]);
  const error = await c.plan(atBudget, {}).then(
    () => null,
    (e: unknown) => e,
  );
  t.type(error, TemplateError);
  t.match((error as TemplateError).issues, [{ message: /took longer than 100 ms/ }]);
  t.same(await c.check({ content: "{:a:}", files: [] }), { valid: true, errors: [] }, "a fresh thread answers the next check");
});

t.test("a compile past its heap limit is ended and reported; the next one runs", async (t) => {
  const c = compiler(t, { memoryMb: 64 });
  const result = await c.check(atBudget);
  t.equal(result.valid, false);
  t.match(result.errors, [{ file: "(content)", message: /needs more than 64 MB to compile/ }]);
  t.same(await c.check({ content: "{:a:}", files: [] }), { valid: true, errors: [] });
});

t.test("a full queue is refused at once with 503 template_compiler_busy", async (t) => {
  const c = compiler(t);
  const small = { content: deep(200), files: [] };
  const settled = await Promise.allSettled(Array.from({ length: 14 }, () => c.check(small)));
  const refused = settled.filter((s) => s.status === "rejected");
  const answered = settled.filter((s) => s.status === "fulfilled");
  t.ok(refused.length > 0 && answered.length >= 8, `${answered.length} answered, ${refused.length} refused`);
  // The queue refuses the latest arrivals, not earlier ones.
  t.same(settled.map((s) => s.status), [...answered.map(() => "fulfilled"), ...refused.map(() => "rejected")]);
  for (const s of refused) {
    const error = s.reason as AppError;
    t.type(error, AppError);
    t.match(error, { status: 503, code: "template_compiler_busy", headers: { "Retry-After": "5" } });
  }
  for (const s of answered) t.same((s as PromiseFulfilledResult<unknown>).value, { valid: true, errors: [] });
});

t.test("a plan answers output paths and warnings; syntax errors throw TemplateError", async (t) => {
  const c = compiler(t);
  // The web process's scope is prototype-less (a variable may be named __proto__).
  const scope = dict<unknown>();
  Object.defineProperty(scope, "__proto__", { value: "proto", enumerable: true, writable: true, configurable: true });
  scope.items = [{ name: "a" }, { name: "b" }];
  const plan = await c.plan({ content: "", files: [{ file_name: "{:__proto__:}/{:item.name:}{:missing:}.txt", content: "x", repeat: "items" }] }, scope);
  t.same(plan.paths, ["proto/a.txt", "proto/b.txt"]);
  t.match(plan.warnings, [{ message: /missing/ }]);
  const error = await c.plan({ content: "{:if:}", files: [] }, scope).then(
    () => null,
    (e: unknown) => e,
  );
  t.type(error, TemplateError);
  t.same((error as TemplateError).issues, [{ file: "(content)", line: 1, column: 5, message: "Expected a value." }]);
});

t.test("a closed compiler takes no more work", async (t) => {
  const c = new TemplateCompiler({ threads: 1, timeLimitMs: 1000, memoryMb: 128 });
  t.same(await c.check({ content: "{:a:}", files: [] }), { valid: true, errors: [] });
  await c.close();
  await t.rejects(c.check({ content: "{:a:}", files: [] }), /closed/);
});
