/**
 * Security review finding 12 (second part): renders spread over a pool of sandbox threads
 * (TEMPLATE_SANDBOX_WORKERS), so a render that holds its thread for its whole time budget does
 * not delay another render. Decided by order: the small render must settle while the slow one
 * is still running; the slow one's own budget is only what ends it.
 */
import t from "tap";
import { renderTemplate, sandboxHost, TemplateError } from "../../../shared/template/index.ts";

t.test("a slow render does not hold up a small one", async (t) => {
  sandboxHost.resize(2);
  const order: string[] = [];
  // A block that never ends by itself: it runs until its render's budget stops it.
  const slow = renderTemplate({ content: "{:code:}for (;;) {}{:codeend:}", scope: {}, limits: { timeMs: 6000, renderTimeMs: 6000 } }).then(
    () => order.push("slow finished"),
    (error: unknown) => {
      order.push("slow stopped");
      return error;
    },
  );
  const small = renderTemplate({ content: "{:code:}print('small ' + String(1 + 1)){:codeend:}", scope: {} }).then((result) => {
    order.push("small finished");
    return result;
  });
  const result = await small;
  t.equal(result.output.trim(), "small 2");
  t.same(order, ["small finished"], "the small render finished while the slow one was still running");
  const error = await slow;
  t.same(order, ["small finished", "slow stopped"]);
  t.type(error, TemplateError);
  t.match((error as TemplateError).issues[0]?.message, /time limit/);
});

t.test("renders on a one-thread pool share it (the size is what spreads them)", async (t) => {
  sandboxHost.resize(1);
  const outputs = await Promise.all([1, 2, 3].map((n) => renderTemplate({ content: `{:code:}print('${n}'){:codeend:}`, scope: {} })));
  t.same(outputs.map((o) => o.output.trim()), ["1", "2", "3"]);
  sandboxHost.resize(2);
});
