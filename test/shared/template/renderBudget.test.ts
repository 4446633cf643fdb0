/**
 * Security review finding 12 (first part): a render has a total time budget for its code
 * blocks (TEMPLATE_RENDER_TIME_LIMIT_MS), so thousands of blocks that each stay within their
 * own limit cannot hold the sandbox for minutes.
 */
import t from "tap";
import { renderTemplate, TemplateError } from "../../../shared/template/index.ts";

t.test("many slow blocks stop at the render's budget with a clear error", async (t) => {
  const items = Array.from({ length: 200 }, (_, i) => ({ n: i }));
  // Each block spins 50 ms: within its own 250 ms limit, ten seconds for all of them.
  const content = "{:for items:}{:code:}const end = Date.now() + 50; while (Date.now() < end) {} print(String(item.n)){:codeend:}{:endfor:}";
  const error = await renderTemplate({ content, scope: { items }, limits: { renderTimeMs: 500 } }).then(
    () => null,
    (e: unknown) => e,
  );
  t.type(error, TemplateError);
  t.match((error as TemplateError).issues[0]?.message, /exceeded its total time limit of 500 ms/);
});

t.test("a render within its budget is unaffected", async (t) => {
  const result = await renderTemplate({ content: "{:code:}print('ok'){:codeend:}", scope: {}, limits: { renderTimeMs: 500 } });
  t.equal(result.output.trim(), "ok");
});
